"""The VS Code extension (editors/vscode): built and packaged for real, then installed in a real
VS Code (code-server 4.100.3) driven by headless Chromium, against the real server."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXT = REPO / "editors" / "vscode"
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "repodoc-ci"
CODE_SERVER = CACHE / "code-server" / "node_modules" / ".bin" / "code-server"
PLAYWRIGHT = CACHE / "playwright" / "node_modules" / "playwright-core"


def _require(ok: bool, what: str) -> None:
    if not ok:
        message = f"{what} is not installed (editors/vscode/scripts/install-ci-deps.sh)"
        if os.environ.get("REPODOC_REQUIRE_EDITORS") == "1":
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture(scope="module")
def vsix() -> Path:
    _require(shutil.which("npm") is not None and (EXT / "node_modules").is_dir(), "the extension's npm packages")
    # the unit tests also check the start-up probe against the Python that runs these tests
    proc = subprocess.run(["bash", str(EXT / "scripts" / "build.sh")], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "REPODOC_TEST_PYTHON": sys.executable})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "bundle and manifest present" in proc.stdout
    assert "# fail 0" in proc.stdout and "# skipped 0" in proc.stdout, proc.stdout[-3000:]
    return EXT / "repodoc-0.1.0.vsix"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _package(name: str, tmp_path: Path) -> Path:
    """A test-only extension of test/e2e, packaged."""
    folder = tmp_path / name
    shutil.copytree(EXT / "test" / "e2e" / name, folder)
    subprocess.run([str(EXT / "node_modules" / ".bin" / "vsce"), "package", "--no-dependencies", "-o",
                    f"{name}.vsix"], cwd=folder, check=True, capture_output=True, timeout=120)
    return folder / f"{name}.vsix"


def _interpreter(path: Path, marker: Path) -> Path:
    """A Python that records how it was run in `marker`, then runs the tests' own."""
    path.write_text(f'#!/bin/sh\necho "$@" >> {marker}\nexec {sys.executable} "$@"\n')
    path.chmod(0o755)
    return path


def _hostile_checkout(ws: Path, tmp_path: Path) -> dict[str, Path]:
    """What a checkout can ship to make the extension run its code or write outside it; the sentinels
    that must not appear."""
    sentinels = {name: tmp_path / name for name in ("imported", "interpreter-ran", "outside", "evil-cache")}
    (ws / "repodoc_lsp").mkdir()
    for module in ("__init__.py", "__main__.py"):
        (ws / "repodoc_lsp" / module).write_text(f"open({str(sentinels['imported'])!r}, 'a').write('imported')\n")
    evil = ws / "tools" / "python"
    evil.parent.mkdir()
    evil.write_text(f"#!/bin/sh\ntouch {sentinels['interpreter-ran']}\nexec {sys.executable} \"$@\"\n")
    evil.chmod(0o755)
    (ws / "evil-templates").mkdir()
    (ws / "evil-templates" / "file_docs.md.j2").write_text("EVIL-TEMPLATE\n")
    (ws / ".vscode").mkdir()
    (ws / ".vscode" / "settings.json").write_text(json.dumps({
        "repodoc.interpreter": str(evil), "repodoc.serverCommand": [str(evil), "-m", "repodoc_lsp", "serve"],
        "repodoc.templates": str(ws / "evil-templates"), "repodoc.cacheDir": str(sentinels["evil-cache"]),
        "repodoc.outputDir": str(sentinels["outside"])}))
    return sentinels


