"""An unreadable file and folder. Tests run as root here, and root reads a chmod 000 file anyway (and the venv is not
open to an unprivileged user), so unreadability is simulated: the real CLI runs with every way of opening
`secret.py` and of listing the folder `private` raising PermissionError, as the kernel would for
another user."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from helpers import broken_links, make_workspace

_RUN = """
import builtins, io, os, runpy, sys
def deny(path, name="secret.py"):
    if str(path).rstrip("/").endswith(name):
        raise PermissionError(13, "Permission denied", str(path))
_open, _io_open, _os_open, _scandir = builtins.open, io.open, os.open, os.scandir
builtins.open = lambda f, *a, **k: (deny(f), _open(f, *a, **k))[1]
io.open = lambda f, *a, **k: (deny(f), _io_open(f, *a, **k))[1]
os.open = lambda f, *a, **k: (deny(f), _os_open(f, *a, **k))[1]
os.scandir = lambda f=".": (deny(f, "private"), _scandir(f))[1]
sys.argv = ["repodoc", *sys.argv[1:]]
runpy.run_module("repodoc_lsp", run_name="__main__", alter_sys=True)
"""


def test_unreadable_file_and_folder_are_skipped_with_reason(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", {"ok.py": "def fine():\n    pass\n",
                                            "secret.py": "def hidden():\n    pass\n",
                                            "private/inner.py": "def inside():\n    pass\n"})
    proc = subprocess.run([sys.executable, "-c", _RUN, "generate", str(root), "--json"],
                          env={**os.environ, "REPODOC_CACHE_DIR": str(tmp_path / "cache")}, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    skipped = json.dumps(summary["skipped"])
    assert "secret.py" in skipped and "ermission" in skipped, summary
    assert {"path": "private", "reason": "unreadable folder: Permission denied"} in summary["skipped"], summary
    assert (root / "docs" / "ok.py_kw.md").is_file()
    assert not (root / "docs" / "secret.py_kw.md").exists()
    assert not (root / "docs" / "private").exists()
    assert broken_links(root / "docs") == []
