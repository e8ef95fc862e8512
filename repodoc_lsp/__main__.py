import os
import sys
from pathlib import Path

# `python -m` puts the working folder first on sys.path; started inside a workspace that has a
# `types.py` or a `signal/` (large projects have both), the standard library would be shadowed. Unless
# this package is itself imported from the working folder (a source checkout), drop it.
_here = Path(__file__).resolve().parent.parent
if _here != Path.cwd().resolve():
    sys.path[:] = [p for p in sys.path if p not in ("", os.getcwd())]

import signal  # noqa: E402  (not before: the working folder may hold a `signal.py`)

from repodoc_lsp.exits import interrupted_early  # noqa: E402

signal.signal(signal.SIGINT, interrupted_early)  # Ctrl-C while the modules below load
from repodoc_lsp.cli import main  # noqa: E402

raise SystemExit(main())
