"""The page pipeline's contract (`generate.run`), the same in the server's page process as here:
the same pages written (rename aliases too), the run's own failures raised as they are, progress
passed through."""

from __future__ import annotations

import os
import shutil
import signal
from pathlib import Path

import pytest
from helpers import make_workspace

from repodoc_lsp.config import load_settings
from repodoc_lsp.output.writer import OutputError
from repodoc_lsp.pipeline.generate import Job, generate, regenerate
from repodoc_lsp.pipeline.runtime import LIBRARY
from repodoc_lsp.render.pages import Renderer
from repodoc_lsp.server.regen_process import RegenProcess
from repodoc_lsp.store.workspace import Workspace

FILES = {"pkg/__init__.py": "", "pkg/a.py": "from pkg.b import f\n", "pkg/b.py": "def f():\n    pass\n",
         "other/c.py": "x = 1\n"}


def _workspace(tmp_path: Path, name: str) -> Workspace:
    root = make_workspace(tmp_path / name / "ws", FILES)  # one project name
    settings, _ = load_settings(root, {"cacheDir": str(tmp_path / "cache")})
    ws = Workspace(root, settings)
    generate(root, ws)
    return ws


def _tree(out: Path) -> dict[str, str]:
    return {p.relative_to(out).as_posix(): p.read_text() for p in out.rglob("*.md")}


def test_the_page_process_runs_the_same_pipeline(tmp_path: Path) -> None:
    here, there = _workspace(tmp_path, "here"), _workspace(tmp_path, "there")
    process = RegenProcess(there)
    try:
        for ws in (here, there):
            (ws.root / "pkg/b.py").write_text("def g():\n    pass\n")
            (ws.root / "pkg/new.py").write_text("import pkg.b\n")
        job = Job(files=("pkg/b.py", "pkg/new.py"))
        local = regenerate(here, job.files or (), Renderer())
        reports: list[tuple[str, int, int]] = []
        ran = process.run(job, progress=lambda phase, done, total, _where: reports.append((phase, done, total)))
        remote = ran.summary
        # each file as its replica holds it, for the server to take without reading it again
        assert ran.states == here.states(job.files or (), facts=False) and ran.states["pkg/new.py"].digest
        assert sorted(remote.written) == sorted(local.written) and remote.written
        assert remote.errors == local.errors == []
        assert _tree(there.out) == _tree(here.out)
        # f renamed g (the same body): its old anchor is kept beside the new one, in both
        assert '<a id="function-g"></a><a id="function-f"></a>' in (there.out / "pkg/b.py_docs.md").read_text()
        assert reports and reports[-1] == ("write", len(remote.written) + remote.unchanged,
                                           len(remote.written) + remote.unchanged)

        # The run's own failure (an unusable output folder) is raised as it is, in both.
        for ws in (here, there):
            shutil.rmtree(ws.out)
            ws.out.symlink_to(tmp_path / "nowhere")
            (ws.root / "pkg/b.py").write_text("def h():\n    pass\n")
        with pytest.raises(OutputError, match="broken link"):
            regenerate(here, ["pkg/b.py"], Renderer())
        with pytest.raises(OutputError, match="broken link"):
            process.run(Job(files=("pkg/b.py",)))
        # The process goes on (it did not fail: the folder did): the next run there writes.
        there.out.unlink()
        summary = process.run(Job()).summary
        assert "pkg/b.py_kw.md" in summary.written and "**`h`**" in (there.out / "pkg/b.py_kw.md").read_text()
    finally:
        process.close()


