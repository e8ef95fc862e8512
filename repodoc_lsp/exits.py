"""The exit codes of the `repodoc` commands (README "The command line")."""

import contextlib
import os
import sys
from collections.abc import Callable
from typing import NoReturn

EXIT_OK, EXIT_STALE, EXIT_USAGE, EXIT_OUTPUT, EXIT_WORKERS, EXIT_BUSY, EXIT_INTERRUPTED = 0, 1, 2, 3, 4, 5, 130
EXIT_BROKEN_PIPE = 141  # the reader of the output went away (`| head`): 128 + SIGPIPE, as a shell reports it


def interrupted(message: str) -> Callable[..., None]:
    """A SIGINT handler that ends the program at once with `message` on one line and exit 130 (a command
    whose work leaves nothing half done at any moment: the writer's journal finishes it next time)."""
    def handler(*_: object) -> None:
        print(f"repodoc: {message}", file=sys.stderr)
        end_now(EXIT_INTERRUPTED)
    return handler


# SIGINT's handler while the program loads, until a command sets its own: Ctrl-C then is a clear line and
# exit 130, not a traceback of whatever module was being imported.
interrupted_early = interrupted("interrupted before any work")


def end_now(code: int) -> NoReturn:
    """End this process at once (`os._exit`: nothing freed object by object, no thread joined),
    leaving behind no more than a normal exit would: standard error flushed, and multiprocessing's
    temporary folder of this process (`pymp-*`, where the fork server's socket was) removed as its
    finaliser at exit would (each run left an empty folder in the system's temporary folder)."""
    with contextlib.suppress(Exception):  # a closed stream
        sys.stderr.flush()
    process = sys.modules.get("multiprocessing.process")
    if process is not None:
        config = process.current_process()._config  # not public: best effort
        tempdir = config.get("tempdir")
        if tempdir:
            import shutil

            shutil.rmtree(tempdir, ignore_errors=True)
    os._exit(code)
