"""The exit codes of the `repodoc` commands (README "The command line")."""

EXIT_OK, EXIT_STALE, EXIT_USAGE, EXIT_OUTPUT, EXIT_WORKERS, EXIT_BUSY, EXIT_INTERRUPTED = 0, 1, 2, 3, 4, 5, 130
EXIT_BROKEN_PIPE = 141  # the reader of the output went away (`| head`): 128 + SIGPIPE, as a shell reports it
