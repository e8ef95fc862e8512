"""The whole tree for a small sample workspace, compared with files checked in.

Refresh after an intended change of the output: REPODOC_UPDATE_GOLDEN=1 python -m pytest tests/test_golden.py
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from helpers import REPO, broken_links, run_cli

from repodoc_lsp.output.manifest import MANIFEST

SAMPLE = REPO / "tests" / "golden" / "sample"
EXPECTED = REPO / "tests" / "golden" / "expected"


def _tree(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): p.read_text(encoding="utf-8")
            for p in sorted(folder.rglob("*")) if p.is_file() and p.name != MANIFEST}


def test_sample_tree_matches_golden_files(tmp_path: Path, cache_env: dict[str, str]) -> None:
    root = tmp_path / "sample"
    shutil.copytree(SAMPLE, root)
    proc = run_cli("generate", str(root), env=cache_env)
    assert proc.returncode == 0, proc.stderr
    produced = _tree(root / "docs")
    if os.environ.get("REPODOC_UPDATE_GOLDEN"):
        shutil.rmtree(EXPECTED, ignore_errors=True)
        shutil.copytree(root / "docs", EXPECTED, ignore=shutil.ignore_patterns(MANIFEST))
    expected = _tree(EXPECTED)
    assert sorted(produced) == sorted(expected)
    for name, text in expected.items():
        assert produced[name] == text, f"{name} differs from the golden file"
    assert broken_links(root / "docs") == []
