-- Driven by tests/editors/test_editors_nvim.py: load the plugin in editors/nvim, open files inside and
-- outside a memory root, and write which buffers the pmem client attached to as JSON.
local plugin = assert(os.getenv("PMEM_PLUGIN"))
local root = assert(os.getenv("PMEM_ROOT_UNDER_TEST"))
local outside = assert(os.getenv("PMEM_OUTSIDE"))
local server = assert(os.getenv("PMEM_SERVER"))
local out = assert(os.getenv("PMEM_OUT"))
local use_lsp_config = os.getenv("PMEM_USE_LSP_CONFIG") == "1"
local result = { buffers = {} }

local function finish(err)
  result.error = err or vim.NIL
  local f = assert(io.open(out, "w"))
  f:write(vim.json.encode(result))
  f:close()
  vim.cmd("qall!")
end

vim.opt.runtimepath:append(plugin)
vim.diagnostic.config({ virtual_text = true }) -- as the README asks
local pmem = require("pmem")
pmem.setup({ cmd = { server }, use_lsp_config = use_lsp_config, settings = { ignore = { "PM100" } } })
result.enabled = vim.lsp.is_enabled and vim.lsp.is_enabled("pmem") or false
local commands = vim.api.nvim_get_commands({})
result.commands = {}
for _, name in ipairs({ "PmemStatus", "PmemHealth", "PmemArchive", "PmemUpgrade", "PmemDelete", "PmemRecover",
  "PmemHistory", "PmemDiff", "PmemUndo", "PmemReviewAccept" }) do
  result.commands[name] = commands[name] ~= nil and commands[name].nargs or vim.NIL
end

local function open(path)
  vim.cmd("edit " .. vim.fn.fnameescape(path))
  return vim.api.nvim_get_current_buf()
end

local function clients(bufnr)
  local list = {}
  for _, c in ipairs(vim.lsp.get_clients({ bufnr = bufnr, name = "pmem" })) do
    table.insert(list, { id = c.id, root_dir = c.root_dir })
  end
  return list
end

-- Inside the root: attaches, and the server's diagnostics arrive.
local note = open(root .. "/projects/garden-sensors.md")
local ok = vim.wait(60000, function() return #vim.diagnostic.get(note) > 0 end, 20)
if not ok then return finish("no diagnostics on a note inside the root") end
-- Virtual text starts with the rule code.
do
  local d = vim.diagnostic.get(note)[1]
  local ns = vim.diagnostic.config(nil, d.namespace).virtual_text
  result.virtual_text = type(ns) == "table" and ns.format and ns.format(d) or vim.NIL
end
result.buffers.note = { clients = clients(note), filetype = vim.bo[note].filetype }
result.note_codes = {}
for _, d in ipairs(vim.diagnostic.get(note)) do table.insert(result.note_codes, d.code) end
result.keymaps = {}
for _, lhs in ipairs({ "<localleader>ps", "<localleader>ph", "<localleader>pa", "<localleader>pu" }) do
  local m = vim.fn.maparg(lhs, "n", false, true)
  table.insert(result.keymaps, { lhs = lhs, buffer = m.buffer or 0, desc = m.desc or vim.NIL })
end

-- The settings reached the server: PM100 (no summary) is ignored on the reading list.
local reading = vim.fn.bufadd(root .. "/notes/reading-list.md")
vim.wait(60000, function() return #vim.diagnostic.get(reading) > 0 end, 20)
result.reading_codes = {}
for _, d in ipairs(vim.diagnostic.get(reading)) do table.insert(result.reading_codes, d.code) end

-- Inside `_archive/` (which has an `_index.md` of its own): the same root, the same client.
local archived = open(root .. "/_archive/projects/ferry-ticket-etl.md")
vim.wait(60000, function() return #clients(archived) > 0 end, 20)
result.buffers.archived = { clients = clients(archived), filetype = vim.bo[archived].filetype }

-- Not Markdown, inside the root, and Markdown outside any root: no client. Opened before a
-- note of the root that does get one: once that one is attached, the plugin has handled
-- these two as well (the same autocommands, in order), so "none" is an answer, not a race.
local text = open(root .. "/notes/raw.txt")
local other = open(outside .. "/notes.md")
local barrier = open(root .. "/_core/profile.md")
if not vim.wait(60000, function() return #clients(barrier) > 0 end, 20) then
  return finish("no client on _core/profile.md")
end
result.buffers.text = { clients = clients(text), filetype = vim.bo[text].filetype }
result.buffers.outside = { clients = clients(other), filetype = vim.bo[other].filetype }
result.find_root = {
  note = pmem.find_root(root .. "/projects/garden-sensors.md") or vim.NIL,
  trash = pmem.find_root(root .. "/_archive/_trash/x/y.md") or vim.NIL,
  outside = pmem.find_root(outside .. "/notes.md") or vim.NIL,
}
result.all_clients = #vim.lsp.get_clients({ name = "pmem" })
finish(nil)
