-- repodoc-lsp client for Neovim 0.7 and later.
--   0.11+      vim.lsp.config + vim.lsp.enable (lsp/repodoc.lua holds the defaults)
--   0.8-0.10   vim.lsp.start on FileType (reuses a client per root itself)
--   0.7        vim.lsp.start_client + vim.lsp.buf_attach_client, one client per root
local M = {}

M.defaults = {
  cmd = { "repodoc", "serve" },
  filetypes = { "python", "markdown", "rst", "text", "c", "cpp", "cuda", "javascript", "javascriptreact", "typescript",
    "typescriptreact", "go", "rust", "java" },
  root_markers = { "pyproject.toml", "setup.py", "setup.cfg", ".git" },
  -- the `repodoc` settings of the server (:help repodoc-settings; lua/repodoc/fields.lua lists them)
  settings = {},
  notify_progress = true, -- a message when a generation not asked by :RepoDoc generate ends
  _force_api = nil, -- tests only: "config" | "start" | "start_client"
}

M.config = vim.deepcopy(M.defaults)
M.api = nil
local clients_by_root = {} -- 0.7 path

local modern = vim.fn.has("nvim-0.11") == 1

--- client:request / client:stop on 0.11+ (the dot forms are deprecated there); dot forms before
--- (on 0.7 `client:stop()` would pass the client as `force` and kill the server).
function M.client_request(client, method, params, handler, bufnr)
  if modern then return client:request(method, params, handler, bufnr) end
  return client.request(method, params, handler, bufnr)
end

function M.client_stop(client)
  if modern then return client:stop() end
  return client.stop()
end

local function notify(msg, level)
  vim.notify("RepoDoc: " .. msg, level or vim.log.levels.INFO)
end

--- `n` and `word`, or its plural (`words`, else `word .. "s"`): "1 page", "3 pages".
function M.plural(n, word, words)
  return tostring(n) .. " " .. (n == 1 and word or (words or word .. "s"))
end

-- :RepoDoc generate requests in flight, per client id: their summary is the run's one message, so
-- the end of their progress says nothing
local generating = {}

local beside = {} -- ids of repodoc clients that share a Python buffer with another hover server

--- The settings as sent: an empty table as a JSON object (`{}`), never as `[]`. Unless the person set
--- `hover`, a client beside another Python language server (Pylance, basedpyright,
--- jedi-language-server...) gets `hover = "extras"`: one signature and docstring in the hover, not two.
function M.settings_value(client_id)
  local s = M.config.settings or {}
  if client_id and beside[client_id] and s.hover == nil then
    s = vim.tbl_extend("force", s, { hover = "extras" })
  end
  if next(s) == nil then return vim.empty_dict() end
  return s
end

function M.client_notify(client, method, params)
  if modern then return client:notify(method, params) end
  return client.notify(method, params)
end

--- Another client with hover attached to a Python buffer: switch that buffer's repodoc clients to
--- `hover = "extras"` (once each; the server applies it without indexing again).
function M.check_beside(bufnr)
  if (M.config.settings or {}).hover ~= nil or vim.bo[bufnr].filetype ~= "python" then return end
  local others = false
  local all = vim.lsp.get_clients and vim.lsp.get_clients({ bufnr = bufnr }) or vim.lsp.buf_get_clients(bufnr)
  for _, c in pairs(all) do
    if c.name ~= "repodoc" and (c.server_capabilities or c.resolved_capabilities or {}).hoverProvider then
      others = true
    end
  end
  if not others then return end
  for _, client in ipairs(M.clients(bufnr)) do
    if not beside[client.id] and client.initialized ~= false then
      beside[client.id] = true
      M.client_notify(client, "workspace/didChangeConfiguration",
        { settings = { repodoc = M.settings_value(client.id) } })
    end
  end
end

--- Problems with setup()'s `settings`: unknown keys (the server would refuse them).
function M.settings_problems()
  local known, names = {}, {}
  for _, f in ipairs(require("repodoc.fields")) do
    known[f.key] = true
    table.insert(names, f.key)
  end
  local problems = {}
  for key in pairs(M.config.settings or {}) do
    if not known[key] then
      table.insert(problems, "unknown setting '" .. tostring(key) .. "' (known: " .. table.concat(names, ", ") .. ")")
    end
  end
  table.sort(problems)
  return problems
end

