-- :RepoDoc {generate|open|kw|restart|status}; :RepoDoc! generate overwrites the pages a person
-- edited (each copied to PAGE.orig first). The Lua module is loaded only when a command runs.
if vim.g.loaded_repodoc then
  return
end
vim.g.loaded_repodoc = 1

local subcommands = { "generate", "open", "kw", "restart", "status" }

vim.api.nvim_create_user_command("RepoDoc", function(args)
  require("repodoc").command(args.fargs[1] or "", args)
end, {
  nargs = "?",
  bang = true,
  desc = "repodoc-lsp: generate, open, kw, restart, status (generate!: overwrite edited pages)",
  complete = function(lead)
    return vim.tbl_filter(function(s) return s:sub(1, #lead) == lead end, subcommands)
  end,
})
