-- repodoc-lsp for Neovim 0.11+: `vim.lsp.enable("repodoc")` picks this up from 'runtimepath'.
-- Settings are sent as initializationOptions and answered to workspace/configuration.
return {
  cmd = { "repodoc", "serve" },
  filetypes = { "python", "markdown", "rst", "text", "c", "cpp", "cuda", "javascript", "javascriptreact", "typescript",
    "typescriptreact", "go", "rust", "java" },
  root_markers = { "pyproject.toml", "setup.py", "setup.cfg", ".git" },
  settings = { repodoc = vim.empty_dict() },
  init_options = vim.empty_dict(),
}
