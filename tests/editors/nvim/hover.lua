-- Driven by tests/editors/test_neovim.py: hover on a route in `_index.md` from a real headless Neovim
-- and write what the server answered as JSON to $PMEM_OUT.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/harness.lua")
local root = H.root
local result = {}

local function finish(err) H.finish(result, err) end

local bufnr, client_id = H.open("_index.md")
if not client_id then return finish("vim.lsp.start failed") end

-- The root is scanned once the index shows its diagnostics (the demo has a dangling route).
local ok = vim.wait(60000, function() return #vim.diagnostic.get(bufnr) > 0 end, 20)
if not ok then return finish("no diagnostics on _index.md") end

local row, col
for i, line in ipairs(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)) do
  local s = line:find("projects/garden-sensors.md", 1, true)
  if s then row, col = i - 1, s + 2 break end
end
if not row then return finish("no route to projects/garden-sensors.md") end

local responses = vim.lsp.buf_request_sync(bufnr, "textDocument/hover", {
  textDocument = { uri = vim.uri_from_bufnr(bufnr) },
  position = { line = row, character = col },
}, 10000)
local response = responses and responses[client_id]
if not response then return finish("no hover response") end
if response.err then return finish("hover error: " .. vim.inspect(response.err)) end
result.hover = response.result or vim.NIL
result.lines = vim.lsp.util.convert_input_to_markdown_lines(response.result.contents)
finish(nil)
