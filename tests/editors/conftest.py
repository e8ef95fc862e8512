"""The workspace both editor tests open: the golden sample, with a file that calls `make_widget`."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import pytest

SAMPLE = Path(__file__).resolve().parents[1] / "golden" / "sample"
USE_PY = "from pkg.core import make_widget\n\nmake_shape = make_widget\nmake_shape('x')\n"


@pytest.fixture
def editor_workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    shutil.copytree(SAMPLE, ws)
    (ws / "pkg" / "use.py").write_text(USE_PY)
    return ws


@contextmanager
def _immutable(folder: Path) -> Iterator[bool]:
    """`folder`, made immutable (chattr +i: even root cannot write in it) for the block; yields False
    where that is not possible (no chattr, not root, a file system without the attribute)."""
    folder.mkdir(parents=True, exist_ok=True)
    try:
        done = subprocess.run(["chattr", "+i", str(folder)], capture_output=True, timeout=10).returncode == 0
    except OSError:
        done = False
    try:
        yield done
    finally:
        if done:
            subprocess.run(["chattr", "-i", str(folder)], capture_output=True, timeout=10)


@pytest.fixture
def immutable_folder() -> Callable[[Path], AbstractContextManager[bool]]:
    return _immutable
