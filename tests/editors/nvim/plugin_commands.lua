-- Driven by tests/editors/test_editors_nvim.py: the plugin's user commands in a real headless Neovim.
-- vim.ui.input and vim.ui.select are the user; every workspace/executeCommand the plugin sends
-- and its answer are recorded. The test checks the disk afterwards (no :wall here).
local plugin = assert(os.getenv("PMEM_PLUGIN"))
local root = assert(os.getenv("PMEM_ROOT_UNDER_TEST"))
local bare = assert(os.getenv("PMEM_BARE_ROOT"))
local server = assert(os.getenv("PMEM_SERVER"))
local out = assert(os.getenv("PMEM_OUT"))
local result = { sent = {}, inputs = {}, selects = {}, messages = {} }

local function finish(err)
  result.error = err or vim.NIL
  local f = assert(io.open(out, "w"))
  f:write(vim.json.encode(result))
  f:close()
  vim.cmd("qall!")
end

vim.opt.runtimepath:append(plugin)
require("pmem").setup({ cmd = { server } })

-- The user.
local input_answer, select_answer
vim.ui.input = function(opts, on_confirm)
  table.insert(result.inputs, opts.prompt or "")
  on_confirm(input_answer)
end
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
local echo = vim.api.nvim_echo
vim.api.nvim_echo = function(chunks, history, opts)
  local text = {}
  for _, c in ipairs(chunks) do table.insert(text, c[1]) end
  table.insert(result.messages, table.concat(text))
  return echo(chunks, history, opts)
end

local wrapped = {}
local function record_requests(client)
  if wrapped[client.id] then return end
  wrapped[client.id] = true
  local request = client.request
  client.request = function(self, method, params, handler, bufnr)
    if method ~= "workspace/executeCommand" then return request(self, method, params, handler, bufnr) end
    local entry = { command = params.command, arguments = params.arguments, client = self.id }
    table.insert(result.sent, entry)
    return request(self, method, params, function(err, res, ctx, cfg)
      entry.err = err and { code = err.code, message = err.message } or vim.NIL
      entry.result = res == nil and vim.NIL or res
      entry.done = true
      if handler then return handler(err, res, ctx, cfg) end
    end, bufnr)
  end
end

local function open(path)
  vim.cmd("edit " .. vim.fn.fnameescape(path))
  local bufnr = vim.api.nvim_get_current_buf()
  local ok = vim.wait(60000, function() return #vim.lsp.get_clients({ bufnr = bufnr, name = "pmem" }) > 0 end, 20)
  if not ok then return nil end
  record_requests(vim.lsp.get_clients({ bufnr = bufnr, name = "pmem" })[1])
  return bufnr
end

local function wait_sent(n)
  return vim.wait(60000, function() return #result.sent >= n and result.sent[n].done end, 20)
end

local note = open(root .. "/projects/garden-sensors.md")
if not note then return finish("no client on the note") end
if not vim.wait(60000, function() return #vim.diagnostic.get(note) > 0 end, 20) then
  return finish("no diagnostics on the note")
end

local note_win = vim.api.nvim_get_current_win()
vim.cmd("PmemStatus")
if not wait_sent(1) then return finish("no answer to :PmemStatus") end
vim.wait(60000, function() return vim.api.nvim_buf_get_name(0) == "pmem://status" end, 20)
-- Shown in a scratch buffer (readable, no hit-enter prompt), not as a message.
local report = vim.api.nvim_get_current_buf()
result.status_buffer = { name = vim.api.nvim_buf_get_name(report), buftype = vim.bo[report].buftype,
  first = vim.api.nvim_buf_get_lines(report, 0, 1, false)[1] }
vim.api.nvim_set_current_win(note_win)
vim.cmd("PmemHealth")
if not wait_sent(2) then return finish("no answer to :PmemHealth") end
vim.wait(60000, function() return #vim.fn.getqflist() > 0 end, 20)
result.qf_title = vim.fn.getqflist({ title = 1 }).title
result.qf_texts = vim.tbl_map(function(item) return item.text end, vim.fn.getqflist())
vim.api.nvim_set_current_win(note_win)

-- :PmemArchive without a reason: asks for one, then the server asks to confirm.
input_answer, select_answer = "handed over to the allotment society", "Archive"
vim.cmd("PmemArchive")
if not wait_sent(3) then return finish("no answer to :PmemArchive") end
local archived = root .. "/_archive/projects/garden-sensors.md"
local ok = vim.wait(60000, function()
  if vim.fn.filereadable(archived) == 0 then return false end
  local index = table.concat(vim.fn.readfile(root .. "/_index.md"), "\n")
  return not index:find("projects/garden-sensors.md", 1, true)
end, 20)
if not ok then return finish("the archive did not reach the disk") end
result.note_buffer = vim.api.nvim_buf_get_name(note)

-- :PmemDelete and :PmemRecover with a path (the original path): trash, then back.
select_answer = "Delete"
vim.cmd("PmemDelete projects/garden-sensors.md")
if not wait_sent(4) then return finish("no answer to :PmemDelete") end
result.trashed = vim.fn.filereadable(root .. "/_archive/_trash/projects/garden-sensors.md") == 1
select_answer = "Recover"
vim.cmd("PmemRecover projects/garden-sensors.md")
if not wait_sent(5) then return finish("no answer to :PmemRecover") end
result.recovered = vim.fn.filereadable(root .. "/projects/garden-sensors.md") == 1
-- ... and archived again, for what follows.
input_answer, select_answer = "handed over to the allotment society", "Archive"
vim.api.nvim_set_current_win(note_win)
vim.cmd("edit " .. vim.fn.fnameescape(root .. "/projects/garden-sensors.md"))
vim.cmd("PmemArchive handed over to the allotment society")
if not wait_sent(6) then return finish("no answer to the second :PmemArchive") end

-- <Esc> at the reason prompt: nothing is sent.
open(root .. "/notes/meal-planning.md")
input_answer, select_answer = nil, "Archive"
vim.cmd("PmemArchive")

-- A reason on the command line: no prompt; "Cancel" at the confirmation: nothing moves.
open(root .. "/notes/travel-2026.md")
input_answer, select_answer = "should not be asked", "Cancel"
vim.cmd("PmemArchive trip is over")
-- Whatever came before it was sent first: what the <Esc> sent is what precedes this one.
local function trip_sent()
  for i, entry in ipairs(result.sent) do
    local args = entry.arguments and entry.arguments[1]
    if type(args) == "table" and args.reason == "trip is over" then return i, entry end
  end
end
if not vim.wait(60000, function() local _, entry = trip_sent(); return entry ~= nil and entry.done end, 20) then
  return finish("no answer to :PmemArchive trip is over")
end
result.sent_after_escape = trip_sent() - 1

-- :PmemUpgrade in a second root without lifecycle folders.
local bare_note = open(bare .. "/notes/a.md")
if not bare_note then return finish("no client in the bare root") end
select_answer = "Upgrade"
vim.cmd("PmemUpgrade")
if not wait_sent(8) then return finish("no answer to :PmemUpgrade") end
vim.wait(60000, function() return vim.fn.filereadable(bare .. "/_archive/_index.md") == 1 end, 20)
result.clients = #vim.lsp.get_clients({ name = "pmem" })
finish(nil)
