"""The Neovim plugin (editors/nvim) in real headless Neovims against the real server:
0.7.2 (start_client), 0.11.4 (vim.lsp.config) and 0.11.4 forced onto the 0.8-0.10 path (vim.lsp.start)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PLUGIN = REPO / "editors" / "nvim"
NVIM011 = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "repodoc-ci" / "nvim011" / "bin" / "nvim"

_DATA_PAGE_FAILED = re.compile(r"data/(index|doc)\.md: cannot write")


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


def _env(tmp_path: Path, workspace: Path, out: Path, force: str) -> dict[str, str]:
    env = {**os.environ, "OUT_JSON": str(out), "WORKSPACE": str(workspace), "FORCE_API": force,
           "SERVER_CMD_JSON": json.dumps([sys.executable, "-m", "repodoc_lsp", "serve"]),
           "REPODOC_CACHE_DIR": str(tmp_path / "cache"),
           # make this checkout importable even without `pip install -e`
           "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    for var in ("XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME"):
        env[var] = str(tmp_path / var.lower())
    return env


def _run(nvim: str, script: str, env: dict[str, str], workspace: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([nvim, "--headless", "--noplugin", "-u", str(PLUGIN / "tests" / "minimal_init.lua"),
                           "-c", f"luafile {PLUGIN / 'tests' / script}"], env=env, capture_output=True,
                          text=True, timeout=150, cwd=workspace)


@pytest.mark.parametrize(("version", "force", "api"), [
    ("0.7", "", "start_client"), ("0.11", "", "config"), ("0.11", "start", "start")])
def test_plugin_end_to_end(tmp_path: Path, editor_workspace: Path, version: str, force: str, api: str,
                           immutable_folder: Callable[[Path], AbstractContextManager[bool]]) -> None:
    nvim = _nvim(version)
    workspace = editor_workspace
    # a checkout's own repodoc_lsp/ (found by `python -m` in the working folder if the server ran there)
    sentinel = tmp_path / "imported"
    (workspace / "repodoc_lsp").mkdir()
    for module in ("__init__.py", "__main__.py"):
        (workspace / "repodoc_lsp" / module).write_text(f"open({str(sentinel)!r}, 'a').write('imported')\n")
    out = tmp_path / "report.json"
    # a page folder nobody can write (pages that cannot be written are named in the message)
    with immutable_folder(workspace / "docs" / "data") as immutable:
        proc = _run(nvim, "e2e.lua", _env(tmp_path, workspace, out, force), workspace)
    report = json.loads(out.read_text()) if out.exists() else {}
    assert proc.returncode == 0 and report.get("ok"), (report.get("errors"), proc.stderr[-2000:])
    assert not sentinel.exists()
    # nothing said at start with setup() and no settings (Lua's {} once reached the server as [])
    assert report["start_notifications"] == [] and report["start_server_messages"] == [], report
    assert "unknown key" not in report["start_messages"] and "RepoDoc" not in report["start_messages"]
    # K shows the hover; before 0.10 through the plugin's buffer mapping
    assert "Make a widget from a name." in report["k_hover"]
    assert report["k_plugin_mapping"] is (version == "0.7")
    assert report["help"] == "repodoc.txt" and "*repodoc-settings*" in report["help_line"]
    if immutable:
        assert report["summary_errors"] > 0
        failed = [n for n in report["notifications"] if "pages could not be written" in n]
        # data/ holds only notes.txt (a line of data/index.md, no page): its folder's pages fail
        assert failed and _DATA_PAGE_FAILED.search(failed[0]), report["notifications"]
    assert report["nvim"].startswith(version) and report["api"] == api
    assert report["root_dir"] == str(workspace)
    assert report["symbols"][:2] == ["Widget", "make_widget"]
    assert "Make a widget from a name." in report["hover"] and "def make_widget(" in report["hover"]
    assert report["summary_written"] > 0 and report["index_exists"] and report["docs_exists"]
    generating = [p for p in report["progress"] if "generating" in p["token"]]
    assert generating[0]["kind"] == "begin" and generating[0]["title"] == "RepoDoc: generating"
    assert generating[-1]["kind"] == "end"
    # one message for one :RepoDoc generate (the end of its progress says nothing more)
    [said] = report["generate_notifications"]
    assert said.startswith(f"RepoDoc: {report['summary_written']} pages written, 0 unchanged, 0 removed, 0 conflicts (")
    status = report["status"].split("\n")
    assert status[0] == f"RepoDoc: {workspace}", status
    assert status[1] == "  files: 12 indexed", status
    assert status[2] == f"  pages: {report['summary_written']} in docs", status
    assert status[3].startswith("  last run: generate at ")
    assert f": {report['summary_written']} pages written" in status[3], status
    if immutable:
        assert status[4] == "  errors:" and _DATA_PAGE_FAILED.search(status[5]), status
    else:
        assert status[4] == "  errors: none", status
    assert status[-1] in ("  hover: ready", "  hover: warming up")
    assert report["regenerated"] is True
    # a page the person edited: kept, and the message says how to overwrite it; :RepoDoc! generate does
    assert report["edited_kept"] is True and report["edited_conflicts"] == ["pkg/use.py_kw.md"], report
    assert "1 page you edited was kept: :RepoDoc! generate overwrites it" in report["edited_message"]
    assert report["forced_conflicts"] == 0 and report["forced_page_clean"] and report["forced_orig"], report
    assert report["opened"] == "use.py_docs.md" and report["windows"] == 2
    assert "repodoc-lsp" in report["health"] and "version: repodoc-lsp 0.1.0" in report["health"]


@pytest.mark.parametrize(("version", "force"), [("0.7", ""), ("0.11", ""), ("0.11", "start")])
def test_missing_server_command(tmp_path: Path, editor_workspace: Path, version: str, force: str) -> None:
    nvim = _nvim(version)
    out = tmp_path / "report.json"
    proc = _run(nvim, "missing.lua", _env(tmp_path, editor_workspace, out, force), editor_workspace)
    report = json.loads(out.read_text()) if out.exists() else {}
    assert proc.returncode == 0 and not report.get("errors"), (report, proc.stderr[-2000:])
    messages = [n["msg"] for n in report["notifications"]]
    # one short message for two files, naming the command and where the fix is
    assert messages[0].startswith("RepoDoc: unknown setting 'outputdir' (known: outputDir, include,")
    assert messages[1:] == ["RepoDoc: server command '/nonexistent/bin/repodoc' not found: see :help repodoc-install"]
    assert report["clients"] == 0
    assert "python3 -m venv" in report["health"] and "pip install /path/to/repodoc-lsp" in report["health"]
    assert "pip install repodoc-lsp" not in report["health"]


def test_help_tags_are_current(tmp_path: Path) -> None:
    """doc/tags is shipped (so :help repodoc works without :helptags) and matches the help file."""
    nvim = _nvim("0.7")
    shutil.copytree(PLUGIN / "doc", tmp_path / "doc")
    (tmp_path / "doc" / "tags").unlink()
    subprocess.run([nvim, "--headless", "--clean", "-c", f"helptags {tmp_path / 'doc'}", "-c", "qall!"],
                   check=True, capture_output=True, timeout=60)
    assert (PLUGIN / "doc" / "tags").read_text() == (tmp_path / "doc" / "tags").read_text(), \
        "run: nvim --headless --clean -c 'helptags editors/nvim/doc' -c qall!"


@pytest.mark.parametrize(("version", "force"), [("0.7", ""), ("0.11", ""), ("0.11", "start")])
def test_roots(tmp_path: Path, editor_workspace: Path, version: str, force: str) -> None:
    """A file without a project marker gets hover only (no root: nothing written beside it on save); a
    generated page belongs to its workspace, never to the output folder."""
    nvim = _nvim(version)
    stray = tmp_path / "stray"
    stray.mkdir()
    (stray / "tool.py").write_text('def helper():\n    """Help with things."""\n\n\nhelper()\n')
    (stray / "todo.md").write_text("# todo\n")
    env = _env(tmp_path, editor_workspace, tmp_path / "report.json", force)
    subprocess.run([sys.executable, "-m", "repodoc_lsp", "generate", str(editor_workspace), "--quiet"], env=env,
                   check=True, capture_output=True, timeout=120)
    env["STRAY"] = str(stray)
    proc = _run(nvim, "stray.lua", env, editor_workspace)
    report = json.loads((tmp_path / "report.json").read_text())
    assert proc.returncode == 0 and not report["errors"], (report, proc.stderr[-2000:])
    assert report["stray_root"] is None and report["stray_folders"] == 0
    assert "Help with things." in report["stray_hover"]
    assert sorted(p.name for p in stray.iterdir()) == ["todo.md", "tool.py"]
    assert report["page_root"] == str(editor_workspace)
    assert not (editor_workspace / "docs" / "docs").exists()
    assert report["clients"] == 2  # one without a root (both stray files), one for the workspace


@pytest.mark.parametrize(("version", "force"), [("0.7", ""), ("0.11", "")])
def test_one_signature_beside_another_python_server(tmp_path: Path, editor_workspace: Path, version: str,
                                                     force: str) -> None:
    """With jedi-language-server attached to the same buffer, repodoc's hover shows only what it adds
    (where, index facts, page link); the signature and docstring come once, from the other server."""
    nvim = _nvim(version)
    peer = Path(sys.executable).with_name("jedi-language-server")
    assert peer.exists(), "jedi-language-server is a test dependency (pyproject's test extra)"
    env = _env(tmp_path, editor_workspace, tmp_path / "report.json", force)
    env["PEER_CMD_JSON"] = json.dumps([str(peer)])
    subprocess.run([sys.executable, "-m", "repodoc_lsp", "generate", str(editor_workspace), "--quiet"], env=env,
                   check=True, capture_output=True, timeout=120)
    proc = _run(nvim, "beside.lua", env, editor_workspace)
    report = json.loads((tmp_path / "report.json").read_text())
    assert proc.returncode == 0 and not report["errors"], (report, proc.stderr[-2000:])
    assert report["repodoc"].startswith("**repodoc** · **Defined in** `pkg/core.py:"), report
    assert "core.py_docs.md#function-make_widget" in report["repodoc"]
    assert "make_widget(" in report["peer"]  # the signature, from the other server alone


@pytest.mark.parametrize(("version", "force"), [("0.7", ""), ("0.11", ""), ("0.11", "start")])
def test_stale_reference_diagnostic_and_quick_fix(tmp_path: Path, editor_workspace: Path, version: str,
                                                  force: str) -> None:
    """A class renamed (Gizmo -> Gizmos: one edit away, a confident suggestion without git) and a
    README still naming the old one: Neovim shows the
    Warning from `repodoc`, and its code-action flow applies the fix."""
    nvim = _nvim(version)
    (editor_workspace / "pkg" / "gizmo.py").write_text('"""Gizmos."""\n\n\nclass Gizmos:\n    """Was Gizmo."""\n')
    readme = editor_workspace / "README.md"
    readme.write_text(readme.read_text() + "\nThe `pkg.gizmo.Gizmo` class does the rest.\n")
    proc = _run(nvim, "refs.lua", _env(tmp_path, editor_workspace, tmp_path / "report.json", force),
                editor_workspace)
    report = json.loads((tmp_path / "report.json").read_text())
    assert proc.returncode == 0 and not report["errors"], (report, proc.stderr[-2000:])
    assert report["count"] == 1 and report["severity"] == "Warning", report
    assert "did you mean `pkg.gizmo.Gizmos`?" in report["message"]
    assert report.get("offered", 1) == 1 and report["line"] == "The `pkg.gizmo.Gizmos` class does the rest."
    assert readme.read_text().endswith("The `pkg.gizmo.Gizmos` class does the rest.\n")
    assert report["after"] == 0
