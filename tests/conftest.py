"""Fixtures shared by the core tests; helpers live in helpers.py."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

# Property tests in CI (`CI` set, as GitHub Actions sets it) run a fixed set of examples: the same
# examples every run, no example database; a failure prints the blob that reproduces it
# (`@reproduce_failure`). Locally they vary from run to run (a new seed each time).
settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
settings.register_profile("local", print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") else "local")


@pytest.fixture
def cache_env(tmp_path: Path) -> dict[str, str]:
    """An environment whose analysis cache lives in the test's own folder."""
    import os

    env = dict(os.environ)
    env["REPODOC_CACHE_DIR"] = str(tmp_path / "_cache")
    return env
