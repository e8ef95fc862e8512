"""Fixtures shared by the core tests; helpers live in helpers.py."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def cache_env(tmp_path: Path) -> dict[str, str]:
    """An environment whose analysis cache lives in the test's own folder."""
    import os

    env = dict(os.environ)
    env["REPODOC_CACHE_DIR"] = str(tmp_path / "_cache")
    return env
