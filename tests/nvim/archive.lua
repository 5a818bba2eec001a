-- Driven by tests/test_neovim.py: archive a note from a real headless Neovim through the
-- code action, confirm through vim.ui.select, write all buffers, quit. The test checks disk.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/harness.lua")
local root = H.root
local result = { prompts = {}, choices = {} }

local function finish(err) H.finish(result, err) end

-- The user: reads the preview and picks "Archive".
vim.ui.select = function(items, opts, on_choice)
  table.insert(result.prompts, opts.prompt or "")
  local titles = {}
  for _, item in ipairs(items) do
    local title = opts.format_item and opts.format_item(item) or item.title or tostring(item)
    table.insert(titles, title)
  end
  table.insert(result.choices, titles)
  for i, title in ipairs(titles) do
    if title == "Archive" then return on_choice(items[i], i) end
  end
  on_choice(nil, nil)
end

local bufnr, client_id = H.open("projects/garden-sensors.md")
if not client_id then return finish("vim.lsp.start failed") end

local ok = vim.wait(15000, function() return #vim.diagnostic.get(bufnr) > 0 end, 20)
if not ok then return finish("no diagnostics on the note") end
result.diagnostics = {}
for _, d in ipairs(vim.diagnostic.get(bufnr)) do table.insert(result.diagnostics, d.code) end

vim.lsp.buf.code_action({
  apply = true,
  filter = function(action) return action.title == "Archive projects/garden-sensors.md" end,
})

local index_buf
ok = vim.wait(15000, function()
  if vim.fn.filereadable(root .. "/_archive/projects/garden-sensors.md") == 0 then return false end
  index_buf = vim.fn.bufnr(root .. "/_index.md")
  if index_buf < 0 or not vim.api.nvim_buf_is_loaded(index_buf) then return false end
  local text = table.concat(vim.api.nvim_buf_get_lines(index_buf, 0, -1, false), "\n")
  return not text:find("projects/garden-sensors.md", 1, true)
end, 20)
if not ok then return finish("the archive did not complete in the editor") end
vim.cmd("silent! wall")
finish(nil)
