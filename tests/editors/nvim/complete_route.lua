-- Driven by tests/editors/test_neovim.py: complete a whole route on an empty list item of `_index.md`
-- with Neovim's built-in LSP completion (omnifunc, confirmed with <C-y>), and report the line.
-- Keys are typed for real: the script runs as a coroutine that gives the main loop back while
-- it waits, so Neovim processes the typeahead (vim.wait alone does not).
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/harness.lua")
local result = {}
local function finish(err) H.finish(result, err) end

local co
local function sleep(ms)
  vim.defer_fn(function() assert(coroutine.resume(co)) end, ms)
  coroutine.yield()
end
local function wait_until(pred, ms)
  local waited = 0
  while not pred() and waited < ms do
    sleep(20)
    waited = waited + 20
  end
  return pred()
end
local function keys(k) vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(k, true, false, true), "nt", false) end

co = coroutine.create(function()
  local bufnr, client_id = H.open("_index.md")
  if not client_id then return finish("vim.lsp.start failed") end
  vim.lsp.completion.enable(true, client_id, bufnr)
  vim.bo[bufnr].omnifunc = "v:lua.vim.lsp.omnifunc"
  vim.o.completeopt = "menuone,noselect" -- a menu even for one item; the user picks it
  if not wait_until(function() return #vim.diagnostic.get(bufnr) > 0 end, 15000) then
    return finish("no diagnostics on _index.md")
  end
  -- A new list item after the last line, then omni completion and the first item.
  local last = vim.api.nvim_buf_line_count(bufnr)
  vim.api.nvim_buf_set_lines(bufnr, last, last, false, { "- " })
  vim.api.nvim_win_set_cursor(0, { last + 1, 2 })
  keys("A<C-x><C-o>")
  result.menu = wait_until(function() return vim.fn.pumvisible() == 1 end, 5000)
  if not result.menu then return finish("no completion menu") end
  keys("<C-n><C-y>")
  wait_until(function()
    local line = vim.api.nvim_buf_get_lines(bufnr, last, last + 1, false)[1]
    return line ~= nil and line:find(" — ", 1, true) ~= nil
  end, 3000)
  keys("<Esc>")
  sleep(100)
  result.line = vim.api.nvim_buf_get_lines(bufnr, last, last + 1, false)[1]
  finish(nil)
end)
assert(coroutine.resume(co))
