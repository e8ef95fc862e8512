-- Hermetic init for the headless tests: only this plugin on 'runtimepath'.
vim.opt.swapfile = false
vim.opt.shadafile = "NONE"
vim.opt.more = false
local here = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h")
vim.opt.runtimepath:prepend(vim.fn.fnamemodify(here, ":h"))
vim.cmd("runtime plugin/repodoc.lua")
vim.lsp.set_log_level("WARN")
