"""Files of the same bytes read by different analysers keep their own facts in the analysis cache:
a warm run writes the tree a cold run writes."""

from __future__ import annotations

import json
import os
from pathlib import Path

from helpers import cli_here, make_workspace

FILES = {"pkg/__init__.py": "", "pkg/py.typed": "", "pkg/mod.py": "x = 1\n", "c/a.c": "", "c/a.h": ""}


def _tree(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*.md")}


def test_empty_files_of_other_languages_keep_their_own_facts(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", FILES)
    env = {**os.environ, "REPODOC_CACHE_DIR": str(tmp_path / "cache")}
    trees, cached = [], []
    for out in ("cold", "warm"):  # the second run finds every file's facts in the cache
        proc = cli_here("generate", str(root), "--out", str(tmp_path / out), "--json", env=env)
        assert proc.returncode == 0, proc.stderr
        trees.append(_tree(tmp_path / out))
        cached.append(json.loads(proc.stdout)["cached"])
    assert cached == [0, 5] and trees[0] == trees[1]
    index = trees[1]["pkg/index.md"].decode()  # empty files have no pages: a line of their folder's index
    assert "- `__init__.py` (`.py` file, 0 lines, 0 bytes): Empty: makes its folder a regular package." in index
    assert "- `py.typed` (marker file, 0 lines, 0 bytes): PEP 561 marker" in index  # text, not Python
    assert not any(page.endswith(("__init__.py_docs.md", "py.typed_docs.md", "a.c_docs.md")) for page in trees[1])
