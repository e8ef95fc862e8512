"""Limits belong to the person: a checkout's settings never ask for more processes than the cores."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from helpers import make_workspace

from repodoc_lsp.config import Settings
from repodoc_lsp.pipeline import runtime


@pytest.mark.parametrize(("setting", "flag", "expected"), [
    (0, None, 3), (1_000_000, None, 3), (2, None, 2), (1_000_000, 1, 1), (0, 64, 3), (-5, None, 3), (0, 0, 3),
])
def test_jobs_never_more_than_the_cores(monkeypatch: pytest.MonkeyPatch, setting: int, flag: int | None,
                                        expected: int) -> None:
    monkeypatch.setattr(runtime, "usable_cpus", lambda: 3)
    assert runtime.default_jobs(Settings(jobs=setting), flag) == expected


def _descendants(proc: psutil.Process) -> set[int]:
    try:
        return {c.pid for c in proc.children(recursive=True)}
    except psutil.Error:
        return set()


def test_a_checkout_asking_for_a_million_jobs_gets_the_cores(tmp_path: Path) -> None:
    files = {f"pkg/m{i}.py": f"def f{i}(x):\n    return x + {i}\n" for i in range(64)}
    root = make_workspace(tmp_path / "ws", {**files, "pyproject.toml": "[tool.repodoc]\njobs = 1000000\n"})
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "REPODOC_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.Popen([sys.executable, "-m", "repodoc_lsp", "generate", str(root)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    watched = psutil.Process(proc.pid)
    most = 0
    while proc.poll() is None:
        most = max(most, len(_descendants(watched)))
        time.sleep(0.005)
    assert proc.wait() == 0, proc.stderr.read() if proc.stderr else ""
    # the workers, plus multiprocessing's fork server and resource tracker (64 files asked for 8 workers)
    assert 0 < most <= runtime.usable_cpus() + 2
