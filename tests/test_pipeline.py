"""The page pipeline's contract (`generate.run`), the same in the server's page process as here:
the same pages written (rename aliases too), the run's own failures raised as they are, progress
passed through."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from helpers import make_workspace

from repodoc_lsp.config import load_settings
from repodoc_lsp.generate import Job, generate, regenerate
from repodoc_lsp.render import Renderer
from repodoc_lsp.server.regen_process import RegenProcess
from repodoc_lsp.workspace import Workspace
from repodoc_lsp.writer import OutputError

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
        remote = process.run(job, progress=lambda phase, done, total, _where: reports.append((phase, done, total)))
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
        summary = process.run(Job())
        assert "pkg/b.py_kw.md" in summary.written and "**`h`**" in (there.out / "pkg/b.py_kw.md").read_text()
    finally:
        process.close()
