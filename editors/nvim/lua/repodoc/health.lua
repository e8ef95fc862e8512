-- :checkhealth repodoc (Neovim 0.7's health#report_* and 0.10+'s vim.health)
local M = {}

local health = vim.health or require("health")
local start = health.start or health.report_start
local ok = health.ok or health.report_ok
local warn = health.warn or health.report_warn
local error = health.error or health.report_error

--- Runs `cmd` in the server's working folder (outside the workspace: a checkout's own
--- repodoc_lsp/ must not be imported), with a deadline; its exit code (nil on failure) and output.
local function run(cmd, cwd)
  local out = {}
  local collect = function(_, data) vim.list_extend(out, data) end
  local started, job = pcall(vim.fn.jobstart, cmd, { cwd = cwd, stdout_buffered = true, stderr_buffered = true,
    on_stdout = collect, on_stderr = collect })
  if not started or job <= 0 then return nil, "cannot run" end
  local code = vim.fn.jobwait({ job }, 10000)[1]
  if code == -1 then
    vim.fn.jobstop(job)
    return nil, "no answer in 10 s"
  end
  return code, table.concat(out, "\n")
end

function M.check()
  local repodoc = require("repodoc")
  start("repodoc-lsp")
  local cmd = repodoc.config.cmd or {}
  local exe = cmd[1]
  if not exe or vim.fn.executable(exe) == 0 then
    error("server command not found: " .. tostring(exe), {
      "repodoc-lsp is installed from its repository (it is not on the package index), in a virtual environment:",
      "python3 -m venv ~/.venvs/repodoc && ~/.venvs/repodoc/bin/pip install /path/to/repodoc-lsp",
      "(or: ~/.venvs/repodoc/bin/pip install \"git+<repository URL>\"); then put ~/.venvs/repodoc/bin on PATH",
      "or set the command: require('repodoc').setup({ cmd = { vim.fn.expand('~/.venvs/repodoc/bin/repodoc'), 'serve' } })",
      "see :help repodoc-install",
    })
    return
  end
  ok("server command: " .. table.concat(cmd, " "))
  local version_cmd = { exe }
  for i = 2, #cmd do
    if cmd[i] == "serve" then break end
    table.insert(version_cmd, cmd[i])
  end
  table.insert(version_cmd, "--version")
  local code, out = run(version_cmd, repodoc.server_cwd())
  if code == 0 then
    ok("version: " .. vim.trim(out))
  else
    warn("`" .. table.concat(version_cmd, " ") .. "` failed: " .. vim.trim(out))
  end
  ok("client API: " .. tostring(repodoc.api or "setup() not called"))
  ok("settings: " .. vim.inspect(repodoc.config.settings, { newline = " ", indent = "" }))
  for _, problem in ipairs(repodoc.settings_problems()) do warn(problem) end
  local clients = repodoc.clients()
  if #clients > 0 then ok(#clients .. " client(s) running") else warn("no client running (open a Python file)") end
end

return M
