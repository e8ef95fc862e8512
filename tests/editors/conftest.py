"""The workspace both editor tests open: the golden sample, with a file that calls `make_widget`."""

from __future__ import annotations

import shutil
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