def test_a_save_queued_behind_a_batch_is_written_before_the_server_takes_the_batch(tmp_path: Path) -> None:
    """A root (in-process, its real page process): a checkout's batch of 40 new files and a save
    queued behind it: the save is written by the process before the server's workspace takes the
    batch (it did not wait for that); the server then takes the batch as the process sent it, and
    the index follows. Another batch, its process killed before the server took it: the next save
    is written here and the one after by a new process, both after the server took the batch. The
    tree then equals a fresh generation byte for byte, the server's workspace and symbol graph
    those of a fresh scan."""
    import threading

    from edits import differences, tree

    from repodoc_lsp.server.state import Root

    root = make_workspace(tmp_path / "ws", {**FILES, **{f"pkg/old{i}.py": f"def old{i}():\n    pass\n"
                                                        for i in range(20)}})
    settings, _ = load_settings(root, {"cacheDir": str(tmp_path / "cache")})
    state = Root(root, settings, runtime=LIBRARY)
    try:
        state.submit(state.scan).result(60)
        state.submit(state.generate).result(120)  # the page process writes the tree
        new = [f"pkg/new{i}.py" for i in range(40)]
        for i, rel in enumerate(new):  # each imports an old file and the next new one
            (root / rel).write_text(f"from pkg.old{i % 20} import old{i % 20}\nfrom pkg import new{(i + 1) % 40}\n\n\n"
                                    f"def new{i}():\n    return old{i % 20}\n")
        # the root's thread, in order: the batch, the save, then (queued by the batch) the catch-up
        held = [threading.Event() for _ in range(3)]
        state.submit(held[0].wait, 60)
        batch = state.submit(state.regenerate, new)
        state.submit(held[1].wait, 60)
        (root / "pkg/b.py").write_text("from pkg.new3 import new3\n\n\ndef g():\n    return new3\n")
        save = state.submit(state.regenerate, ["pkg/b.py"])
        state.submit(held[2].wait, 60)
        held[0].set()
        assert batch.result(120) is not None and "pkg/new39.py_kw.md" in batch.result().written
        assert "pkg/new0.py" not in state.ws.facts and state.worker.untaken()  # answered first
        held[1].set()
        assert "pkg/b.py_kw.md" in save.result(120).written
        assert "**`g`**" in (root / "docs/pkg/b.py_kw.md").read_text()
        assert "pkg/new0.py" not in state.ws.facts  # the save did not wait for the server to take the batch
        held[2].set()
        while (settling := state.settling()) is not None:
            settling.result(120)
        assert {"pkg/new0.py", "pkg/b.py"} <= set(state.ws.facts) and not state.worker.untaken()
        assert state.index.lookup("new39") and state.index.lookup("g")

        # Another batch, then its page process is killed before the server took it; a save then is
        # written here, and the next by a new process: both after the server took the batch.
        late = [f"pkg/late{i}.py" for i in range(10)]
        for i, rel in enumerate(late):
            (root / rel).write_text(f"def late{i}():\n    pass\n")
        held = [threading.Event() for _ in range(2)]
        state.submit(held[0].wait, 60)
        batch = state.submit(state.regenerate, late)
        state.submit(held[1].wait, 60)
        (root / "pkg/new5.py").write_text("from pkg.late0 import late0\n\n\ndef new5():\n    return late0\n")
        save = state.submit(state.regenerate, ["pkg/new5.py"])
        held[0].set()
        assert "pkg/late9.py_kw.md" in batch.result(120).written and state.worker.untaken()
        process = state.worker.process
        assert process is not None and process.pid is not None
        os.kill(process.pid, signal.SIGKILL)
        held[1].set()
        assert "pkg/new5.py_kw.md" in save.result(120).written  # here, the process being dead
        assert state.worker.process is not None and state.worker.process.pid != process.pid
        assert state.worker.process.ready(wait=True)
        (root / "pkg/new6.py").write_text("from pkg.late1 import late1\n\n\ndef new6():\n    return late1\n")
        assert "pkg/new6.py_kw.md" in state.submit(state.regenerate, ["pkg/new6.py"]).result(120).written
        while (settling := state.settling()) is not None:
            settling.result(120)

        copy = make_workspace(tmp_path / "fresh" / "ws", {})  # the same project name
        shutil.copytree(root, copy, dirs_exist_ok=True, ignore=shutil.ignore_patterns("docs"))
        fresh = Workspace(copy, load_settings(copy, {"cacheDir": str(tmp_path / "cache")})[0])
        generate(copy, fresh)
        assert differences(tree(root / "docs"), tree(copy / "docs")) == []
        assert state.ws.digests == fresh.digests and state.ws.folders == fresh.folders
        graph, fresh_graph = state.ws.graph(), fresh.graph()
        for rel in sorted(fresh.facts):
            for d in fresh_graph.definitions(rel):
                assert graph.users(d.key) == fresh_graph.users(d.key), d
                assert graph.subclasses(d.key) == fresh_graph.subclasses(d.key), d
    finally:
        state.close()
