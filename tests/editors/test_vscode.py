"""The VS Code extension (editors/vscode): built and packaged for real, then installed in a real
VS Code (code-server 4.100.3) driven by headless Chromium, against the real server."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
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


def test_extension_in_real_vscode(vsix: Path, tmp_path: Path, editor_workspace: Path) -> None:
    _require(CODE_SERVER.exists(), "code-server")
    _require(PLAYWRIGHT.is_dir() and Path("/usr/bin/chromium").exists(), "chromium and playwright-core")
    probe_src = EXT / "test" / "e2e" / "probe"
    probe = tmp_path / "probe"
    shutil.copytree(probe_src, probe)
    subprocess.run([str(EXT / "node_modules" / ".bin" / "vsce"), "package", "--no-dependencies", "-o",
                    "probe.vsix"], cwd=probe, check=True, capture_output=True, timeout=120)
    ws = editor_workspace
    user, exts = tmp_path / "user", tmp_path / "ext"
    (user / "User").mkdir(parents=True)
    (user / "User" / "settings.json").write_text(json.dumps({
        "repodoc.interpreter": sys.executable, "workbench.startupEditor": "none",
        "security.workspace.trust.enabled": False, "telemetry.telemetryLevel": "off",
        "extensions.autoCheckUpdates": False, "extensions.autoUpdate": False, "update.mode": "none"}))
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "xdg-config"), "XDG_DATA_HOME": str(tmp_path / "xdg-data"),
           "XDG_CACHE_HOME": str(tmp_path / "xdg-cache"), "XDG_STATE_HOME": str(tmp_path / "xdg-state"),
           "REPODOC_CACHE_DIR": str(tmp_path / "cache")}
    for package in (vsix, probe / "probe.vsix"):
        subprocess.run([str(CODE_SERVER), "--user-data-dir", str(user), "--extensions-dir", str(exts),
                        "--install-extension", str(package), "--force"], env=env, check=True, capture_output=True,
                       timeout=120)
    report = tmp_path / "probe.json"
    port = _free_port()
    server = subprocess.Popen(
        [str(CODE_SERVER), "--auth", "none", "--bind-addr", f"127.0.0.1:{port}", "--disable-telemetry",
         "--disable-update-check", "--disable-workspace-trust", "--user-data-dir", str(user), "--extensions-dir",
         str(exts), str(ws)], env={**env, "REPODOC_PROBE_OUT": str(report)}, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, start_new_session=True)
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
