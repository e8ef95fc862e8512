"""Real projects with their own `docs/` (click's Sphinx reST, attrs' Sphinx MyST), from their
sdists, and a virtual environment with what their own `conf.py` needs to build them.

Both live in the cache folder of the PyTorch checks, outside the repository:
${XDG_CACHE_HOME:-~/.cache}/repodoc-bench (`sdists/`, `src/`, `sphinx-venv-*/`), fetched with pip
once. A test that cannot have them is skipped with the reason, unless REPODOC_REQUIRE_SDISTS=1
(`.ci/run` sets it) makes that a failure.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "repodoc-bench"
PROJECTS = {"click": "8.1.8", "attrs": "24.2.0"}
# What the two conf.py files load (extensions, themes, and the projects themselves: their conf.py
# reads their version from the installed distribution), pinned so that a build's warnings are the
# same from run to run.
SPHINX_PINS = (
    "sphinx==9.0.4", "myst-parser==5.2.0", "furo==2025.12.19", "sphinx-notfound-page==1.1.0",
    "sphinxcontrib-towncrier==0.5.0a0", "towncrier==26.9.0", "sphinx-tabs==3.5.0",
    "sphinxcontrib-log-cabinet==1.0.1", "pallets-sphinx-themes==2.5.0", "attrs==24.2.0", "click==8.1.8",
)


def unavailable(what: str) -> None:
    """Skip the test (fail it when REPODOC_REQUIRE_SDISTS is set) because `what` cannot be had."""
    if os.environ.get("REPODOC_REQUIRE_SDISTS"):
        pytest.fail(f"{what} could not be had (REPODOC_REQUIRE_SDISTS is set)")
    pytest.skip(f"{what} could not be had")


def _pip(*args: str) -> bool:
    proc = subprocess.run([sys.executable, "-m", "pip", *args, "-q"], capture_output=True, text=True,
                          timeout=600)
    return proc.returncode == 0


def sdist(name: str) -> Path:
    """The sdist of `name` (a key of PROJECTS) unpacked once in the cache: read it, never write it
    (copy it first). Skips the test when pip cannot download it."""
    version = PROJECTS[name]
    target = CACHE / "src" / f"{name}-{version}"
    if (target / ".complete").exists():
        return target / f"{name}-{version}"
    archives = CACHE / "sdists"
    archive = archives / f"{name}-{version}.tar.gz"
    if not archive.exists() and not _pip("download", "--no-deps", "--no-binary", ":all:",
                                         f"{name}=={version}", "-d", str(archives)):
        unavailable(f"the sdist of {name} {version}")
    shutil.rmtree(target, ignore_errors=True)
    with tarfile.open(archive) as tar:
        if hasattr(tarfile, "data_filter"):  # Python 3.10.12, 3.11.4 and later
            tar.extractall(target, filter="data")
        else:  # pragma: no cover
            tar.extractall(target)  # a known sdist
    (target / ".complete").write_text("ok\n")
    return target / f"{name}-{version}"


def project_copy(name: str, where: Path) -> Path:
    """A copy of the unpacked sdist of `name` in `where` (a test's own folder)."""
    return Path(shutil.copytree(sdist(name), where / name))


def sphinx_python() -> Path:
    """The interpreter of a virtual environment holding SPHINX_PINS (made once in the cache).
    Skips the test when pip cannot install them."""
    digest = hashlib.sha256("\n".join(SPHINX_PINS).encode()).hexdigest()[:12]
    venv = CACHE / f"sphinx-venv-{digest}"
    python = venv / "bin" / "python"
    if (venv / ".complete").exists():
        return python
    shutil.rmtree(venv, ignore_errors=True)
    made = subprocess.run([sys.executable, "-m", "venv", str(venv)], capture_output=True, timeout=300)
    if made.returncode != 0 or subprocess.run(
            [str(python), "-m", "pip", "install", "-q", *SPHINX_PINS], capture_output=True,
            timeout=900).returncode != 0:
        unavailable("Sphinx and the extensions of click's and attrs' conf.py")
    (venv / ".complete").write_text("ok\n")
    return python


def sphinx_builds(python: Path, builds: list[tuple[Path, Path]]) -> list[tuple[int, list[str]]]:
    """Each project's own Sphinx build (`python -m sphinx -b html -q docs OUT`, its own conf.py),
    all at once (one core each): for each (project, out), the exit code and its warnings and errors,
    sorted, with the project's folder written as PROJECT and `out` as OUT. Intersphinx inventories
    cannot be fetched here: a proxy that refuses makes that fail at once, the same way every time."""
    refused = "http://127.0.0.1:9"
    env = {**os.environ, "http_proxy": refused, "https_proxy": refused, "HTTP_PROXY": refused,
           "HTTPS_PROXY": refused, "no_proxy": "", "NO_PROXY": ""}
    running = [subprocess.Popen([str(python), "-m", "sphinx", "-b", "html", "-q", "docs", str(out)], cwd=project,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
               for project, out in builds]
    results = []
    for proc, (project, out) in zip(running, builds, strict=True):
        text, _ = proc.communicate(timeout=600)
        lines = text.replace(str(out), "OUT").replace(str(project), "PROJECT").splitlines()
        results.append((proc.returncode, sorted(line for line in lines if line.strip())))
    return results
