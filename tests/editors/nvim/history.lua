-- Driven by tests/editors/test_editors_nvim.py: history in a real headless Neovim (docs/design.md §11).
-- Another program rewrites an open note; the plugin's code lens says so; :PmemHistory lists the
-- entries, :PmemDiff opens a diff split against the text before the change, :PmemUndo (confirmed
-- through vim.ui.select) puts it back, :PmemReviewAccept takes the lens away.
local plugin = assert(os.getenv("PMEM_PLUGIN"))
local root = assert(os.getenv("PMEM_ROOT_UNDER_TEST"))
local server = assert(os.getenv("PMEM_SERVER"))
local out = assert(os.getenv("PMEM_OUT"))
local result = { sent = {}, selects = {}, messages = {} }

local function finish(err)
  result.error = err or vim.NIL
  local f = assert(io.open(out, "w"))
  f:write(vim.json.encode(result))
  f:close()
  vim.cmd("qall!")
end

vim.opt.runtimepath:append(plugin)
vim.o.autoread = true
require("pmem").setup({ cmd = { server } })

local select_answer
vim.ui.select = function(items, opts, on_choice)
  local titles = {}
  for _, item in ipairs(items) do
    table.insert(titles, opts.format_item and opts.format_item(item) or item.title or tostring(item))
  end
  table.insert(result.selects, { prompt = opts.prompt or "", choices = titles })
  for i, title in ipairs(titles) do
    if title == select_answer then return on_choice(items[i], i) end
  end
  on_choice(nil, nil)
end

local wrapped = {}
local function record_requests(client)
  if wrapped[client.id] then return end
  wrapped[client.id] = true
  local request = client.request
  client.request = function(self, method, params, handler, bufnr)
    if method ~= "workspace/executeCommand" then return request(self, method, params, handler, bufnr) end
    local entry = { command = params.command, arguments = params.arguments }
    table.insert(result.sent, entry)
    return request(self, method, params, function(err, res, ctx, cfg)
      entry.err = err and { code = err.code, message = err.message } or vim.NIL
      entry.result = res == nil and vim.NIL or res
      entry.done = true
      if handler then return handler(err, res, ctx, cfg) end
    end, bufnr)
  end
end

local function wait_sent(n)
  return vim.wait(60000, function() return #result.sent >= n and result.sent[n].done end, 20)
end

local function lens_titles(bufnr)
  local titles = {}
  for _, lens in ipairs(vim.lsp.codelens.get(bufnr)) do
    if lens.command then table.insert(titles, lens.command.title) end
  end
  return titles
end

local function has_changed_by(bufnr)
  for _, title in ipairs(lens_titles(bufnr)) do
    if title:find("^changed by ") then return true end
  end
  return false
end

local rel = "projects/garden-sensors.md"
local file = root .. "/" .. rel
vim.cmd("edit " .. vim.fn.fnameescape(file))
local note = vim.api.nvim_get_current_buf()
if not vim.wait(60000, function() return #vim.lsp.get_clients({ bufnr = note, name = "pmem" }) > 0 end, 20) then
  return finish("no client on the note")
end
record_requests(vim.lsp.get_clients({ bufnr = note, name = "pmem" })[1])
if not vim.wait(60000, function() return #vim.diagnostic.get(note) > 0 end, 20) then
  return finish("no diagnostics on the note")
end
local note_win = vim.api.nvim_get_current_win()

-- :PmemHistory: history begins here (the baseline entry), shown in a scratch buffer.
vim.cmd("PmemHistory")
if not wait_sent(1) then return finish("no answer to :PmemHistory") end
vim.wait(5000, function() return vim.api.nvim_buf_get_name(0) == "pmem://history" end, 20)
result.history_buffer = vim.api.nvim_buf_get_name(0)
vim.cmd("close")
vim.api.nvim_set_current_win(note_win)

-- Another program rewrites the note (a sync tool, an agent's shell): the watcher records it and
-- the lens appears once the review state is read again.
local original = vim.fn.readfile(file)
result.original = original
local changed = vim.deepcopy(original)
table.insert(changed, "")
table.insert(changed, "Rewritten by another program.")
vim.fn.writefile(changed, file)
local seen = vim.wait(60000, function()
  pcall(vim.lsp.codelens.refresh, { bufnr = note })
  vim.wait(100)
  return has_changed_by(note)
end, 200)
result.lenses = lens_titles(note)
if not seen then return finish("no history lens after the outside write") end
vim.cmd("checktime")

-- :PmemDiff: a split with the text before the change, both windows in diff mode.
local before_diff = #result.sent
vim.cmd("PmemDiff")
if not wait_sent(before_diff + 1) then return finish("no answer to :PmemDiff") end
vim.wait(5000, function() return #vim.api.nvim_tabpage_list_wins(0) == 2 end, 20)
result.diff = {}
for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
  local buf = vim.api.nvim_win_get_buf(win)
  table.insert(result.diff, { name = vim.api.nvim_buf_get_name(buf), diff = vim.wo[win].diff,
    lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false) })
end
vim.cmd("diffoff!")
vim.api.nvim_set_current_win(note_win)
vim.cmd("only")

-- :PmemUndo: the server's preview through vim.ui.select; "Undo" saves the file back, reloaded here.
select_answer = "Undo"
local before_undo = #result.sent
vim.cmd("PmemUndo")
if not wait_sent(before_undo + 1) then return finish("no answer to :PmemUndo") end
vim.wait(5000, function()
  return table.concat(vim.api.nvim_buf_get_lines(note, 0, -1, false), "\n") == table.concat(original, "\n")
end, 20)
result.disk_after_undo = vim.fn.readfile(file)
result.buffer_after_undo = vim.api.nvim_buf_get_lines(note, 0, -1, false)

-- :PmemReviewAccept: the change is kept as reviewed; the lens goes away.
local before_accept = #result.sent
vim.cmd("PmemReviewAccept")
if not wait_sent(before_accept + 1) then return finish("no answer to :PmemReviewAccept") end
local gone = vim.wait(30000, function()
  pcall(vim.lsp.codelens.refresh, { bufnr = note })
  vim.wait(100)
  return not has_changed_by(note)
end, 200)
result.lenses_after_accept = lens_titles(note)
if not gone then return finish("the history lens stayed after :PmemReviewAccept") end
finish(nil)
