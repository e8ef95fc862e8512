"""Preloaded by the fork server that starts the language server's analysis workers (see
`runtime.Runtime.context`), and imported nowhere else: the fork server ends when the process that
started it does, even one that was killed.

CPython hands the fork server's "alive" pipe to every worker it starts, so while a pool's
workers lived the fork server never saw its parent go, and the workers, which die with the
fork server (`pool.watch_parent`), waited for work for ever: a server killed while it
indexed left both behind. Polled (once a second), not PR_SET_PDEATHSIG: that fires when the
parent's thread that started the fork server ends, and the server starts it from a root's
thread, which ends when the root closes.
"""

from __future__ import annotations

import os
import threading

from repodoc_lsp.pipeline.pool import PARENT_VARIABLE, poll_parent

# The process that started the fork server names itself (`runtime._fork_server`): when it
# was killed while this module was being imported (the CLI, a second after its render workers were
# asked for), the parent seen here is already init, and a worker holding the "alive" pipe kept both
# for ever.
_parent = int(os.environ.get(PARENT_VARIABLE, "") or os.getppid())
threading.Thread(target=poll_parent, args=(_parent,), name="repodoc-watch-parent", daemon=True).start()
