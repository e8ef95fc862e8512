-- Beside another Python language server (jedi-language-server here): repodoc switches itself to
-- `hover = "extras"`, so a hover shows one signature and docstring, not two. Writes a JSON report
-- to OUT_JSON.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h") .. "/harness.lua")
local ROOT = assert(os.getenv("WORKSPACE"))
local CMD = vim.fn.json_decode(assert(os.getenv("SERVER_CMD_JSON")))
local PEER = vim.fn.json_decode(assert(os.getenv("PEER_CMD_JSON")))
local FORCE = os.getenv("FORCE_API")
local report = { errors = {} }

local wait = H.wait

local ok, err = pcall(function()
  local repodoc = require("repodoc")
  repodoc.setup({ cmd = CMD, _force_api = FORCE ~= "" and FORCE or nil })
  vim.cmd("filetype on")
  vim.cmd("edit " .. vim.fn.fnameescape(ROOT .. "/pkg/use.py"))
  local bufnr = vim.api.nvim_get_current_buf()
  local repo_id = H.client_of(bufnr).id
  -- the other server attaches after repodoc (the usual order is either)
  local peer_conf = { name = "peer", cmd = PEER, root_dir = ROOT }
  local peer_id
  if vim.lsp.start then
    peer_id = vim.lsp.start(peer_conf, { bufnr = bufnr })
  else
    peer_id = vim.lsp.start_client(peer_conf)
    vim.lsp.buf_attach_client(bufnr, peer_id)
  end
  wait(30000, function()
    local c = vim.lsp.get_client_by_id(peer_id)
    return c ~= nil and c.initialized
  end, "the peer")
  vim.api.nvim_win_set_cursor(0, { 4, 3 })
  if vim.fn.exists("##LspAttach") == 0 then vim.api.nvim_feedkeys("K", "x", false) end -- 0.7: K sees the peer
  local params = { textDocument = { uri = vim.uri_from_bufnr(bufnr) }, position = { line = 3, character = 3 } }
  local answers
  wait(30000, function()
    answers = vim.lsp.buf_request_sync(bufnr, "textDocument/hover", params, 10000) or {}
    local mine = answers[repo_id] and answers[repo_id].result
    return mine ~= nil and not mine.contents.value:find("```", 1, true)
  end, "repodoc's extras hover")
  report.repodoc = answers[repo_id].result.contents.value
  report.peer = answers[peer_id] and answers[peer_id].result and answers[peer_id].result.contents.value or vim.NIL
end)
if not ok then table.insert(report.errors, tostring(err)) end
H.finish(report)
