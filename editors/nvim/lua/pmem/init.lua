-- pmem.nvim: starts pmem-lsp for Markdown buffers under a Persistent Memory root and adds
-- :PmemStatus, :PmemHealth, :PmemArchive [reason], :PmemDelete [path], :PmemRecover [path],
-- :PmemUpgrade, and history (docs/design.md §11): :PmemHistory [path], :PmemDiff [path], :PmemUndo
-- [entry], :PmemReviewAccept[!] and the "changed by an agent · diff · undo · keep" code lens. The
-- server writes every change on disk itself; when it changed a file that is open here it says so
-- (`pmem/filesChanged`) and the unmodified buffer is reloaded.
--
--   vim.opt.runtimepath:append("/path/to/pmem-lsp/editors/nvim")
--   require("pmem").setup({})
--
-- See editors/nvim/README.md for the options and keymaps.
local M = {}

local uv = vim.uv or vim.loop
local NAME = "pmem"
-- Folders of a root that never are a root themselves (`_archive/` holds its own `_index.md`).
local INNER = { _archive = true, _core = true, _trash = true }

local defaults = {
  -- Command that starts the server; default: `pmem-lsp` if executable, else { python, "-m", "pmem_lsp" }.
  cmd = nil,
  python = "python3",
  -- A root to attach to even without markers (default: $PMEM_ROOT, else ~/.persistent-memory).
  root = nil,
  -- The `pmem` settings sent to the server (schemas/settings.schema.json), e.g. { ignore = { "PM100" } }.
  settings = {},
  -- Buffer-local keymaps in attached buffers; false for none, or a table to change some.
  keymaps = {
    status = "<localleader>ps",
    health = "<localleader>ph",
    archive = "<localleader>pa",
    upgrade = "<localleader>pu",
  },
  -- Show the server's code lenses (routed, references, last change, and "changed by an agent ·
  -- diff · undo · keep" on a file changed outside this editor since the last review).
  codelens = true,
  -- Show the rule code in virtual text ("PM102 the summary has 2 bullets…") when virtual text is on.
  code_in_virtual_text = true,
  -- nil: vim.lsp.config + vim.lsp.enable on Neovim 0.11+, vim.lsp.start before; false: always vim.lsp.start.
  use_lsp_config = nil,
}

M.options = vim.deepcopy(defaults)

local function notify(msg, level)
  vim.notify("pmem: " .. msg, level or vim.log.levels.INFO)
end

local function real(path)
  path = vim.fs.normalize(vim.fn.fnamemodify(path, ":p"))
  path = (uv.fs_realpath(path) or path):gsub("/$", "")
  return path
end

local function is_dir(path)
  local st = uv.fs_stat(path)
  return st ~= nil and st.type == "directory"
end

local function is_file(path)
  local st = uv.fs_stat(path)
  return st ~= nil and st.type == "file"
end

local function looks_like_root(dir)
  return is_file(dir .. "/_index.md") or is_dir(dir .. "/_core") or is_dir(dir .. "/_archive")
end

--- Roots named by the user: the `root` option, $PMEM_ROOT, ~/.persistent-memory (those that exist).
local function named_roots()
  local roots = {}
  for _, r in ipairs({ M.options.root, M.options.settings and M.options.settings.root, vim.env.PMEM_ROOT,
    "~/.persistent-memory" }) do
    if type(r) == "string" and r ~= "" then
      local dir = vim.fn.expand(r)
      if is_dir(dir) then table.insert(roots, real(dir)) end
    end
  end
  return roots
end

local function under(path, dir)
  return path == dir or vim.startswith(path, dir .. "/")
end

--- The memory root of `path`: a named root that contains it, else the nearest folder above it
--- with `_index.md`, `_core/` or `_archive/` (never `_archive/`, `_core/` or a folder inside them).
---@param path string
---@return string|nil
function M.find_root(path)
  if not path or path == "" then return nil end
  path = real(path)
  for _, root in ipairs(named_roots()) do
    if under(path, root) then return root end
  end
  for dir in vim.fs.parents(path) do
    local inner = false
    for part in dir:gmatch("[^/]+") do
      if INNER[part] then inner = true break end
    end
    if not inner and looks_like_root(dir) then return dir end
  end
  return nil
