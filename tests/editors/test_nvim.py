"""The Neovim plugin (editors/nvim) in real headless Neovims against the real server:
0.7.2 (start_client), 0.11.4 (vim.lsp.config) and 0.11.4 forced onto the 0.8-0.10 path (vim.lsp.start)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PLUGIN = REPO / "editors" / "nvim"
NVIM011 = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "repodoc-ci" / "nvim011" / "bin" / "nvim"


def _nvim(version: str) -> str:
    path = shutil.which("nvim") if version == "0.7" else (str(NVIM011) if NVIM011.exists() else None)
    if path and version == "0.7":
        out = subprocess.run([path, "--version"], capture_output=True, text=True).stdout
        path = path if "v0.7." in out else None
    if path is None:
        if os.environ.get("REPODOC_REQUIRE_EDITORS"):
            pytest.fail(f"Neovim {version} is not installed (editors/nvim/scripts/install-ci-deps.sh)")
        pytest.skip(f"Neovim {version} is not installed (editors/nvim/scripts/install-ci-deps.sh)")
    return path


@pytest.mark.parametrize(("version", "force", "api"), [
    ("0.7", "", "start_client"), ("0.11", "", "config"), ("0.11", "start", "start")])
def test_plugin_end_to_end(tmp_path: Path, editor_workspace: Path, version: str, force: str, api: str) -> None:
    nvim = _nvim(version)
    workspace = editor_workspace
    out = tmp_path / "report.json"
    env = {**os.environ, "OUT_JSON": str(out), "WORKSPACE": str(workspace), "FORCE_API": force,
           "SERVER_CMD_JSON": json.dumps([sys.executable, "-m", "repodoc_lsp", "serve"]),
           # the server runs with the workspace as cwd: make this checkout importable even without `pip install -e`
           "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    for var in ("XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME"):
        env[var] = str(tmp_path / var.lower())
    proc = subprocess.run([nvim, "--headless", "--noplugin", "-u", str(PLUGIN / "tests" / "minimal_init.lua"),
                           "-c", f"luafile {PLUGIN / 'tests' / 'e2e.lua'}"], env=env, capture_output=True,
                          text=True, timeout=150, cwd=workspace)
    report = json.loads(out.read_text()) if out.exists() else {}
    assert proc.returncode == 0 and report.get("ok"), (report.get("errors"), proc.stderr[-2000:])
    assert report["nvim"].startswith(version) and report["api"] == api
    assert report["root_dir"] == str(workspace)
    assert report["symbols"][:2] == ["Widget", "make_widget"]
    assert "Make a widget from a name." in report["hover"] and "def make_widget(" in report["hover"]
    assert report["summary_written"] > 0 and report["index_exists"] and report["docs_exists"]
    generating = [p for p in report["progress"] if "generating" in p["token"]]
    assert generating[0]["kind"] == "begin" and generating[0]["title"] == "RepoDoc: generating"
    assert generating[-1]["kind"] == "end"
    assert any(n.startswith("RepoDoc: documentation ") for n in report["notifications"])
    assert report["regenerated"] is True
    assert report["opened"] == "use.py_docs.md" and report["windows"] == 2
    assert "repodoc-lsp" in report["health"] and "version: repodoc-lsp 0.1.0" in report["health"]
