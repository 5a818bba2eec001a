-- Minimal config for the screenshot (make_screenshot.sh): the plugin, diagnostics as virtual text.
vim.opt.runtimepath:append(vim.env.PMEM_PLUGIN)
vim.opt.termguicolors = true
vim.opt.number = true
vim.opt.signcolumn = "yes"
vim.opt.laststatus = 2
vim.opt.shortmess:append("I")
vim.diagnostic.config({
  virtual_text = { format = function(d) return ("%s %s"):format(d.code, d.message) end },
  severity_sort = true,
})
require("pmem").setup({ cmd = { vim.env.PMEM_SERVER } })