end

local function server_cmd()
  if M.options.cmd then
    return type(M.options.cmd) == "string" and { M.options.cmd } or M.options.cmd
  end
  if vim.fn.executable("pmem-lsp") == 1 then return { "pmem-lsp" } end
  return { M.options.python or "python3", "-m", "pmem_lsp" }
end

local function pmem_settings()
  local s = M.options.settings or {}
  return next(s) == nil and vim.empty_dict() or s
end

--- The server changed files on disk (a lifecycle step): reload those that are loaded and
--- unmodified, as `:checktime` would with 'autoread' — but without its prompt for a file that
--- did not exist when the buffer was opened (W13). Buffers with unsaved edits are left alone
--- (the server never writes those).
local function files_changed(_, params)
  for _, uri in ipairs(params and params.uris or {}) do
    local bufnr = vim.uri_to_bufnr(uri)
    if vim.api.nvim_buf_is_loaded(bufnr) and not vim.bo[bufnr].modified then
      vim.api.nvim_buf_call(bufnr, function() vim.cmd("silent! edit") end)
    end
  end
end

--- The server's confirmation (`window/showMessageRequest`: the preview, then Archive/Cancel…):
--- Neovim's own handler appends ": " to the message, as if the preview were cut off; here the
--- preview is shown as the server wrote it, and a Cancel (or <Esc>) says that nothing changed.
--- Server requests run in a coroutine (Neovim 0.10+): vim.ui.select may answer later.
local function confirm(_, params)
  local actions = params and params.actions or {}
  local co, is_main = coroutine.running()
  local choice
  if co and not is_main then
    vim.ui.select(actions, {
      kind = "pmem_confirm",
      prompt = params.message,
      format_item = function(action) return action.title end,
    }, function(picked)
      vim.schedule(function() coroutine.resume(co, picked) end)
    end)
    choice = coroutine.yield()
  else
    local lines = { params.message }
    for i, action in ipairs(actions) do table.insert(lines, i .. ": " .. action.title) end
    choice = actions[vim.fn.inputlist(lines)]
  end
  local last = actions[#actions]
  if choice == nil or choice == vim.NIL or (#actions > 1 and last and choice.title == last.title) then
    -- The server's last action is Cancel; it answers "cancelled" and changes nothing.
    vim.schedule(function() notify("cancelled; nothing was changed") end)
  end
  return choice or vim.NIL
end

local function client_config()
  return {
    name = NAME,
    cmd = server_cmd(),
    filetypes = { "markdown" },
    init_options = { pmem = pmem_settings() },
    settings = { pmem = pmem_settings() },
    handlers = { ["pmem/filesChanged"] = files_changed, ["window/showMessageRequest"] = confirm },
  }
end

M.files_changed = files_changed

local function request(client, method, params, handler, bufnr)
  if vim.fn.has("nvim-0.11") == 1 then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

--- The pmem client of `bufnr`, else any running pmem client.
function M.client(bufnr)
  local get = vim.lsp.get_clients or vim.lsp.get_active_clients
  local clients = get({ name = NAME, bufnr = bufnr or vim.api.nvim_get_current_buf() })
  if #clients == 0 then clients = get({ name = NAME }) end
  return clients[1]
end

--- Run a server command (`pmem.status`, `pmem.archive`, …) with one argument object.
---@param command string
---@param args table|nil
---@param on_done fun(err: table|nil, result: any, client: table)|nil
function M.execute(command, args, on_done, bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local client = M.client(bufnr)
  if not client then
    notify("no pmem-lsp client is running (open a Markdown file under a memory root)", vim.log.levels.WARN)
    return false
  end
  if args == nil or next(args) == nil then args = vim.empty_dict() end -- `{}`, not `[]`, on the wire
  local params = { command = command, arguments = { args } }
  request(client, "workspace/executeCommand", params, function(err, result)
    -- The server shows refusals (-32803) and reports itself; other errors are shown here.
    if err and err.code ~= -32803 then
      notify(command .. ": " .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
    end
    if on_done then on_done(err, result, client) end
  end, bufnr)
  return true
end

-- The server shows each outcome itself (window/showMessage, one line); the disk is complete
-- when the command answers, nothing is left to save here.
local function lifecycle(command, args, bufnr)
  return M.execute(command, args, nil, bufnr)
end

--- A report in a scratch buffer: readable, and no hit-enter prompt for a long message.
local function show_report(title, text)
  vim.cmd("botright new")
  local buf = vim.api.nvim_get_current_buf()
  vim.bo[buf].buftype, vim.bo[buf].bufhidden, vim.bo[buf].swapfile = "nofile", "wipe", false
  pcall(vim.api.nvim_buf_set_name, buf, "pmem://" .. title)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, vim.split(text, "\n", { trimempty = true }))
  vim.bo[buf].modifiable = false
  vim.bo[buf].filetype = "markdown"
end

function M.status()
  return M.execute("pmem.status", { show = false }, function(err, result)
    if not err and type(result) == "table" and type(result.text) == "string" then
      show_report("status", result.text)
    end
  end)
end

--- The health proposal in the quickfix list: one entry per item (archive / delete / keep
--- active, with the reason), expired trash after them; `:cnext` walks them.
function M.health()
  return M.execute("pmem.health", { show = false }, function(err, result, client)
    if err or type(result) ~= "table" then return end
    local root = client.root_dir or ""
    local items = {}
    for _, item in ipairs(result.items or {}) do
      local codes = table.concat(item.signals or {}, " ")
      table.insert(items, { filename = root .. "/" .. item.path, lnum = 1, col = 1,
        text = (codes ~= "" and codes .. " " or "") .. item.proposal .. ": " .. item.reason,
        type = item.proposal == "keep active" and "I" or "W" })
    end
    for _, trash in ipairs(result.expiredTrash or {}) do
      table.insert(items, { filename = root .. "/" .. trash.path, lnum = 1, col = 1, type = "W",
        text = "PM304 expired trash: recover-by " .. trash.recoverBy .. " (`:PmemPurge` is the CLI's `pmem purge`)" })
    end
    vim.fn.setqflist({}, " ", { title = "Persistent Memory: health", items = items })
    if #items > 0 then
      vim.cmd("copen")
      notify(#items .. " item" .. (#items == 1 and "" or "s") .. " to review in the quickfix list")
    else
      notify("health: no candidates, and no expired trash")
    end
  end)
end

function M.upgrade() return lifecycle("pmem.upgrade", {}) end

--- Archive the current file. Without a reason, asks for one with vim.ui.input (empty: the
--- server's default reason; <Esc>: nothing happens). The server then asks for confirmation.
---@param reason string|nil
function M.archive(reason, bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local client = M.client(bufnr)
  local file = vim.api.nvim_buf_get_name(bufnr)
  local root = client and client.root_dir
  if not root or file == "" or not under(real(file), real(root)) then
    notify("the current buffer is not a file under a memory root", vim.log.levels.WARN)
    return false
  end
  local rel = real(file):sub(#real(root) + 2)
  local function run(why)
    lifecycle("pmem.archive", { path = rel, reason = why }, bufnr)
  end
  if reason and reason ~= "" then
    run(reason)
  else
    vim.ui.input({ prompt = "Archive " .. rel .. ", reason: " }, function(input)
      if input == nil then return notify("archive cancelled") end
      run(input ~= "" and input or nil)
    end)
  end
  return true
end

--- `path` relative to the root of `bufnr`'s client, else the current file's; nil when neither.
local function target(path, bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  if path and path ~= "" then return path end
  local client = M.client(bufnr)
  local file = vim.api.nvim_buf_get_name(bufnr)
  local root = client and client.root_dir
  if not root or file == "" or not under(real(file), real(root)) then return nil end
  return real(file):sub(#real(root) + 2)
end

--- Move an archived file to the trash (recoverable for 30 days): `path` (relative to the
--- root, the original path or its place in `_archive/`), else the current file.
function M.delete(path)
  local rel = target(path)
  if not rel then return notify("give a path, or open an archived file", vim.log.levels.WARN) end
  return lifecycle("pmem.delete", { path = rel })
end

--- Bring an archived or trashed file back with its route: `path`, else the current file.
function M.recover(path)
  local rel = target(path)
  if not rel then return notify("give a path, or open an archived file", vim.log.levels.WARN) end
  return lifecycle("pmem.recover", { path = rel })
end

-- -- History (docs/design.md §11) -------------------------------------------------------------

--- Reload the unmodified buffers of `rels` (relative to `root`) after the server wrote them.
local function reload(root, rels)
  local uris = {}
  for _, rel in ipairs(rels or {}) do table.insert(uris, vim.uri_from_fname(root .. "/" .. rel)) end
  files_changed(nil, { uris = uris })
end

--- The file's history (or the root's, without a path and outside a memory file) in a scratch buffer.
function M.history(path)
  local rel = target(path)
  return M.execute("pmem.history", { path = rel, show = false }, function(err, result)
    if not err and type(result) == "table" and type(result.text) == "string" then
      show_report("history", result.text)
    end
  end)
end

--- A diff split: the file as it was before its unreviewed changes (or before `entry`) beside it now.
function M.diff(path, entry)
  local rel = target(path)
  if not rel then return notify("give a path, or open a memory file", vim.log.levels.WARN) end
  local client = M.client()
  local root = client and client.root_dir
  return M.execute("pmem.diff", { path = rel, entry = entry }, function(err, result)
    if err or type(result) ~= "table" then return end
    local file = root .. "/" .. rel
    if real(vim.api.nvim_buf_get_name(0)) ~= real(file) then vim.cmd("edit " .. vim.fn.fnameescape(file)) end
    local file_win = vim.api.nvim_get_current_win()
    vim.cmd("diffthis")
    vim.cmd("leftabove vnew")
    local buf = vim.api.nvim_get_current_buf()
    vim.bo[buf].buftype, vim.bo[buf].bufhidden, vim.bo[buf].swapfile = "nofile", "wipe", false
    pcall(vim.api.nvim_buf_set_name, buf, "pmem://before/" .. result.entry .. "/" .. rel)
    local old = (type(result.old) == "string" and result.old or ""):gsub("\n$", "")
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, vim.split(old, "\n", { plain = true }))
    vim.bo[buf].modifiable = false
    vim.bo[buf].filetype = "markdown"
    vim.cmd("diffthis")
    vim.api.nvim_set_current_win(file_win)
  end)
end

--- Undo `entry` (else the current file's newest unreviewed change); the server shows the preview
--- and asks to confirm, then saves the files back; their unmodified buffers are reloaded.
function M.undo(entry, path)
  local rel = target(path)
  local client = M.client()
  local root = client and client.root_dir
  local args = { entry = (entry and entry ~= "") and entry or nil, paths = rel and { rel } or nil }
  if not args.entry and not rel then return notify("give an entry, or open a memory file", vim.log.levels.WARN) end
  return M.execute("pmem.undo", args, function(err, result)
    if not err and type(result) == "table" and result.applied and root then reload(root, { rel }) end
    if vim.lsp.codelens then vim.schedule(function() pcall(vim.lsp.codelens.refresh, { bufnr = 0 }) end) end
  end)
end

--- Keep the current file's unreviewed changes (`all`: every change in the root); the lens goes away.
function M.review_accept(all, path)
  local args = all and { all = true } or { path = target(path) }
  if not all and not args.path then return notify("give a path, or open a memory file", vim.log.levels.WARN) end
  return M.execute("pmem.review.accept", args, function(err, result)
    if err or type(result) ~= "table" then return end
    notify("marked reviewed (" .. tostring(result.accepted) .. " change" .. (result.accepted == 1 and "" or "s") .. ")")
    if vim.lsp.codelens then pcall(vim.lsp.codelens.refresh, { bufnr = 0 }) end
  end)
end

--- The history lenses run these client-side: the server's commands return data (a diff, the
--- entries), which only the plugin can show.
local function lens_commands()
  local function arg(command) return (command.arguments or {})[1] or {} end
  vim.lsp.commands["pmem.history"] = function(command) M.history(arg(command).path) end
  vim.lsp.commands["pmem.diff"] = function(command) M.diff(arg(command).path, arg(command).entry) end
  vim.lsp.commands["pmem.undo"] = function(command)
    local a = arg(command)
    M.undo(a.entry, a.paths and a.paths[1])
  end
  vim.lsp.commands["pmem.review.accept"] = function(command) M.review_accept(false, arg(command).path) end
end

--- Lenses are pulled: on entering the buffer and after each save or pause.
local function enable_codelens(bufnr)
  if not vim.lsp.codelens then return end
  local group = vim.api.nvim_create_augroup("pmem_codelens_" .. bufnr, { clear = true })
  vim.api.nvim_create_autocmd({ "BufEnter", "BufWritePost", "CursorHold", "FocusGained" }, {
    group = group, buffer = bufnr,
    callback = function() pcall(vim.lsp.codelens.refresh, { bufnr = bufnr }) end,
  })
  pcall(vim.lsp.codelens.refresh, { bufnr = bufnr })
end

local function map_keys(bufnr)
  local keys = M.options.keymaps
  if not keys then return end
  local actions = {
    status = { M.status, "Persistent Memory: status" },
    health = { M.health, "Persistent Memory: health" },
    archive = { function() M.archive() end, "Persistent Memory: archive this file" },
    upgrade = { M.upgrade, "Persistent Memory: upgrade the root" },
  }
  for name, lhs in pairs(keys) do
    if lhs and actions[name] then
      vim.keymap.set("n", lhs, actions[name][1], { buffer = bufnr, desc = actions[name][2] })
    end
  end
end

local function create_commands()
  local cmd = vim.api.nvim_create_user_command
  cmd("PmemStatus", function() M.status() end, { desc = "Persistent Memory: memory status" })
  cmd("PmemHealth", function() M.health() end, { desc = "Persistent Memory: health report" })
  cmd("PmemUpgrade", function() M.upgrade() end, { desc = "Persistent Memory: add missing lifecycle folders" })
  cmd("PmemArchive", function(o) M.archive(o.args) end,
    { nargs = "?", desc = "Persistent Memory: archive the current file [reason]" })
  cmd("PmemDelete", function(o) M.delete(o.args) end,
    { nargs = "?", complete = "file", desc = "Persistent Memory: move an archived file to the trash [path]" })
  cmd("PmemRecover", function(o) M.recover(o.args) end,
    { nargs = "?", complete = "file", desc = "Persistent Memory: recover an archived or trashed file [path]" })
  cmd("PmemHistory", function(o) M.history(o.args) end,
    { nargs = "?", complete = "file", desc = "Persistent Memory: the history of this file [path]" })
  cmd("PmemDiff", function(o) M.diff(o.args) end,
    { nargs = "?", complete = "file", desc = "Persistent Memory: diff this file with before its unreviewed changes [path]" })
  cmd("PmemUndo", function(o) M.undo(o.args) end,
    { nargs = "?", desc = "Persistent Memory: undo a history entry, confirmed first [entry]" })
  cmd("PmemReviewAccept", function(o) M.review_accept(o.bang) end,
    { nargs = 0, bang = true, desc = "Persistent Memory: keep this file's unreviewed changes (! every change)" })
end

local function start_for(bufnr)
  if vim.bo[bufnr].buftype ~= "" or vim.bo[bufnr].filetype ~= "markdown" then return end
  local root = M.find_root(vim.api.nvim_buf_get_name(bufnr))
  if not root then return end
  local config = client_config()
  config.root_dir = root
  config.workspace_folders = { { uri = vim.uri_from_fname(root), name = vim.fs.basename(root) } }
  vim.lsp.start(config, { bufnr = bufnr })
end

--- The text a completion item puts in the buffer: its edit's new text, a snippet read as the
--- plain text it stands for (the server escapes only `\`, `$` and `}`, and sends no tab stops).
local function completion_text(item)
  -- pmem's items are files and folders (the convert below sees every item of the buffer,
  -- whichever server sent it: leave the others to Neovim).
  if item.kind ~= 17 and item.kind ~= 19 then return nil end
  local text = item.textEdit and item.textEdit.newText or item.insertText
  if type(text) ~= "string" then return nil end
  if item.insertTextFormat == 2 then
    if text:gsub("\\.", ""):find("%$") then return nil end -- a real snippet (tab stops): not ours
    text = text:gsub("\\(.)", "%1")
  end
  return text
end

--- Neovim 0.11's built-in completion inserts a snippet's label (the path) and a plain edit up to
--- its first space; the whole text arrives only when the item is confirmed with <C-y> — never when
--- a single match is inserted at once (the default 'completeopt' shows no menu for one item).
--- So the word Neovim inserts is the server's whole text: a whole route line on an empty list
--- item of `_index.md`, with or without a menu.
local function enable_completion(client, bufnr)
  if not (vim.lsp.completion and vim.lsp.completion.enable) then return end -- Neovim 0.10: paths only
  vim.lsp.completion.enable(true, client.id, bufnr, {
    convert = function(item)
      local text = completion_text(item)
      return text and { word = text } or {}
    end,
  })
end

M._completion_text = completion_text

--- Virtual text of this client's diagnostics starts with the rule code, when virtual text is on.
local function show_codes(client)
  local global = vim.diagnostic.config().virtual_text
  if not global then return end
  local ns = vim.lsp.diagnostic.get_namespace(client.id)
  local opts = type(global) == "table" and vim.deepcopy(global) or {}
  opts.format = function(d) return (d.code and (d.code .. " ") or "") .. d.message end
  vim.diagnostic.config({ virtual_text = opts }, ns)
end

M.MIN_VERSION = "0.10"

--- Neovim's version as text ("0.7.2"), from `:version` (which every version has).
local function nvim_version()
  local ok, text = pcall(vim.fn.execute, "version")
  return ok and text:match("NVIM v([%w%.%-]+)") or "unknown"
end

--- Before anything else: an older Neovim gets a message saying what it needs, not an error from
--- an API it lacks (0.7 has no LspAttach event). Nothing above runs an API newer than 0.7.
function M.supported()
  if vim.fn.has("nvim-" .. M.MIN_VERSION) == 1 then return true end
  vim.notify(("pmem: pmem.nvim needs Neovim %s or later (0.11 recommended); this is %s, so nothing was set up. "
    .. "Debian 12 ships 0.7: Debian 13 has 0.10, or take a release from "
    .. "https://github.com/neovim/neovim/releases (nvim-linux-x86_64.tar.gz, or the AppImage)."):format(
    M.MIN_VERSION, nvim_version()), vim.log.levels.ERROR)
  return false
end

---@param opts table|nil see `defaults` above
function M.setup(opts)
  if not M.supported() then return false end
  M.options = vim.tbl_deep_extend("force", vim.deepcopy(defaults), opts or {})
  if opts and opts.keymaps ~= nil and type(opts.keymaps) ~= "table" then M.options.keymaps = opts.keymaps end
  create_commands()
  lens_commands()
  local group = vim.api.nvim_create_augroup("pmem", { clear = true })
  vim.api.nvim_create_autocmd("LspAttach", {
    group = group,
    callback = function(args)
      local client = vim.lsp.get_client_by_id(args.data.client_id)
      if client and client.name == NAME then
        map_keys(args.buf)
        enable_completion(client, args.buf)
        if M.options.codelens then enable_codelens(args.buf) end
        if M.options.code_in_virtual_text then show_codes(client) end
      end
    end,
  })

  local use_config = M.options.use_lsp_config
  if use_config == nil then use_config = vim.fn.has("nvim-0.11") == 1 end
  if use_config then
    local config = client_config()
    config.name = nil
    -- Called per buffer; attaching only when the file lies under a memory root.
    config.root_dir = function(bufnr, on_dir)
      local root = M.find_root(vim.api.nvim_buf_get_name(bufnr))
      if root then on_dir(root) end
    end
    vim.lsp.config(NAME, config)
    vim.lsp.enable(NAME)
  else
    vim.api.nvim_create_autocmd("FileType", {
      group = group,
      pattern = "markdown",
      callback = function(args) start_for(args.buf) end,
    })
    for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_is_loaded(bufnr) then start_for(bufnr) end
    end
  end
end

return M
