-- Stale references: a README naming a renamed class shows a `repodoc` Warning diagnostic, and the
-- quick fix (the editor's own code-action flow, vim.ui.select answered with the first action)
-- replaces the old name with the new one; saved, the diagnostic goes. Writes a JSON report to OUT_JSON.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h") .. "/harness.lua")
local ROOT = assert(os.getenv("WORKSPACE"))
local CMD = vim.fn.json_decode(assert(os.getenv("SERVER_CMD_JSON")))
local FORCE = os.getenv("FORCE_API")
local report = { errors = {} }

local function ours(bufnr)
  local found = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    if d.source == "repodoc" then table.insert(found, d) end
  end
  return found
end

local ok, err = pcall(function()
  local repodoc = require("repodoc")
  repodoc.setup({ cmd = CMD, _force_api = FORCE ~= "" and FORCE or nil })
  vim.cmd("filetype on")
  vim.cmd("edit " .. vim.fn.fnameescape(ROOT .. "/README.md"))
  local bufnr = vim.api.nvim_get_current_buf()
  H.client_of(bufnr)
  H.wait(60000, function() return #ours(bufnr) > 0 end, "a repodoc diagnostic in README.md")
  local d = ours(bufnr)[1]
  report.count = #ours(bufnr)
  report.severity = d.severity == vim.diagnostic.severity.WARN and "Warning" or tostring(d.severity)
  report.message, report.lnum, report.col = d.message, d.lnum, d.col

  vim.api.nvim_win_set_cursor(0, { d.lnum + 1, d.col })
  vim.ui.select = function(items, _, on_choice)  -- the person picks the first action (0.8+: applied
    -- without asking when it is the only one)
    report.offered = #items
    on_choice(items[1], 1)
  end
  if vim.fn.has("nvim-0.8") == 1 then
    vim.lsp.buf.code_action({ apply = true })
  else
    vim.lsp.buf.code_action()
  end
  H.wait(10000, function()
    return vim.api.nvim_buf_get_lines(bufnr, d.lnum, d.lnum + 1, false)[1]:find("pkg.gizmo.Gizmos", 1, true) ~= nil
  end, "the quick fix to replace the name")
  report.line = vim.api.nvim_buf_get_lines(bufnr, d.lnum, d.lnum + 1, false)[1]
  vim.cmd("silent write")
  H.wait(20000, function() return #ours(bufnr) == 0 end, "the diagnostic to go once fixed")
  report.after = #ours(bufnr)
end)
if not ok then table.insert(report.errors, tostring(err)) end
H.finish(report)
