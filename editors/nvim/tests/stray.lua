-- Roots: a file with no project marker above it gets hover only (no root, no tree written beside it
-- on save); a generated page opened from a workspace's docs tree belongs to the workspace, not to
-- its output folder. Writes a JSON report to OUT_JSON.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h") .. "/harness.lua")
local ROOT = assert(os.getenv("WORKSPACE"))
local STRAY = assert(os.getenv("STRAY"))
local CMD = vim.fn.json_decode(assert(os.getenv("SERVER_CMD_JSON")))
local FORCE = os.getenv("FORCE_API")
local report = { errors = {} }

local ok, err = pcall(function()
  local repodoc = require("repodoc")
  repodoc.setup({ cmd = CMD, _force_api = FORCE ~= "" and FORCE or nil })
  vim.cmd("filetype on")

  local client_of = H.client_of

  -- a stray Python file: hover, but no root
  vim.cmd("edit " .. vim.fn.fnameescape(STRAY .. "/tool.py"))
  local bufnr = vim.api.nvim_get_current_buf()
  local client = client_of(bufnr)
  report.stray_root = client.config.root_dir or vim.NIL
  report.stray_folders = #(client.workspace_folders or {})
  local answers = vim.lsp.buf_request_sync(bufnr, "textDocument/hover", {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) }, position = { line = 4, character = 1 } }, 30000)
  local answer = answers and answers[client.id]
  report.stray_hover = answer and answer.result and answer.result.contents.value or vim.NIL

  -- a stray Markdown file, saved: no docs/ beside it
  vim.cmd("edit " .. vim.fn.fnameescape(STRAY .. "/todo.md"))
  vim.api.nvim_buf_set_lines(0, -1, -1, false, { "- more" })
  vim.cmd("silent write")
  client_of(vim.api.nvim_get_current_buf())
  vim.wait(2000)

  -- a generated page: its root is the workspace; saving it writes no docs/docs
  vim.cmd("edit " .. vim.fn.fnameescape(ROOT .. "/docs/pkg/core.py_docs.md"))
  local page = client_of(vim.api.nvim_get_current_buf())
  report.page_root = page.config.root_dir or vim.NIL
  vim.cmd("silent write")
  vim.wait(2000)
  report.clients = #repodoc.clients()
end)
if not ok then table.insert(report.errors, tostring(err)) end
H.finish(report)
