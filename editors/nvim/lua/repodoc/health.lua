-- :checkhealth repodoc (Neovim 0.7's health#report_* and 0.10+'s vim.health)
local M = {}

local health = vim.health or require("health")
local start = health.start or health.report_start
local ok = health.ok or health.report_ok
local warn = health.warn or health.report_warn
local error = health.error or health.report_error

function M.check()
  local repodoc = require("repodoc")
  start("repodoc-lsp")
  local cmd = repodoc.config.cmd or {}
  local exe = cmd[1]
  if not exe or vim.fn.executable(exe) == 0 then
    error("server command not found: " .. tostring(exe),
      { "pip install repodoc-lsp", "or set the command: require('repodoc').setup({ cmd = { ... } })" })
    return
  end
  ok("server command: " .. table.concat(cmd, " "))
  local version_cmd = { exe }
  for i = 2, #cmd do
    if cmd[i] == "serve" then break end
    table.insert(version_cmd, cmd[i])
  end
  table.insert(version_cmd, "--version")
  local out = vim.fn.system(version_cmd)
  if vim.v.shell_error == 0 then
    ok("version: " .. vim.trim(out))
  else
    warn("`" .. table.concat(version_cmd, " ") .. "` failed: " .. vim.trim(out))
  end
  ok("client API: " .. tostring(repodoc.api or "setup() not called"))
  ok("settings: " .. vim.inspect(repodoc.config.settings, { newline = " ", indent = "" }))
  local clients = repodoc.clients()
  if #clients > 0 then ok(#clients .. " client(s) running") else warn("no client running (open a Python file)") end
end

return M