def _vscode_session(tmp_path: Path, ws: Path, extensions: list[Path], user_settings: dict, run_env: dict[str, str],
                    report: Path, *, trust: bool = False) -> None:
    """Installs `extensions` in a fresh code-server, opens `ws` in headless Chromium and waits for the probe's
    `report`; every process of the session is ended after. trust: Workspace Trust on, so `ws` opens in
    Restricted Mode (else it is off: every workspace is trusted)."""
    user, exts = tmp_path / "user", tmp_path / "ext"
    (user / "User").mkdir(parents=True)
    (user / "User" / "settings.json").write_text(json.dumps({
        "workbench.startupEditor": "none", "files.autoSave": "off", "files.refactoring.autoSave": False,
        "security.workspace.trust.enabled": trust, "security.workspace.trust.startupPrompt": "never",
        "telemetry.telemetryLevel": "off",
        "extensions.autoCheckUpdates": False, "extensions.autoUpdate": False, "update.mode": "none", **user_settings}))
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "xdg-config"), "XDG_DATA_HOME": str(tmp_path / "xdg-data"),
           "XDG_CACHE_HOME": str(tmp_path / "xdg-cache"), "XDG_STATE_HOME": str(tmp_path / "xdg-state"),
           "REPODOC_CACHE_DIR": str(tmp_path / "cache")}
    for package in extensions:
        subprocess.run([str(CODE_SERVER), "--user-data-dir", str(user), "--extensions-dir", str(exts),
                        "--install-extension", str(package), "--force"], env=env, check=True, capture_output=True,
                       timeout=120)
    port = _free_port()
    server = subprocess.Popen(
        [str(CODE_SERVER), "--auth", "none", "--bind-addr", f"127.0.0.1:{port}", "--disable-telemetry",
         "--disable-update-check", *([] if trust else ["--disable-workspace-trust"]), "--user-data-dir", str(user),
         "--extensions-dir", str(exts), str(ws)], env={**env, **run_env, "REPODOC_PROBE_OUT": str(report)},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1)
                break
            except OSError:
                time.sleep(0.2)
        browser = subprocess.run(
            ["node", str(EXT / "test" / "e2e" / "open_workbench.js"), f"http://127.0.0.1:{port}/?folder={ws}",
             str(report), "150"], env={**env, "PLAYWRIGHT_CORE": str(PLAYWRIGHT)}, capture_output=True, text=True,
            timeout=240)
        assert report.exists(), browser.stderr[-2000:]
    finally:
        os.killpg(server.pid, signal.SIGTERM)  # code-server, its extension host and the language server
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(timeout=10)


def _requires_vscode() -> None:
    _require(CODE_SERVER.exists(), "code-server")
    _require(PLAYWRIGHT.is_dir() and Path("/usr/bin/chromium").exists(), "chromium and playwright-core")


