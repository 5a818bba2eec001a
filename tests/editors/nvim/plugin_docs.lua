-- Driven by tests/editors/test_editors_nvim.py: run a configuration snippet copied from the docs
-- ($PMEM_SNIPPET), open the files in $PMEM_FILES (";"-separated) and write, per file, the
-- pmem client's root and the diagnostics Neovim shows.
local snippet = assert(os.getenv("PMEM_SNIPPET"))
local files = vim.split(assert(os.getenv("PMEM_FILES")), ";", { plain = true })
local out = assert(os.getenv("PMEM_OUT"))
local result = { files = {} }

local function finish(err)
  result.error = err or vim.NIL
  local f = assert(io.open(out, "w"))
  f:write(vim.json.encode(result))
  f:close()
  vim.cmd("qall!")
end

local ok, err = pcall(dofile, snippet)
if not ok then return finish("the snippet failed: " .. tostring(err)) end

for i, path in ipairs(files) do
  vim.cmd("edit " .. vim.fn.fnameescape(vim.fn.expand(path)))
  local bufnr = vim.api.nvim_get_current_buf()
  -- The first file starts the client; later ones attach to it at once, or never.
  vim.wait(i == 1 and 15000 or 1500, function() return #vim.lsp.get_clients({ bufnr = bufnr, name = "pmem" }) > 0 end, 20)
  if i == 1 then vim.wait(60000, function() return #vim.diagnostic.get(bufnr) > 0 end, 20) end
  local clients = vim.lsp.get_clients({ bufnr = bufnr, name = "pmem" })
  local codes = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do table.insert(codes, d.code) end
  table.insert(result.files, { path = path, roots = vim.tbl_map(function(c) return c.root_dir end, clients), codes = codes })
end
finish(nil)
