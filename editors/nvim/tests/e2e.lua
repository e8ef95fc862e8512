-- End-to-end: the plugin starts the real server on WORKSPACE, then hover, workspace/symbol,
-- :RepoDoc generate (with $/progress), an edit written with :w, an edited page kept then overwritten
-- with :RepoDoc! generate, :RepoDoc open, :checkhealth.
-- Writes a JSON report to OUT_JSON; exits 0 only if every step worked.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h") .. "/harness.lua")
local ROOT = assert(os.getenv("WORKSPACE"))
local CMD = vim.fn.json_decode(assert(os.getenv("SERVER_CMD_JSON")))
local FORCE = os.getenv("FORCE_API")
local report = { nvim = tostring(vim.version().major .. "." .. vim.version().minor .. "." .. vim.version().patch),
                 ok = false, errors = {}, progress = {}, notifications = {}, server_messages = {} }

local function finish(code) H.finish(report, code) end

local wait = H.wait

local ok, err = pcall(function()
  local notify = vim.notify
  vim.notify = function(msg, level)
    table.insert(report.notifications, msg)
    return notify(msg, level)
  end
  local repodoc = require("repodoc")
  -- every window/showMessage of the server (Neovim's own handler still shows it)
  local default_show = vim.lsp.handlers["window/showMessage"]
  vim.lsp.handlers["window/showMessage"] = function(e, result, ctx, config)
    table.insert(report.server_messages, result and result.message or "?")
    return default_show(e, result, ctx, config)
  end
  local default_progress = vim.lsp.handlers["$/progress"]
  vim.lsp.handlers["$/progress"] = function(e, result, ctx, config)
    table.insert(report.progress, { token = tostring(result.token), kind = result.value.kind,
                                     title = result.value.title, message = result.value.message })
    if default_progress then return default_progress(e, result, ctx, config) end
  end
  -- the README's own setup: no settings (sent as `{}`, never `[]`)
  repodoc.setup({ cmd = CMD, _force_api = FORCE ~= "" and FORCE or nil })
  report.api = repodoc.api
  vim.cmd("filetype on")
  vim.cmd("edit " .. vim.fn.fnameescape(ROOT .. "/pkg/use.py"))
  local bufnr = vim.api.nvim_get_current_buf()
  local client = H.client_of(bufnr)
  report.root_dir = client.config.root_dir

  local function sync(method, params)
    local answers = vim.lsp.buf_request_sync(bufnr, method, params, 30000)
    local answer = answers and answers[client.id]
    assert(answer, method .. ": no answer")
    local e = answer.err or answer.error
    assert(not e, method .. ": " .. vim.inspect(e))
    return answer.result
  end

  -- asked at once after start: the server answers from its first index (issue 16), no retry
  local symbols = sync("workspace/symbol", { query = "Widget" })
  report.symbols = vim.tbl_map(function(s) return s.name end, symbols)
  -- nothing was said at start: no notification, no server message, nothing in :messages
  vim.wait(500)
  report.start_notifications = vim.deepcopy(report.notifications)
  report.start_server_messages = vim.deepcopy(report.server_messages)
  report.start_messages = vim.fn.execute("messages")

  local line = vim.fn.search("make_shape('x')") - 1
  local col = vim.fn.col(".") - 1
  local hover = sync("textDocument/hover", { textDocument = { uri = vim.uri_from_bufnr(bufnr) },
                                             position = { line = line, character = col } })
  report.hover = hover and hover.contents and hover.contents.value or vim.NIL

  -- K shows the hover in a floating window (mapped by the plugin before 0.10, by Neovim after)
  local K = vim.fn.maparg("K", "n", false, true)
  report.k_plugin_mapping = K.buffer == 1 and K.desc == "repodoc: hover"
  vim.cmd("normal K")
  wait(10000, function()
    for _, w in ipairs(vim.api.nvim_list_wins()) do
      if vim.api.nvim_win_get_config(w).relative ~= "" then
        local lines = vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(w), 0, -1, false)
        report.k_hover = table.concat(lines, "\n")
        return true
      end
    end
    return false
  end, "K to show a hover window")
  for _, w in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(w).relative ~= "" then vim.api.nvim_win_close(w, true) end
  end

  local said = #report.notifications
  vim.cmd("RepoDoc generate")
  wait(60000, function() return repodoc.last_summary ~= nil end, ":RepoDoc generate")
  report.summary_written = repodoc.last_summary.written
  report.summary_errors = #(repodoc.last_summary.errors or {})
  report.index_exists = vim.fn.filereadable(ROOT .. "/docs/index.md") == 1
  report.docs_exists = vim.fn.filereadable(ROOT .. "/docs/pkg/use.py_docs.md") == 1
  vim.wait(300) -- anything said late about the run (the progress ends before the answer)
  report.generate_notifications = vim.list_slice(report.notifications, said + 1)

  -- :RepoDoc status: root, files, pages, the last run and its errors
  said = #report.notifications
  vim.cmd("RepoDoc status")
  wait(10000, function() return #report.notifications > said end, ":RepoDoc status")
  report.status = report.notifications[said + 1]

  -- edit and write: the server regenerates the page
  vim.api.nvim_buf_set_lines(bufnr, -1, -1, false, { "", "", "def written_in_nvim():", "    pass" })
  vim.cmd("silent write")
  local kw = ROOT .. "/docs/pkg/use.py_kw.md"
  wait(20000, function()
    return table.concat(vim.fn.readfile(kw), "\n"):find("written_in_nvim", 1, true) ~= nil
  end, "the page regenerated on save")
  report.regenerated = true

  -- a page the person edited: kept by :RepoDoc generate (the message says how to overwrite it),
  -- overwritten by :RepoDoc! generate after a copy to PAGE.orig (issue 13)
  local edited = ROOT .. "/docs/pkg/use.py_kw.md"
  vim.fn.writefile(vim.list_extend(vim.fn.readfile(edited), { "", "my own note" }), edited)
  repodoc.last_summary = nil
  vim.cmd("RepoDoc generate")
  wait(60000, function() return repodoc.last_summary ~= nil end, ":RepoDoc generate with an edited page")
  report.edited_kept = table.concat(vim.fn.readfile(edited), "\n"):find("my own note", 1, true) ~= nil
  report.edited_conflicts = vim.tbl_map(function(c) return c.path end, repodoc.edited_conflicts(repodoc.last_summary))
  report.edited_message = (repodoc.summary_message(repodoc.last_summary))
  repodoc.last_summary = nil
  vim.cmd("RepoDoc! generate")
  wait(60000, function() return repodoc.last_summary ~= nil end, ":RepoDoc! generate")
  report.forced_conflicts = #repodoc.edited_conflicts(repodoc.last_summary)
  report.forced_page_clean = table.concat(vim.fn.readfile(edited), "\n"):find("my own note", 1, true) == nil
  report.forced_orig = vim.fn.filereadable(edited .. ".orig") == 1
    and table.concat(vim.fn.readfile(edited .. ".orig"), "\n"):find("my own note", 1, true) ~= nil

  vim.cmd("RepoDoc open")
  wait(10000, function() return vim.api.nvim_buf_get_name(0):find("use.py_docs.md", 1, true) ~= nil end,
       ":RepoDoc open")
  report.opened = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(0), ":t")
  report.windows = #vim.api.nvim_tabpage_list_wins(0)
  vim.cmd("close")

  vim.cmd("checkhealth repodoc")
  report.health = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")

  -- the help ships its tags
  vim.cmd("help repodoc-settings")
  report.help = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(0), ":t")
  report.help_line = vim.api.nvim_get_current_line()
  report.ok = true
end)
if not ok then table.insert(report.errors, tostring(err)) end
finish(ok and 0 or 1)