def test_extension_in_real_vscode(vsix: Path, tmp_path: Path, editor_workspace: Path,
                                  immutable_folder: Callable[[Path], AbstractContextManager[bool]]) -> None:
    _requires_vscode()
    probe, standin = _package("probe", tmp_path), _package("python-standin", tmp_path)
    ws = editor_workspace
    sentinels = _hostile_checkout(ws, tmp_path)
    # no repodoc.interpreter: the interpreter selected in the Python extension (a stand-in) runs the server
    chosen = _interpreter(tmp_path / "chosen-python", tmp_path / "chosen.log")
    chosen2 = _interpreter(tmp_path / "chosen-python-2", tmp_path / "chosen-2.log")
    report = tmp_path / "probe.json"
    run_env = {"REPODOC_STANDIN_PYTHON": str(chosen), "REPODOC_STANDIN_PYTHON2": str(chosen2),
               "REPODOC_STANDIN_MARKER2": str(tmp_path / "chosen-2.log")}
    # a page folder nobody can write: the pages that cannot be written are named in the message
    with immutable_folder(ws / "docs" / "data") as immutable:
        _vscode_session(tmp_path, ws, [vsix, probe, standin], {}, run_env, report)
    result = json.loads(report.read_text())
    assert result["ok"], result.get("error")
    assert result["vscode"].startswith("1.100")
    assert result["symbols"][:2] == ["Widget", "make_widget"]
    assert result["summary"]["written"] > 0 and result["summary"]["cancelled"] is False
    assert (ws / "docs" / "index.md").exists() and (ws / "docs" / "pkg" / "core.py_docs.md").exists()
    hover = result["hover"]
    assert "def make_widget(name: str, **options: Any) -> Widget" in hover and "Make a widget from a name." in hover
    assert f"{(ws / 'docs/pkg/core.py_docs.md').as_uri()}#function-make_widget" in hover
    assert result["saved"] is True and result["regenerated"] is True
    assert "saved_in_vscode" in (ws / "docs" / "pkg" / "use.py_kw.md").read_text()
    assert result["opened"].endswith("use.py_docs.md") and result["openedKw"].endswith("use.py_kw.md")
    # settings changed in VS Code are re-sent to the running server
    assert result["symbolsBefore"] >= 2 and result["symbolsAfter"] == ["Widget"]
    # the UI-level check: the hover widget VS Code shows when the mouse rests on the name
    ui = json.loads((tmp_path / "probe-ui.json").read_text())
    assert ui["hover"] and "Make a widget from a name." in ui["hover"], ui
    assert "make_widget" in ui["hover"]
    assert ui["status"].strip() == "RepoDoc", ui  # the status bar item, back to ready after indexing and generating
    # the Python extension's interpreter ran the server, isolated; a new selection restarted it with the new one
    assert "-I -m repodoc_lsp serve" in (tmp_path / "chosen.log").read_text()
    assert "-I -m repodoc_lsp serve" in (tmp_path / "chosen-2.log").read_text()
    assert result["symbolsRestarted"] == ["Widget"]
    # the hostile checkout: nothing of it ran, nothing was written outside it, one message names what was ignored
    for name, path in sentinels.items():
        assert not path.exists(), name
    assert "EVIL-TEMPLATE" not in (ws / "docs" / "pkg" / "core.py_docs.md").read_text()
    ignored = [n for n in ui["notifications"] if "user settings only" in n]
    assert len(ignored) == 1, ui["notifications"]
    for key in ("repodoc.templates", "repodoc.cacheDir", "repodoc.outputDir", "repodoc.interpreter",
                "repodoc.serverCommand"):
        assert key in ignored[0]
    if immutable:
        assert result["summary"]["errors"], result["summary"]
        failed = [n for n in ui["notifications"] if "pages could not be written" in n]
        # data/ holds only notes.txt (a line of data/index.md, no page): its folder's pages fail
        assert len(failed) == 1 and re.search(r"data/(index|doc)\.md: cannot write", failed[0]), ui["notifications"]
    others = [n for n in ui["notifications"] if n not in ignored and "pages written" not in n]
    assert not [n for n in others if "RepoDoc" in n], ui["notifications"]


def test_bad_server_command_gives_one_message(vsix: Path, tmp_path: Path, editor_workspace: Path) -> None:
    """A server command that exits at once: one error message, with the fix, and no other pop-up."""
    _requires_vscode()
    report = tmp_path / "probe.json"
    _vscode_session(tmp_path, editor_workspace, [vsix, _package("probe", tmp_path)],
                    {"repodoc.serverCommand": ["sh", "-c", "echo broken >&2; exit 3"]},
                    {"REPODOC_PROBE_MODE": "bad-command"}, report)
    result = json.loads(report.read_text())
    assert result["ok"], result.get("error")
    ui = json.loads((tmp_path / "probe-ui.json").read_text())
    shown = [n for n in ui["notifications"] if "RepoDoc" in n or "repodoc" in n]
    assert len(shown) == 1, ui["notifications"]
    assert "failed" in shown[0] and "repodoc.serverCommand" in shown[0], shown


