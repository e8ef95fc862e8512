"""On PyTorch's Python sources, every keyword list written to a `_kw.md` equals what
Python's own `ast` finds, file for file.

The corpus is unpacked from the torch 2.13.0 wheel (`pip download` finds a local one)
into a cache folder outside the repository; the test is skipped when no wheel can be had,
unless REPODOC_REQUIRE_TORCH=1 (CI) makes that a failure.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from helpers import ast_keywords, run_cli

pytestmark = pytest.mark.slow

CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "repodoc-bench"


def torch_corpus() -> Path | None:
    """The `torch/` folder of Python sources, unpacked once."""
    target = CACHE / "torch-2.13.0"
    if (target / ".complete").exists():
        return target / "torch"
    wheels = CACHE / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    if not list(wheels.glob("torch-2.13.0*.whl")):
        proc = subprocess.run([sys.executable, "-m", "pip", "download", "torch==2.13.0", "--no-deps", "-d",
                               str(wheels), "-q"], capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            return None
    wheel = next(wheels.glob("torch-2.13.0*.whl"))
    with zipfile.ZipFile(wheel) as zf:
        for name in zf.namelist():
            if name.startswith("torch/") and name.endswith(".py"):
                zf.extract(name, target)
    (target / ".complete").write_text("ok\n")
    return target / "torch"


def reference_keywords(source: bytes) -> dict[str, list[str]] | None:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    return {kind: sorted(names) for kind, names in ast_keywords(tree).items()}


_ENTRY = re.compile(r"^- \*\*(`+) ?(.*?) ?\1\*\*: ")


def written_keywords(page: Path) -> dict[str, list[str]]:
    sections: dict[str, list[str]] = {}
    current = None
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("### "):
            current = sections.setdefault(line[4:], [])
        elif line.startswith("## "):
            current = None
        elif current is not None and (m := _ENTRY.match(line)):
            current.append(m.group(2))
    return sections


def test_torch_keywords_equal_ast(tmp_path: Path) -> None:
    corpus = torch_corpus()
    if corpus is None:
        if os.environ.get("REPODOC_REQUIRE_TORCH"):
            pytest.fail("the torch 2.13.0 wheel could not be downloaded")
        pytest.skip("no torch 2.13.0 wheel available")
    out = tmp_path / "out"
    env = dict(os.environ, REPODOC_CACHE_DIR=str(tmp_path / "cache"))
    proc = run_cli("generate", str(corpus), "--out", str(out), "--json", env=env, timeout=900)
    assert proc.returncode == 0, proc.stderr
    files = sorted(p for p in corpus.rglob("*.py"))
    assert len(files) == 2285
    compared = 0
    mismatches = []
    for path in files:
        expected = reference_keywords(path.read_bytes())
        if expected is None:  # newer syntax than this Python parses: nothing to compare with
            continue
        rel = path.relative_to(corpus).as_posix()
        got = written_keywords(out / f"{rel}_kw.md")
        if got != expected:
            mismatches.append(rel)
        compared += 1
    assert mismatches == []
    assert compared >= 2280
