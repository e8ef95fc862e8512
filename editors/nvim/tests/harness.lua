-- Shared by the headless test scripts (loaded with dofile): a wait with a deadline, and the end of a
-- run (the report written as JSON to OUT_JSON, every LSP client stopped within 5 s, Neovim quit).
local H = {}

function H.wait(ms, fn, what)
  assert(vim.wait(ms, fn, 50), "timed out waiting for " .. what)
end

--- The buffer's repodoc client, once it is initialized (30 s at most).
function H.client_of(bufnr)
  local repodoc = require("repodoc")
  H.wait(30000, function()
    local cs = repodoc.clients(bufnr)
    return #cs > 0 and cs[1].initialized
  end, "the server for " .. vim.api.nvim_buf_get_name(bufnr))
  return repodoc.clients(bufnr)[1]
end

--- Write `report`, stop the clients, quit with `code` (0: :qall!, else :cquit code).
function H.finish(report, code)
  local f = assert(io.open(assert(os.getenv("OUT_JSON")), "w"))
  f:write(vim.fn.json_encode(report))
  f:close()
  local cs = vim.lsp.get_clients and vim.lsp.get_clients() or vim.lsp.get_active_clients()
  for _, c in ipairs(cs) do require("repodoc").client_stop(c) end
  vim.wait(5000, function()
    for _, c in ipairs(cs) do if not c.is_stopped() then return false end end
    return true
  end, 50)
  vim.cmd((code or 0) == 0 and "qall!" or ("cquit " .. code))
end

return H
