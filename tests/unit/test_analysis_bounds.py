"""Each file's analysis is bounded: brackets nested past Python's own limit are a skip with its reason
before parso reads them, and a file's analysis past its CPU deadline is a skip; the run goes on."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from helpers import make_workspace, run_cli

from repodoc_lsp.analysis.python import MAX_NESTING, analyse_python, nesting_depth
from repodoc_lsp.store import facts


def test_nesting_is_counted_outside_strings_and_comments() -> None:
    assert nesting_depth("x = [1, (2, {3})]\n") == 3
    assert nesting_depth('s = "((((" + \'[[\' # {{{{\n') == 0
    assert nesting_depth("d = '''\n(((\n'''\nf(\n") == 1
    assert nesting_depth("]]] ((") == 2  # a closing bracket never goes below zero
    deep_string = 's = "' + "(" * 1000 + '"\nx = (\n'  # does not parse; its brackets are in a string
    assert analyse_python(deep_string).syntax_error is not None


def test_a_file_of_deeply_nested_brackets_is_a_skip_with_its_reason() -> None:
    data = ("x = " + "[" * 50_000 + "\n").encode()
    result = facts.analyse_bytes("deep.py", data)
    assert (result.facts, result.skip_reason) == (None, f"nesting too deep (50,000 levels; limit {MAX_NESTING})")
    valid = ("x = " + "[" * 150 + "]" * 150 + "\n").encode()  # deep, yet Python parses it: analysed
    assert facts.analyse_bytes("ok.py", valid).facts is not None


def test_a_file_past_its_cpu_deadline_is_a_skip(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(facts, "ANALYSIS_SECONDS", 0.05)
    slow = (("x = " + "[" * 100 + "]" * 100 + " ]\n") * 200).encode()  # parso: seconds, at depth 100
    result = facts.analyse_bytes("slow.py", slow)
    assert (result.facts, result.skip_reason) == (None, "too long to analyse (more than 0.05 s of CPU; the limit "
                                                        "per file)")
    assert facts.analyse_bytes("ok.py", b"def f():\n    return 1\n").facts is not None  # the timer is off again


def test_the_cli_skips_a_nested_file_and_writes_the_others(tmp_path: Path) -> None:
    """300 KB of `[`: parso took 13 s and 471 MB (5 MB: minutes and gigabytes, then exit 4)."""
    root = make_workspace(tmp_path / "ws", {"deep.py": "x = " + "[" * 300_000 + "\n",
                                            "ok.py": 'def f():\n    """Doc."""\n'})
    done = run_cli("generate", str(root), "--json", env={**os.environ, "REPODOC_CACHE_DIR": str(tmp_path / "c")},
                   timeout=60)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert {"path": "deep.py", "reason": f"nesting too deep (300,000 levels; limit {MAX_NESTING})"} \
        in summary["skipped"]
    assert (root / "docs/ok.py_docs.md").is_file() and not (root / "docs/deep.py_docs.md").exists()
