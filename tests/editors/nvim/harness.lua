-- Shared by the scripts tests/editors/test_neovim.py runs: the environment they get, starting
-- pmem-lsp on a file of the root, and writing the result as JSON before quitting.
local H = {
  root = assert(os.getenv("PMEM_ROOT_UNDER_TEST")),
  server = assert(os.getenv("PMEM_SERVER")),
  out = assert(os.getenv("PMEM_OUT")),
}

-- Write `result` (with `error`, null when all went well) to $PMEM_OUT and quit Neovim.
function H.finish(result, err)
  result.error = err or vim.NIL
  local f = assert(io.open(H.out, "w"))
  f:write(vim.json.encode(result))
  f:close()
  vim.cmd("qall!")
end

-- Edit `rel` under the root and start the server for it; returns the buffer and client id.
function H.open(rel)
  vim.cmd("edit " .. vim.fn.fnameescape(H.root .. "/" .. rel))
  local bufnr = vim.api.nvim_get_current_buf()
  local client_id = vim.lsp.start({
    name = "pmem",
    cmd = { H.server },
    root_dir = H.root,
    workspace_folders = { { uri = vim.uri_from_fname(H.root), name = "memory" } },
  })
  return bufnr, client_id
end

return H
