-- repodoc-lsp client for Neovim 0.7 and later.
--   0.11+      vim.lsp.config + vim.lsp.enable (lsp/repodoc.lua holds the defaults)
--   0.8-0.10   vim.lsp.start on FileType (reuses a client per root itself)
--   0.7        vim.lsp.start_client + vim.lsp.buf_attach_client, one client per root
local M = {}

M.defaults = {
  cmd = { "repodoc", "serve" },
  filetypes = { "python", "markdown" },
  root_markers = { "pyproject.toml", "setup.py", "setup.cfg", ".git" },
  -- the `repodoc` settings of the server (README: outputDir, regenerateOnSave, include, exclude,
  -- maxWorkspaceSymbols, embedSourceMaxBytes, pythonPath, projectName)
  settings = {},
  notify_progress = true, -- a message when generation ends
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

--- The workspace root of a buffer: the nearest folder with a root marker, else the file's folder.
function M.root_dir(bufnr, markers)
  local fname = vim.api.nvim_buf_get_name(bufnr)
  local dir = vim.fn.fnamemodify(fname, ":p:h")
  local here = dir
  while dir and dir ~= "" do
    for _, marker in ipairs(markers or M.config.root_markers) do
      if vim.loop.fs_stat(dir .. "/" .. marker) then return dir end
    end
    local parent = vim.fn.fnamemodify(dir, ":h")
    if parent == dir then break end
    dir = parent
  end
  return here
end

local function server_settings()
  return { repodoc = M.config.settings }
end

local function client_config(root)
  return {
    name = "repodoc",
    cmd = M.config.cmd,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
    init_options = M.config.settings,
    settings = server_settings(),
    handlers = M.handlers(),
  }
end

local function start_legacy(bufnr)
  if vim.api.nvim_buf_get_name(bufnr) == "" or vim.bo[bufnr].buftype ~= "" then return end
  local root = M.root_dir(bufnr)
  local conf = client_config(root)
  if M.api == "start" then
    vim.lsp.start(conf, { bufnr = bufnr })
    return
  end
  local id = clients_by_root[root]
  if not id or vim.lsp.client_is_stopped(id) then
    id = vim.lsp.start_client(conf)
    clients_by_root[root] = id
  end
  if id then vim.lsp.buf_attach_client(bufnr, id) end
end

--- Handlers: $/progress still reaches Neovim's own handler (vim.lsp.status(), LspProgress);
--- when a generation ends, a message with its summary.
function M.handlers()
  local default = vim.lsp.handlers["$/progress"]
  return {
    ["$/progress"] = function(err, result, ctx, config)
      if default then default(err, result, ctx, config) end
      local value = result and result.value or {}
      if M.config.notify_progress and value.kind == "end" and tostring(result.token):find("generating", 1, true) then
        notify("documentation " .. (value.message or "done"))
      end
    end,
  }
end

function M.setup(opts)
  M.config = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts or {})
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
      root_dir = function(bufnr, on_dir) on_dir(M.root_dir(bufnr)) end,
      init_options = M.config.settings,
      settings = server_settings(),
      handlers = M.handlers(),
    })
    vim.lsp.enable("repodoc")
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

local function request(client, bufnr, command, arguments, callback)
  local params = { command = command, arguments = arguments }
  M.client_request(client, "workspace/executeCommand", params, function(err, result)
    if err then
      notify(command .. " failed: " .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      return
    end
    callback(result)
  end, bufnr)
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

function M.command(sub)
  if sub == "generate" then
    local client, bufnr = first_client()
    if not client then return notify("no repodoc server is running", vim.log.levels.WARN) end
    request(client, bufnr, "repodoc.generate", nil, function(summary)
      M.last_summary = summary
      notify(string.format("%d pages written, %d unchanged, %d removed, %d conflicts (%.1f s)",
        summary.written or 0, summary.unchanged or 0, summary.removed or 0,
        #(summary.conflicts or {}), summary.seconds or 0))
    end)
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
    local names = {}
    for _, c in ipairs(M.clients()) do table.insert(names, c.id .. ": " .. (c.config.root_dir or "?")) end
    notify(#names > 0 and table.concat(names, ", ") or "not running")
  else
    notify("unknown sub-command '" .. sub .. "' (generate, open, kw, restart, status)", vim.log.levels.ERROR)
  end
end

return M
