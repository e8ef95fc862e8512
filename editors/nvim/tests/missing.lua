-- The server command is missing: opening two Python files gives one clear message and starts nothing;
-- an unknown setting is reported by setup().
-- Writes a JSON report to OUT_JSON.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h") .. "/harness.lua")
local ROOT = assert(os.getenv("WORKSPACE"))
local FORCE = os.getenv("FORCE_API")
local report = { notifications = {}, errors = {} }
local ok, err = pcall(function()
  local notify = vim.notify
  vim.notify = function(msg, level)
    table.insert(report.notifications, { msg = msg, level = level })
    return notify(msg, level)
  end
  local repodoc = require("repodoc")
  -- a misspelt setting is reported by setup()
  repodoc.setup({ cmd = { "/nonexistent/bin/repodoc", "serve" }, settings = { outputdir = "site" },
                  _force_api = FORCE ~= "" and FORCE or nil })
  report.api = repodoc.api
  vim.cmd("filetype on")
  vim.cmd("edit " .. vim.fn.fnameescape(ROOT .. "/pkg/use.py"))
  vim.cmd("edit " .. vim.fn.fnameescape(ROOT .. "/pkg/core.py"))
  vim.wait(1500)
  report.clients = #repodoc.clients()
  vim.cmd("checkhealth repodoc")
  report.health = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
end)
if not ok then table.insert(report.errors, tostring(err)) end
H.finish(report)
