-- Driven by tests/editors/test_editors_nvim.py: the plugin's setup on a Neovim that says it is
-- older than 0.10 (vim.fn.has answers so): a message naming the version needed and where to get
-- it, and nothing set up — no command, no autocommand, no LSP configuration.
local plugin = assert(os.getenv("PMEM_PLUGIN"))
local out = assert(os.getenv("PMEM_OUT"))
local result = { messages = {} }

vim.opt.runtimepath:append(plugin)
local has = vim.fn.has
vim.fn.has = function(feature)
  if feature == "nvim-0.10" or feature == "nvim-0.11" then return 0 end
  return has(feature)
end
vim.notify = function(msg, level) table.insert(result.messages, { msg = msg, level = level }) end

local ok, ret = pcall(function() return require("pmem").setup({}) end)
result.ok, result.returned = ok, ret == nil and vim.NIL or ret
result.commands = vim.tbl_filter(function(name) return name:match("^Pmem") ~= nil end,
  vim.tbl_keys(vim.api.nvim_get_commands({})))
result.autocmds = #vim.tbl_filter(function(a) return a.group_name == "pmem" end, vim.api.nvim_get_autocmds({}))
result.error = vim.NIL
local f = assert(io.open(out, "w"))
f:write(vim.json.encode(result))
f:close()
vim.cmd("qall!")
