-- Driven by tests/editors/test_neovim.py (issue 14, docs/design.md §5.1): both indexes loaded as buffers, an
-- agent archives a note with the CLI from outside, then the user archives another note from a
-- code action; later the user `:edit`s the agent's old path (an empty buffer, never written)
-- and recovers it. No :wall anywhere: the test reads the disk. With $PMEM_WITH_PLUGIN=1 the
-- project's plugin starts the client, else a bare vim.lsp.start.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/harness.lua")
local root = H.root
local with_plugin = os.getenv("PMEM_WITH_PLUGIN") == "1"
local python = assert(os.getenv("PMEM_PYTHON"))
local result = { selects = {} }

local function finish(err) H.finish(result, err) end

-- The user: confirms whatever the server asks (Archive, Recover).
vim.ui.select = function(items, opts, on_choice)
  local titles = {}
  for _, item in ipairs(items) do table.insert(titles, item.title or tostring(item)) end
  table.insert(result.selects, titles)
  on_choice(items[1], 1)
end

local function client_of(bufnr)
  local ok = vim.wait(60000, function() return #vim.lsp.get_clients({ bufnr = bufnr, name = "pmem" }) > 0 end, 20)
  return ok and vim.lsp.get_clients({ bufnr = bufnr, name = "pmem" })[1] or nil
end

local function open(rel)
  if with_plugin then
    vim.cmd("edit " .. vim.fn.fnameescape(root .. "/" .. rel))
    local bufnr = vim.api.nvim_get_current_buf()
    return bufnr, client_of(bufnr)
  end
  local bufnr, client_id = H.open(rel)
  return bufnr, vim.lsp.get_client_by_id(client_id)
end

local function read(rel)
  return table.concat(vim.fn.readfile(root .. "/" .. rel), "\n")
end

if with_plugin then
  vim.opt.runtimepath:append(assert(os.getenv("PMEM_PLUGIN")))
  require("pmem").setup({ cmd = { H.server } })
end

-- Both indexes loaded, then hidden behind the note the user works on.
local index_buf = open("_index.md")
local archive_buf = open("_archive/_index.md")
local note, client = open("projects/garden-sensors.md")
if not client then return finish("no client on the note") end
if not vim.wait(60000, function() return #vim.diagnostic.get(note) > 0 end, 20) then
  return finish("no diagnostics on the note")
end

-- The agent archives another note from outside the editor.
local agent = vim.fn.system({ python, "-m", "pmem_lsp.cli.main", "--root", root, "archive",
  "notes/meal-planning.md", "--reason", "archived by the agent", "--yes" })
if vim.v.shell_error ~= 0 then return finish("the agent's archive failed: " .. agent) end
vim.wait(1500) -- the server's watcher sees the agent's write

-- The user archives the note from the code action.
vim.lsp.buf.code_action({
  apply = true,
  filter = function(action) return action.title == "Archive projects/garden-sensors.md" end,
})
local ok = vim.wait(60000, function()
  return vim.fn.filereadable(root .. "/_archive/projects/garden-sensors.md") == 1
    and not read("_index.md"):find("projects/garden-sensors.md", 1, true)
    and read("_archive/_index.md"):find("## projects/garden-sensors.md", 1, true) ~= nil
end, 20)
if not ok then return finish("the archive did not reach the disk") end
-- A round trip: every message the server sent before its answer has been handled (an edit
-- that would leave a buffer modified included).
vim.lsp.buf_request_sync(index_buf, "workspace/symbol", { query = "garden" }, 60000)
if with_plugin then -- told that _index.md changed on disk, the plugin reloads its buffer
  vim.wait(60000, function()
    return not table.concat(vim.api.nvim_buf_get_lines(index_buf, 0, -1, false), "\n")
      :find("projects/garden-sensors.md", 1, true)
  end, 20)
end
result.index_modified = vim.bo[index_buf].modified
result.archive_modified = vim.bo[archive_buf].modified
result.index_buffer = table.concat(vim.api.nvim_buf_get_lines(index_buf, 0, -1, false), "\n")

-- The user opens the agent's old path: an empty buffer for a file that does not exist.
vim.cmd("edit " .. vim.fn.fnameescape(root .. "/notes/meal-planning.md"))
local empty = vim.api.nvim_get_current_buf()
if with_plugin then client_of(empty) end -- the plugin attaches it; a bare vim.lsp.start does not
vim.lsp.buf.execute_command = vim.lsp.buf.execute_command -- (0.11: client:exec_cmd below)
local done = false
client:request("workspace/executeCommand", { command = "pmem.recover", arguments = { { path = "notes/meal-planning.md" } } },
  function(err, res)
    result.recover = err and { error = err.message } or res
    done = true
  end, empty)
if not vim.wait(60000, function() return done end, 20) then return finish("no answer to the recover") end
-- The empty buffer is reloaded with the recovered text (the server asks the client to).
vim.wait(60000, function() return vim.api.nvim_buf_line_count(empty) > 1 end, 20)
result.recovered_buffer_lines = vim.api.nvim_buf_line_count(empty)
result.recovered_modified = vim.bo[empty].modified
finish(nil)