--- A working folder for the server outside every workspace (Neovim's cache folder): nothing of a
--- checkout is found through it.
function M.server_cwd()
  local dir = vim.fn.stdpath("cache")
  if vim.fn.isdirectory(dir) == 0 then vim.fn.mkdir(dir, "p") end
  return dir
end

local missing_reported = false

--- Is the server command there? If not, one short message (once per session) pointing at the fix.
function M.command_ok()
  local exe = (M.config.cmd or {})[1]
  if exe and vim.fn.executable(exe) == 1 then return true end
  if not missing_reported then
    missing_reported = true
    -- scheduled: an error message inside the FileType autocommand would abort the :edit that opened the file
    vim.schedule(function()
      notify("server command '" .. tostring(exe) .. "' not found: see :help repodoc-install", vim.log.levels.ERROR)
    end)
  end
  return false
end

--- Before 0.10 Neovim does not map K to hover: map it in the buffers the client attaches to (unless
--- the buffer has its own K). Before 0.8 there is no LspAttach event: another server that attached
--- first is seen here, one that attaches later when K is pressed.
local function on_attach(_, bufnr)
  M.check_beside(bufnr)
  if vim.fn.has("nvim-0.10") == 1 then return end
  if vim.fn.maparg("K", "n", false, true).buffer == 1 then return end
  vim.keymap.set("n", "K", function()
    M.check_beside(bufnr)
    vim.lsp.buf.hover()
  end, { buffer = bufnr, desc = "repodoc: hover" })
end

--- The repodoc clients (of a buffer, or all of them).
function M.clients(bufnr)
  local all
  if vim.lsp.get_clients then
    all = vim.lsp.get_clients({ name = "repodoc", bufnr = bufnr })
  else
    all = {}
    local source = bufnr and vim.lsp.buf_get_clients(bufnr) or vim.lsp.get_active_clients()
    for _, c in pairs(source) do
      if c.name == "repodoc" then table.insert(all, c) end
    end
  end
  return all
end

-- What repodoc writes in an output folder (its manifest), and what earlier versions wrote (uncompressed)
local MANIFESTS = { ".repodoc-manifest.json.gz", ".repodoc-manifest.json" }

local function exists(path) return vim.loop.fs_stat(path) ~= nil end

local function holds_tree(dir)
  for _, name in ipairs(MANIFESTS) do
    if exists(dir .. "/" .. name) then return true end
  end
  return false
end

--- The workspace root of a buffer: the nearest folder above it with a root marker, or holding a
--- docs tree (its output folder's manifest). An output folder, or a folder inside one, is never a
--- root (its project above it is). nil when there is none: the file gets hover only, and no tree
--- is written beside a stray file.
function M.root_dir(bufnr, markers)
  local fname = vim.api.nvim_buf_get_name(bufnr)
  local dir = vim.fn.fnamemodify(fname, ":p:h")
  local chosen = (M.config.settings or {}).outputDir
  -- unset: the server writes to docs/, or to repodoc-docs/ beside a project's own docs/
  local outputs = chosen and { chosen } or { "docs", "repodoc-docs" }
  local beside_tree -- the folder holding an output folder the file is in
  while dir and dir ~= "" do
    local parent = vim.fn.fnamemodify(dir, ":h")
    if holds_tree(dir) then
      beside_tree = beside_tree or parent
    else
      for _, marker in ipairs(markers or M.config.root_markers) do
        if exists(dir .. "/" .. marker) then return dir end
      end
      for _, output in ipairs(outputs) do
        if holds_tree(dir .. "/" .. output) then return dir end
      end
    end
    if parent == dir then break end
    dir = parent
  end
  return beside_tree
end

local function server_settings()
  return { repodoc = M.settings_value() }
end

local function client_config(root)
  return {
    name = "repodoc",
    cmd = M.config.cmd,
    cmd_cwd = M.server_cwd(),
    root_dir = root,
    workspace_folders = root and { { uri = vim.uri_from_fname(root), name = root } } or nil,
    init_options = M.settings_value(),
    settings = server_settings(),
    handlers = M.handlers(),
    on_attach = on_attach,
  }
end

local function start_legacy(bufnr)
  if vim.api.nvim_buf_get_name(bufnr) == "" or vim.bo[bufnr].buftype ~= "" then return end
  if not M.command_ok() then return end
  local root = M.root_dir(bufnr)
  local conf = client_config(root)
  if M.api == "start" then
    vim.lsp.start(conf, { bufnr = bufnr })
    return
  end
  local key = root or "" -- one client for every file without a root (hover only)
  local id = clients_by_root[key]
  if not id or vim.lsp.client_is_stopped(id) then
    id = vim.lsp.start_client(conf)
    clients_by_root[key] = id
  end
  if id then vim.lsp.buf_attach_client(bufnr, id) end
end

--- Handlers: $/progress still reaches Neovim's own handler (vim.lsp.status(), LspProgress);
--- when a generation ends, a message with its summary. workspace/configuration is answered with the
--- settings as an object, whatever Neovim's merging made of an empty table.
function M.handlers()
  local default = vim.lsp.handlers["$/progress"]
  local default_configuration = vim.lsp.handlers["workspace/configuration"]
  local default_show = vim.lsp.handlers["window/showMessage"]
  return {
    -- the server's word on pages a :RepoDoc generate could not write: its summary names them
    ["window/showMessage"] = function(err, result, ctx, config)
      if (generating[ctx.client_id] or 0) > 0 and tostring((result or {}).message):find("^repodoc generate: ") then
        return vim.NIL
      end
      return default_show(err, result, ctx, config)
    end,
    ["workspace/configuration"] = function(err, result, ctx, config)
      local answers = {}
      for i, item in ipairs(result and result.items or {}) do
        if item.section == "repodoc" then
          answers[i] = M.settings_value(ctx.client_id)
        else
          local other = default_configuration(err, { items = { item } }, ctx, config)
          answers[i] = type(other) == "table" and other[1] or vim.NIL
        end
      end
      return answers
    end,
    ["$/progress"] = function(err, result, ctx, config)
      if default then default(err, result, ctx, config) end
      local value = result and result.value or {}
      if M.config.notify_progress and value.kind == "end" and tostring(result.token):find("generating", 1, true)
        and (generating[ctx.client_id] or 0) == 0 then -- a run asked elsewhere (a code lens, another plugin)
        notify("documentation " .. (value.message or "done"))
      end
    end,
  }
end

function M.setup(opts)
  M.config = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts or {})
  if vim.fn.exists("##LspAttach") == 1 then -- 0.8+: another server attaching after repodoc
    vim.api.nvim_create_autocmd("LspAttach", {
      group = vim.api.nvim_create_augroup("repodoc_beside", { clear = true }),
      callback = function(args) M.check_beside(args.buf) end,
    })
  end
  for _, problem in ipairs(M.settings_problems()) do notify(problem, vim.log.levels.WARN) end
  M.api = M.config._force_api
    or ((vim.lsp.config and vim.lsp.enable) and "config")
    or (vim.lsp.start and "start")
    or "start_client"
  if M.api == "config" then
    vim.lsp.config("repodoc", {
      cmd = M.config.cmd,
      filetypes = M.config.filetypes,
      root_markers = M.config.root_markers,
      -- a file outside any marked project still gets a root (its folder), so workspace features work
      root_dir = function(bufnr, on_dir)
        if M.command_ok() then on_dir(M.root_dir(bufnr)) end
      end,
      cmd_cwd = M.server_cwd(),
      init_options = M.settings_value(),
      settings = server_settings(),
      handlers = M.handlers(),
    })
    vim.lsp.enable("repodoc")
    -- vim.lsp.enable skips a missing command without a word: say it once
    vim.api.nvim_create_autocmd("FileType", {
      group = vim.api.nvim_create_augroup("repodoc_lsp", { clear = true }),
      pattern = M.config.filetypes,
      callback = function(args)
        if vim.bo[args.buf].buftype == "" and vim.api.nvim_buf_get_name(args.buf) ~= "" then M.command_ok() end
      end,
    })
  else
    local group = vim.api.nvim_create_augroup("repodoc_lsp", { clear = true })
    vim.api.nvim_create_autocmd("FileType", {
      group = group,
      pattern = M.config.filetypes,
      callback = function(args) start_legacy(args.buf) end,
    })
  end
end

local function first_client()
  local bufnr = vim.api.nvim_get_current_buf()
  return M.clients(bufnr)[1] or M.clients()[1], bufnr
end

local function request(client, bufnr, command, arguments, callback, answered)
  local params = { command = command, arguments = arguments }
  local sent = M.client_request(client, "workspace/executeCommand", params, function(err, result)
    if answered then answered() end
    if err then
      notify(command .. " failed: " .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      return
    end
    callback(result)
  end, bufnr)
  if not sent and answered then answered() end -- the client is stopping: no answer will come
end

local function open_page(which)
  local client, bufnr = first_client()
  if not client then return notify("no repodoc server for this buffer", vim.log.levels.WARN) end
  local uri = vim.uri_from_bufnr(bufnr)
  request(client, bufnr, "repodoc.pagesFor", { uri }, function(pages)
    local path = pages[which]
    if vim.fn.filereadable(path) == 0 then
      notify(vim.fn.fnamemodify(path, ":~:.") .. " does not exist yet: run :RepoDoc generate", vim.log.levels.WARN)
      return
    end
    vim.cmd("split " .. vim.fn.fnameescape(path))
  end)
end

--- The conflicts of a summary that are generated pages a person edited (kept until forced).
function M.edited_conflicts(summary)
  return vim.tbl_filter(function(c)
    local reason = tostring(c.reason or "")
    return reason:find("changed since repodoc wrote it", 1, true) ~= nil
  end, summary.conflicts or {})
end

--- The message of a generation's summary, and its level (an error when pages could not be written).
function M.summary_message(summary)
  local edited = #M.edited_conflicts(summary)
  local message = string.format("%s written, %d unchanged, %d removed, %s (%.1f s)",
    M.plural(summary.written or 0, "page"), summary.unchanged or 0, summary.removed or 0,
    M.plural(#(summary.conflicts or {}) - edited, "conflict"), summary.seconds or 0)
  if edited > 0 then
    message = message .. string.format("\n%s you edited %s kept: :RepoDoc! generate overwrites %s "
      .. "after copying each to PAGE.orig", M.plural(edited, "page"), edited == 1 and "was" or "were",
      edited == 1 and "it" or "them")
  end
  local errors = summary.errors or {}
  if #errors == 0 then return message, edited > 0 and vim.log.levels.WARN or vim.log.levels.INFO end
  local lines = { message, M.plural(#errors, "page") .. " could not be written:" }
  for i, e in ipairs(errors) do
    if i > 5 then
      table.insert(lines, "  ... and " .. (#errors - 5) .. " more")
      break
    end
    table.insert(lines, "  " .. tostring(e.path) .. ": " .. tostring(e.reason))
  end
  return table.concat(lines, "\n"), vim.log.levels.ERROR
end

--- The lines of :RepoDoc status for one server's `repodoc.status` answer.
function M.status_message(result, client)
  local roots = (result or {}).roots or {}
  if #roots == 0 then
    return "server " .. client.id .. ": no workspace folder (hover only for its files)"
  end
  local lines = {}
  for _, r in ipairs(roots) do
    local out = r.out:sub(1, #r.root + 1) == r.root .. "/" and r.out:sub(#r.root + 2) or r.out
    table.insert(lines, r.root)
    table.insert(lines, "  files: " .. r.files .. " indexed" .. (r.skipped > 0 and (", " .. r.skipped .. " skipped") or "")
      .. (r.indexed and "" or " (indexing)"))
    table.insert(lines, "  pages: " .. r.pages .. " in " .. out)
    local run = r.lastRun
    if run == nil or run == vim.NIL then
      table.insert(lines, "  last run: none since the server started")
    elseif run.failure ~= "" then
      table.insert(lines, "  last run: " .. run.kind .. " at " .. run.when .. ": failed")
    else
      table.insert(lines, string.format("  last run: %s at %s: %s written, %d unchanged, %d removed, %s, %s (%.1f s)%s",
        run.kind, run.when, M.plural(run.written, "page"), run.unchanged, run.removed,
        M.plural(run.conflicts, "conflict"), M.plural(run.errors, "error"), run.seconds,
        run.cancelled and ", cancelled" or ""))
    end
    if #r.errors == 0 then
      table.insert(lines, "  errors: none")
    else
      table.insert(lines, "  errors:")
      for i, e in ipairs(r.errors) do
        if i > 5 then
          table.insert(lines, "    ... and " .. (#r.errors - 5) .. " more")
          break
        end
        table.insert(lines, "    " .. e)
      end
    end
    table.insert(lines, "  hover: " .. (r.hoverReady and "ready" or "warming up"))
  end
  return table.concat(lines, "\n")
end

function M.command(sub, opts)
  local force = opts ~= nil and opts.bang == true
  if force and sub ~= "generate" then
    return notify(":RepoDoc! is for generate only (it overwrites the pages you edited)", vim.log.levels.ERROR)
  end
  if sub == "generate" then
    local client, bufnr = first_client()
    if not client then return notify("no repodoc server is running", vim.log.levels.WARN) end
    generating[client.id] = (generating[client.id] or 0) + 1
    request(client, bufnr, "repodoc.generate", force and { { force = true } } or nil, function(summary)
      M.last_summary = summary
      local message, level = M.summary_message(summary)
      notify(message, level)
    end, function() generating[client.id] = generating[client.id] - 1 end)
  elseif sub == "open" then
    open_page("docs")
  elseif sub == "kw" then
    open_page("kw")
  elseif sub == "restart" then
    local clients = M.clients()
    local buffers = {}
    for _, c in ipairs(clients) do
      for b in pairs(c.attached_buffers or {}) do buffers[b] = true end
      M.client_stop(c)
    end
    clients_by_root = {}
    vim.defer_fn(function()
      for b in pairs(buffers) do
        if vim.api.nvim_buf_is_valid(b) then
          vim.api.nvim_exec_autocmds("FileType", { buffer = b })
        end
      end
    end, 500)
  elseif sub == "status" then
    local clients = M.clients()
    if #clients == 0 then return notify("not running") end
    for _, client in ipairs(clients) do
      request(client, nil, "repodoc.status", nil, function(result)
        M.last_status = result
        notify(M.status_message(result, client))
      end)
    end
  else
    notify("unknown sub-command '" .. sub .. "' (generate, open, kw, restart, status)", vim.log.levels.ERROR)
  end
end

return M
