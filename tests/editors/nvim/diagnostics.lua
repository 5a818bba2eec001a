-- Driven by tests/editors/test_neovim.py: start pmem-lsp for a file under a memory root in a real
-- headless Neovim, wait for its diagnostics, edit the buffer, and write what Neovim shows
-- as JSON to $PMEM_OUT.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/harness.lua")
local root = H.root
local result = { steps = {} }

local function finish(err) H.finish(result, err) end

local function snapshot(bufnr)
  local items = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    table.insert(items, { code = d.code, lnum = d.lnum, col = d.col, end_col = d.end_col, severity = d.severity, source = d.source })
  end
  table.sort(items, function(a, b) return tostring(a.code) < tostring(b.code) end)
  return items
end

local function wait_codes(bufnr, want, label)
  local ok = vim.wait(60000, function()
    local codes = {}
    for _, d in ipairs(vim.diagnostic.get(bufnr)) do table.insert(codes, d.code) end
    table.sort(codes)
    return table.concat(codes, ",") == want
  end, 20)
  table.insert(result.steps, { label = label, ok = ok, diagnostics = snapshot(bufnr) })
  return ok
end

local bufnr, client_id = H.open("projects/garden-sensors.md")
if not client_id then return finish("vim.lsp.start failed") end
local client = vim.lsp.get_client_by_id(client_id)

if not wait_codes(bufnr, "PM102", "opened") then return finish("no PM102 after open") end
result.offset_encoding = client.offset_encoding

-- Add a third bullet right after the second one: PM102 must clear without saving.
local lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
local last_bullet
for i, l in ipairs(lines) do
  if l:match("^## Summary") then last_bullet = i end
  if last_bullet and i > last_bullet and l:match("^%- ") then last_bullet = i end
  if last_bullet and i > last_bullet + 1 and l == "" then break end
end
vim.api.nvim_buf_set_lines(bufnr, last_bullet, last_bullet, false, { "- Third bullet typed in Neovim" })
if not wait_codes(bufnr, "", "edited") then return finish("PM102 did not clear after the edit") end

-- Diagnostics of a file never opened arrive too (pushed for the whole root), with the scan:
-- the opened file's came before it (the early path), so they are waited for.
local reading = vim.fn.bufadd(root .. "/notes/reading-list.md")
vim.wait(60000, function() return #vim.diagnostic.get(reading) >= 2 end, 20)
result.unopened = snapshot(reading)
result.modified_on_disk = vim.fn.readfile(root .. "/projects/garden-sensors.md")
finish(nil)
