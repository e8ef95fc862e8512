"""The exit codes of the `repodoc` commands (README "The command line")."""

import os
import sys

EXIT_OK, EXIT_STALE, EXIT_USAGE, EXIT_OUTPUT, EXIT_WORKERS, EXIT_BUSY, EXIT_INTERRUPTED = 0, 1, 2, 3, 4, 5, 130
EXIT_BROKEN_PIPE = 141  # the reader of the output went away (`| head`): 128 + SIGPIPE, as a shell reports it


def interrupted_early(*_: object) -> None:
    """SIGINT's handler while the program loads, until a command sets its own: Ctrl-C then is a
    clear line and exit 130, not a traceback of whatever module was being imported."""
    print("repodoc: interrupted before any work", file=sys.stderr)
    os._exit(EXIT_INTERRUPTED)
