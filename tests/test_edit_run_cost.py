"""What `repodoc generate` after a one-file edit does not do (issue 37: such a run costs a fraction of reading
and parsing every file): it starts no worker process and so does not load multiprocessing.
Timings: bench/bench_incremental.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from helpers import make_workspace
from test_since_last_run import FILES, _cli

# In a fresh interpreter: `repodoc generate` as the program runs it, then the modules it loaded.
AFTER_EDIT = """
import json, sys
from repodoc_lsp import cli
code = cli.main(["generate", sys.argv[1], "--cache-dir", sys.argv[2], "--quiet"])
print(json.dumps([code, sorted(m for m in sys.modules if m.partition(".")[0] == "multiprocessing"
                               or m in ("concurrent.futures.process", "ctypes"))]))
"""


def test_an_edit_run_loads_no_multiprocessing(tmp_path: Path) -> None:
    root, cache = make_workspace(tmp_path / "ws", FILES), tmp_path / "cache"
    _cli("generate", str(root), "--cache-dir", str(cache), "--quiet")
    (root / "pkg/leaf.py").write_text("def alone():\n    return 2\n")
    done = subprocess.run([sys.executable, "-c", AFTER_EDIT, str(root), str(cache)], capture_output=True,
                          text=True, check=True, timeout=120)
    code, loaded = json.loads(done.stdout.splitlines()[-1])
    assert code == 0 and loaded == [], done.stderr
    assert "return 2" in (root / "docs/pkg/leaf.py_docs.md").read_text()
