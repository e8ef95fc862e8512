"""The sketches a whole `repodoc generate` keeps for the next run (`pipeline/keep.py`) are written by the graph's
thread while the pages render, and put in place only when the run is kept: the same file as one written
after the last page, and nothing (no file, no temporary) when the run fails."""

from __future__ import annotations

import contextlib
import io
import threading
from pathlib import Path

import pytest
from helpers import make_workspace
from test_since_last_run import _state

from repodoc_lsp import cli
from repodoc_lsp.pipeline import generate as pipeline
from repodoc_lsp.pipeline.keep import Sketches
from repodoc_lsp.store import sketches

# enough pages that a cold run starts its render workers before the graph is built, which it builds in a thread
FILES = {f"pkg{n % 7}/m{n}.py": f"from pkg{(n + 1) % 7}.m{(n + 1) % 210} import f{(n + 1) % 210}\n\n\n"
                                f"def f{n}():\n    \"\"\"Function {n}.\"\"\"\n    return f{(n + 1) % 210}\n"
         for n in range(210)}


def _run(root: Path, cache: Path) -> int:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return cli.main(["generate", str(root), "--cache-dir", str(cache), "--jobs", "2", "--quiet"])


def _kept(cache: Path) -> list[str]:
    return sorted(p.name for p in cache.rglob("*") if p.name.startswith(".kept-") or p.name.startswith("sketches"))


def test_the_graph_thread_writes_the_sketches_a_later_save_would(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    writers: list[str] = []
    real = Sketches.write

    def write(self: Sketches, graph: object = None) -> None:
        writers.append(threading.current_thread().name)
        real(self, graph)  # type: ignore[arg-type]
    monkeypatch.setattr(Sketches, "write", write)
    root, cache = make_workspace(tmp_path / "ws", FILES), tmp_path / "cache"
    assert _run(root, cache) == 0
    saved = sketches.sketches_path(_state(root, cache))
    during = saved.read_bytes()
    assert writers[0] == "repodoc-graph", writers  # while the pages rendered, not after the last one

    # the same workspace kept by a run that writes them only after its pages: the same bytes
    monkeypatch.setattr(pipeline, "_graph_in_thread", lambda ws, early: False)
    writers.clear()
    again = make_workspace(tmp_path / "again" / "ws", FILES)
    assert _run(again, tmp_path / "cache2") == 0
    assert "repodoc-graph" not in writers
    assert sketches.sketches_path(_state(again, tmp_path / "cache2")).read_bytes() == during
    assert not [name for name in _kept(cache) if name.startswith(".kept-")]


def test_a_failed_run_keeps_no_sketches_and_leaves_no_temporary(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    written = threading.Event()
    real = Sketches.write

    def write(self: Sketches, graph: object = None) -> None:
        real(self, graph)  # type: ignore[arg-type]
        written.set()

    def fails(plan: object, w: object) -> None:  # the pages' output fails once the sketches are written aside
        assert written.wait(60)
        raise pipeline.OutputError("disk full")
    monkeypatch.setattr(Sketches, "write", write)
    monkeypatch.setattr(pipeline, "write_plan", fails)
    root, cache = make_workspace(tmp_path / "ws", FILES), tmp_path / "cache"
    assert _run(root, cache) == 3
    assert not sketches.sketches_path(_state(root, cache)).exists()
    assert _kept(cache) == []