def test_restricted_mode(vsix: Path, tmp_path: Path, editor_workspace: Path) -> None:
    """An untrusted workspace: the extension works (limited support), the Python extension's interpreter
    inside the checkout is not used, nor the workspace's own output folder."""
    _requires_vscode()
    ws = editor_workspace
    checked_in = _interpreter(ws / ".venv-python", tmp_path / "checked-in.log")  # found by the Python extension
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _interpreter(bin_dir / "python3", tmp_path / "python3.log")
    # the extension host takes PATH from a login shell: the person's profile puts this python3 first
    home = tmp_path / "home"
    home.mkdir()
    (home / ".bash_profile").write_text(f'export PATH="{bin_dir}:$PATH"\n')
    (home / ".profile").write_text(f'export PATH="{bin_dir}:$PATH"\n')
    (ws / ".vscode").mkdir()
    (ws / ".vscode" / "settings.json").write_text(json.dumps({"repodoc.outputDir": "site"}))
    report = tmp_path / "probe.json"
    _vscode_session(tmp_path, ws, [vsix, _package("probe", tmp_path), _package("python-standin", tmp_path)], {},
                    {"REPODOC_PROBE_MODE": "untrusted", "REPODOC_STANDIN_PYTHON": str(checked_in), "HOME": str(home),
                     "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}, report, trust=True)
    result = json.loads(report.read_text())
    assert result["ok"], result.get("error")
    assert result["trusted"] is False
    assert result["symbols"][:2] == ["Widget", "make_widget"]
    assert not (tmp_path / "checked-in.log").exists()
    assert "-I -m repodoc_lsp serve" in (tmp_path / "python3.log").read_text()
    # the workspace's outputDir is not used (VS Code itself hides the workspace values of the restricted
    # settings from the extension in Restricted Mode, so there is nothing to report)
    assert (ws / "docs" / "index.md").exists() and not (ws / "site").exists()


def test_one_signature_beside_another_python_server(vsix: Path, tmp_path: Path, editor_workspace: Path) -> None:
    """With another Python language server's extension installed (a Pylance stand-in), RepoDoc's hover
    shows only what it adds: one signature in the hover VS Code shows, the other server's."""
    _requires_vscode()
    report = tmp_path / "probe.json"
    _vscode_session(tmp_path, editor_workspace, [vsix, _package("probe", tmp_path),
                                                 _package("pylance-standin", tmp_path)],
                    {"repodoc.interpreter": sys.executable}, {"REPODOC_PROBE_MODE": "beside"}, report)
    result = json.loads(report.read_text())
    assert result["ok"], (result.get("error"), result.get("lastHovers"), result.get("summary"))
    hovers = result["hovers"]
    signatures = [h for h in hovers if "def make_" in h]
    assert len(signatures) == 1 and "(STANDIN) def make_shape" in signatures[0], hovers
    ours = [h for h in hovers if "repodoc" in h]
    assert len(ours) == 1 and ours[0].startswith("**repodoc** · **Defined in** `pkg/core.py:"), hovers
    assert "#function-make_widget" in ours[0]


def test_stale_reference_diagnostic_and_quick_fix(vsix: Path, tmp_path: Path, editor_workspace: Path) -> None:
    """A class renamed (Gizmo -> Gizmos: one edit away, a confident suggestion without git) and a
    README still naming the old one: VS Code lists the Warning
    from `repodoc`, its code-action provider offers the quick fix, and the applied edit puts the new name."""
    _requires_vscode()
    ws = editor_workspace
    (ws / "pkg" / "gizmo.py").write_text('"""Gizmos."""\n\n\nclass Gizmos:\n    """Was Gizmo."""\n')
    readme = ws / "README.md"
    readme.write_text(readme.read_text() + "\nThe `pkg.gizmo.Gizmo` class does the rest.\n")
    report = tmp_path / "probe.json"
    _vscode_session(tmp_path, ws, [vsix, _package("probe", tmp_path)], {"repodoc.interpreter": sys.executable},
                    {"REPODOC_PROBE_MODE": "refs"}, report)
    result = json.loads(report.read_text())
    assert result["ok"], (result.get("error"), result.get("lastActions"), result.get("lastActionError"))
    assert result["count"] == 1 and result["severity"] == "Warning", result
    assert "did you mean `pkg.gizmo.Gizmos`?" in result["message"]
    assert result["fixes"] == ["Replace with `pkg.gizmo.Gizmos`"] and result["applied"] is True
    assert result["fixed"] == "The `pkg.gizmo.Gizmos` class does the rest."
    assert result["after"] == 0  # the unsaved fixed text, checked after typing stops
    assert result["dirtyAfterEdit"] is True and result["dirty"] is True, result
    assert result["saved"] is True and result["saveTries"] >= 1, result
    assert readme.read_text().endswith("The `pkg.gizmo.Gizmos` class does the rest.\n")
