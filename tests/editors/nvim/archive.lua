-- Driven by tests/editors/test_neovim.py: archive a note from a real headless Neovim through the
-- code action, confirm through vim.ui.select, quit without writing anything: the test checks
-- the disk.
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

local ok = vim.wait(60000, function() return #vim.diagnostic.get(bufnr) > 0 end, 20)
if not ok then return finish("no diagnostics on the note") end
result.diagnostics = {}
for _, d in ipairs(vim.diagnostic.get(bufnr)) do table.insert(result.diagnostics, d.code) end

vim.lsp.buf.code_action({
  apply = true,
  filter = function(action) return action.title == "Archive projects/garden-sensors.md" end,
})

-- Complete on disk when the command ends: nothing to save here (no :wall).
ok = vim.wait(60000, function()
  if vim.fn.filereadable(root .. "/_archive/projects/garden-sensors.md") == 0 then return false end
  local index = table.concat(vim.fn.readfile(root .. "/_index.md"), "\n")
  return not index:find("projects/garden-sensors.md", 1, true)
end, 20)
if not ok then return finish("the archive did not reach the disk") end
result.modified = {}
for _, b in ipairs(vim.api.nvim_list_bufs()) do
  if vim.api.nvim_buf_is_loaded(b) and vim.bo[b].modified then table.insert(result.modified, vim.api.nvim_buf_get_name(b)) end
end
finish(nil)
