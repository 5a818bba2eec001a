-- Driven by tests/editors/test_editors_nvim.py: a new user's Neovim — the README's init.lua lines
-- ($PMEM_SNIPPET) and nothing else: Neovim's default 'completeopt', its default omnifunc. On an
-- empty list item of `_index.md`, then (that line taken out again) on one holding a partial path, <C-x><C-o> with a single
-- match (no menu: Neovim inserts the only item at once) and <Esc>; the lines are reported.
-- Keys are typed for real: the script runs as a coroutine that gives the main loop back while
-- it waits, so Neovim processes the typeahead (vim.wait alone does not).
local snippet = assert(os.getenv("PMEM_SNIPPET"))
local root = assert(os.getenv("PMEM_ROOT_UNDER_TEST"))
local out = assert(os.getenv("PMEM_OUT"))
local result = { lines = {} }

local function finish(err)
  result.error = err or vim.NIL
  local f = assert(io.open(out, "w"))
  f:write(vim.json.encode(result))
  f:close()
  vim.cmd("qall!")
end

local ok, err = pcall(dofile, snippet)
if not ok then return finish("the snippet failed: " .. tostring(err)) end

-- What the plugin makes Neovim insert: pmem's text whole; other servers' items left to Neovim.
local text = require("pmem")._completion_text
result.converted = {
  route = text({ kind = 17, insertTextFormat = 2, textEdit = { newText = "[A \\$ b](a.md) — c \\} d" } }) or vim.NIL,
  plain = text({ kind = 17, textEdit = { newText = "- [A](a.md) — a" } }) or vim.NIL,
  tabstop = text({ kind = 17, insertTextFormat = 2, textEdit = { newText = "f(${1:x})" } }) or vim.NIL,
  other_kind = text({ kind = 3, textEdit = { newText = "print(x)" } }) or vim.NIL,
}

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
  vim.cmd("edit " .. vim.fn.fnameescape(root .. "/_index.md"))
  local bufnr = vim.api.nvim_get_current_buf()
  if not wait_until(function() return #vim.diagnostic.get(bufnr) > 0 end, 20000) then
    return finish("no diagnostics on _index.md")
  end
  result.completeopt = vim.o.completeopt
  result.omnifunc = vim.bo[bufnr].omnifunc
  for _, typed in ipairs({ "- ", "- notes/rea" }) do
    local last = vim.api.nvim_buf_line_count(bufnr)
    vim.api.nvim_buf_set_lines(bufnr, last, last, false, { typed })
    vim.api.nvim_win_set_cursor(0, { last + 1, #typed })
    keys("A<C-x><C-o>")
    wait_until(function()
      local line = vim.api.nvim_buf_get_lines(bufnr, last, last + 1, false)[1]
      return line ~= nil and line ~= typed
    end, 5000)
    sleep(200) -- nothing more is to come: the only item was inserted
    keys("<Esc>")
    sleep(100)
    table.insert(result.lines, vim.api.nvim_buf_get_lines(bufnr, last, last + 1, false)[1])
    -- Take the route out again: only files without a route are offered on a list item.
    vim.api.nvim_buf_set_lines(bufnr, last, last + 1, false, {})
    sleep(300)
  end
  finish(nil)
end)
assert(coroutine.resume(co))
