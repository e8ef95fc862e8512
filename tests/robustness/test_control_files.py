"""The files repodoc reads that are not sources (the workspace's pyproject.toml, every folder's .gitignore,
.git/info/exclude, the output folder's manifest and journal) as a hostile repository makes them: a link out
of the workspace, a FIFO (opening one waits for a writer), a folder, a file past the size bound (sparse: no
disk). Through the real CLI: each is left unread with a reason, never followed, waited on or read whole, and
the run goes on (exit 0)."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import sys
from pathlib import Path

import pytest
import pytest_lsp
from helpers import make_workspace, run_cli
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from repodoc_lsp.output.manifest import JOURNAL, MANIFEST, MAX_MANIFEST_BYTES
from repodoc_lsp.store.regular import CONTROL_MAX_BYTES

# What each file says if it is read: every one would leave pkg/ out, or name the project "stolen".
_OUTSIDE = {"pyproject.toml": '[project]\nname = "stolen"\n[tool.repodoc]\nexclude = ["pkg/"]\n',
            ".gitignore": "pkg/\n", "pkg/.gitignore": "a.py\n", ".git/info/exclude": "pkg/\n"}
_CONTROL = [*_OUTSIDE, f"docs/{MANIFEST}", f"docs/{JOURNAL}"]


def _hostile(ws: Path, tmp_path: Path, rel: str, kind: str) -> None:
    path = ws / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "outside":
        target = tmp_path / "elsewhere" / rel.replace("/", "_")
        target.parent.mkdir(exist_ok=True)
        target.write_text(_OUTSIDE.get(rel, "x\n"))
        path.symlink_to(target)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    else:  # large: past the bound by one byte, sparse
        with open(path, "wb") as fh:
            fh.truncate((MAX_MANIFEST_BYTES if rel.startswith("docs/") else CONTROL_MAX_BYTES) + 1)


@pytest.mark.parametrize("kind", ["outside", "dev-zero", "fifo", "folder", "large"])
def test_hostile_control_files_are_not_read_and_the_run_goes_on(tmp_path: Path, kind: str) -> None:
    ws = make_workspace(tmp_path / "ws", {"pkg/a.py": "def f():\n    '''Doc.'''\n", "docs/index.md": ""})
    (ws / "docs/index.md").unlink()
    for rel in _CONTROL:
        _hostile(ws, tmp_path, rel, kind)
    proc = run_cli("generate", str(ws), "--json", env={**os.environ, "REPODOC_CACHE_DIR": str(tmp_path / "cache")},
                   timeout=90)
    assert proc.returncode == 0, proc.stderr
    why = {"outside": "symbolic link to outside the workspace", "dev-zero": "symbolic link to outside the workspace",
           "fifo": "not a regular file", "folder": "not a regular file",
           "large": f"too large ({CONTROL_MAX_BYTES + 1:,} bytes; at most {CONTROL_MAX_BYTES:,} are read)"}[kind]
    warnings = proc.stderr.splitlines()
    assert warnings[0] == f"repodoc: warning: {ws / 'pyproject.toml'}: not read ({why}); using the default", warnings
    manifest = ("unreadable: " + why.replace("workspace", "output folder").replace(
        f"{CONTROL_MAX_BYTES + 1:,} bytes; at most {CONTROL_MAX_BYTES:,}",
        f"{MAX_MANIFEST_BYTES + 1:,} bytes; at most {MAX_MANIFEST_BYTES:,}"))
    assert warnings[1] == (f"repodoc: warning: {ws / 'docs' / MANIFEST}: damaged manifest ({manifest}): ignored, "
                           "it is rebuilt"), warnings
    journal = (f"repodoc: warning: {ws / 'docs' / JOURNAL}: not a file (a folder?): pages are written without a "
               "journal (a run killed while writing leaves pages the next run takes for edited ones)")
    assert set(warnings[2:]) == ({journal} if kind == "folder" else set()), warnings  # a link, FIFO: replaced
    skipped = json.loads(proc.stdout)["skipped"]
    if kind == "large":  # git reads it: what it ignores is unknown, so nothing beside it is an input
        for rel in (".gitignore", ".git/info/exclude"):
            reason = f"ignore file not read: {why}; the files beside it are left out"
            assert {"path": rel, "reason": reason} in skipped, skipped
        assert not (ws / "docs/pkg/a.py_docs.md").exists()
        return
    for rel in (".gitignore", "pkg/.gitignore", ".git/info/exclude"):  # (and its skip as an input, if any)
        assert {"path": rel, "reason": f"ignore file not read: {why}"} in skipped, skipped
    assert (ws / "docs/pkg/a.py_docs.md").is_file()
    pages = [p.read_text() for p in (ws / "docs").rglob("*.md")]
    assert pages and not any("stolen" in text for text in pages)
    if kind == "outside":  # nothing written through the links either (the journal's was appended to)
        assert {p.name: p.read_text() for p in (tmp_path / "elsewhere").iterdir()} == {
            rel.replace("/", "_"): _OUTSIDE.get(rel, "x\n") for rel in _CONTROL}


def test_a_pyproject_of_the_wrong_shape_is_no_traceback(tmp_path: Path) -> None:
    """`tool` or `project` that is not a table: no [tool.repodoc], no project name; the run goes on."""
    ws = make_workspace(tmp_path / "ws", {"pyproject.toml": 'tool = 1\nproject = "x"\n', "a.py": "x = 1\n"})
    proc = run_cli("generate", str(ws), "-q", env={**os.environ, "REPODOC_CACHE_DIR": str(tmp_path / "cache")})
    assert (proc.returncode, proc.stderr) == (0, "")
    assert (ws / "docs/a.py_docs.md").is_file()


# -- the language server over stdio -----------------------------------------------------------------

@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "repodoc_lsp", "serve"]))
async def client(lsp_client: LanguageClient):
    yield lsp_client
    await asyncio.wait_for(lsp_client.shutdown_session(), 10)


async def test_the_server_keeps_answering_over_hostile_control_files(client: LanguageClient, tmp_path: Path) -> None:
    """A pyproject.toml of the wrong shape, a .gitignore linking out, a journal that is a FIFO (the page
    process waited on it for ever) and a manifest linking to /dev/zero: generate answers, pages are written."""
    ws = make_workspace(tmp_path / "ws", {"pyproject.toml": "tool = 1\nproject = 2\n",
                                          "pkg/a.py": "def hello():\n    '''Doc.'''\n", "docs/notes.md": "mine\n"})
    _hostile(ws, tmp_path, ".gitignore", "outside")
    os.mkfifo(ws / "docs" / JOURNAL)
    (ws / "docs" / MANIFEST).symlink_to("/dev/zero")
    client.feature(types.CLIENT_REGISTER_CAPABILITY)(lambda params: None)
    client.set_configuration({}, section="repodoc")
    await client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"), root_uri=ws.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=ws.as_uri(), name=ws.name)],
        initialization_options={"cacheDir": str(tmp_path / "cache"), "outputDir": "docs"}))
    result = await asyncio.wait_for(client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="repodoc.generate")), 60)
    assert "pkg/a.py_docs.md" in result["writtenPages"], result
    assert {"path": ".gitignore", "reason": "ignore file not read: symbolic link to outside the workspace"} \
        in result["skipped"], result
    found = await asyncio.wait_for(client.workspace_symbol_async(types.WorkspaceSymbolParams(query="hello")), 20)
    assert [s.name for s in found or []] == ["hello"]
    assert (tmp_path / "elsewhere/.gitignore").read_text() == "pkg/\n"
    journal = ws / "docs" / JOURNAL  # the FIFO replaced, and gone with the manifest's save
    assert not os.path.lexists(journal) or stat.S_ISREG(journal.lstat().st_mode)


def test_an_ignore_file_of_many_patterns_is_used(tmp_path: Path) -> None:
    """5,000 lines (each a pattern) were more than RE2 compiles into one matcher: that was a traceback,
    then the file was left out whole (a skip) and what it ignores became pages; now every line counts."""
    ws = make_workspace(tmp_path / "ws", {"pkg/a.py": "def f():\n    '''Doc.'''\n", "generated_4321.py": "x = 1\n",
                                          ".gitignore": "".join(f"generated_{i}.py\n" for i in range(5000))})
    proc = run_cli("generate", str(ws), "--json", env={**os.environ, "REPODOC_CACHE_DIR": str(tmp_path / "cache")})
    assert proc.returncode == 0, proc.stderr
    assert [s for s in json.loads(proc.stdout)["skipped"] if s["path"] == ".gitignore"] == []
    assert (ws / "docs/pkg/a.py_docs.md").is_file()
    assert not (ws / "docs/generated_4321.py_docs.md").exists()


def test_settings_of_too_many_patterns_are_a_bad_setting(tmp_path: Path) -> None:
    """[tool.repodoc] exclude of 5,000 patterns: exit 2 naming the key (a bad setting), no traceback."""
    patterns = ", ".join(f'"generated_{i}.py"' for i in range(5000))
    ws = make_workspace(tmp_path / "ws", {"a.py": "x = 1\n",
                                          "pyproject.toml": f"[tool.repodoc]\nexclude = [{patterns}]\n"})
    proc = run_cli("generate", str(ws), "-q", env={**os.environ, "REPODOC_CACHE_DIR": str(tmp_path / "cache")})
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.splitlines() == [f"repodoc: error: {ws / 'pyproject.toml'} [tool.repodoc]: exclude: "
                                        "5,000 patterns: more than can be matched together"], proc.stderr
