"""A hostile checkout runs nothing and writes nothing outside itself (README "Trust"): settings it
may not set, sandboxed templates, a data-only private cache, the output folder, file modes."""

from __future__ import annotations

import asyncio
import json
import os
import pickle
import re
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import pytest_lsp
from helpers import make_workspace, run_cli
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from repodoc_lsp.pipeline.generate import PARALLEL_PAGES
from repodoc_lsp.store.cache import ANALYSIS_VERSION, FactsCache, digest

SOURCE = "def hello():\n    '''Say hello.'''\n"


def _env(tmp: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REPODOC_")}
    return {**env, "REPODOC_CACHE_DIR": str(tmp / "cache"), **extra}


def _trap(sentinel: Path) -> str:
    """A template that runs a command in a plain Jinja2 environment."""
    return "{{ cycler.__init__.__globals__.os.system('touch " + str(sentinel) + "') }}\n"


class _Runs:
    """Unpickling this runs a command (what a cache row of a hostile checkout would hold)."""

    def __init__(self, sentinel: Path) -> None:
        self.sentinel = sentinel

    def __reduce__(self) -> tuple:
        return (os.system, (f"touch {self.sentinel}",))


# -- settings a workspace may not set ---------------------------------------------------------------

def test_workspace_templates_cache_dir_and_python_path_are_refused(tmp_path: Path) -> None:
    sentinel = tmp_path / "sentinel"
    root = make_workspace(tmp_path / "ws", {
        "pyproject.toml": '[tool.repodoc]\ntemplates = "tpl"\ncache-dir = "cache"\n'
                          'python-path = ".venv/bin/python"\n',
        "a.py": SOURCE, "tpl/file_kw.md.j2": _trap(sentinel)})
    proc = run_cli("generate", str(root), env=_env(tmp_path))
    assert proc.returncode == 0, proc.stderr
    pyproject = root / "pyproject.toml"
    for key in ("templates", "cache-dir", "python-path"):
        assert f"repodoc: warning: {pyproject} [tool.repodoc]: {key}: refused: the workspace may not set it" \
               in proc.stderr
    assert proc.stderr.count("refused") == 3
    assert not sentinel.exists()
    assert "## Functions" in (root / "docs/a.py_kw.md").read_text()  # the built-in template
    assert not (root / "cache").exists() and (tmp_path / "cache").is_dir()  # the person's cache


@pytest.mark.parametrize("how", ["flag", "environment"])
def test_person_templates_render_in_a_sandbox(tmp_path: Path, how: str) -> None:
    sentinel = tmp_path / "sentinel"
    root = make_workspace(tmp_path / "ws", {"a.py": SOURCE, "tpl/file_kw.md.j2": _trap(sentinel)})
    if how == "flag":
        proc = run_cli("generate", str(root), "--templates", "tpl", env=_env(tmp_path))
    else:
        proc = run_cli("generate", str(root), env=_env(tmp_path, REPODOC_TEMPLATES=str(root / "tpl")))
    assert proc.returncode == 3  # the page cannot be rendered: an error naming it, the others are written
    assert "a.py_kw.md: cannot render: " in proc.stderr
    assert "file_kw.md.j2: refused by the template sandbox" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not sentinel.exists()


@pytest.mark.parametrize(("name", "text", "error"), [
    ("file_kw.md.j2", "{% if %}\n", "line 1: TemplateSyntaxError"),
    # included by the file page (a class's entry): it compiled only at the first class's page, which
    # failed alone (exit 3, naming file_docs.md.j2 and no line) once the other pages were written
    ("_class.md.j2", "{# mine #}\n{{ entry.name | shout }}\n",
     "line 2: TemplateAssertionError: No filter named 'shout'"),
])
def test_a_broken_person_template_is_one_error_line(tmp_path: Path, name: str, text: str, error: str) -> None:
    """A template of the person's that does not compile stops the run before the scan (no file analysed)
    and any page, naming its file and line (exit 2: bad input)."""
    root = make_workspace(tmp_path / "ws", {"a.py": SOURCE + "\n\nclass K:\n    pass\n", f"tpl/{name}": text})
    proc = run_cli("generate", str(root), "--templates", "tpl", env=_env(tmp_path))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.startswith(f"repodoc: error: template {root / 'tpl' / name}, {error}"), proc.stderr
    assert not (root / "docs").exists() and not list(tmp_path.glob("cache/facts*"))


def test_person_templates_still_work(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", {
        "a.py": SOURCE,
        "tpl/file_kw.md.j2": "{{ marker }}\n{% for heading, entries in groups %}{{ heading }} {{ entries|length }}\n"
                             "{% endfor %}"})
    proc = run_cli("generate", str(root), "--templates", "tpl", env=_env(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert (root / "docs/a.py_kw.md").read_text().splitlines()[1:] == ["Functions 1"]


# -- the cache --------------------------------------------------------------------------------------

def _plant(db: Path, key: str, imports: object, data: object, used: int | None = None) -> None:
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE IF NOT EXISTS facts (key TEXT PRIMARY KEY, imports TEXT, data TEXT, used INTEGER)")
    con.execute("INSERT OR REPLACE INTO facts VALUES (?, ?, ?, ?)",
                (key, imports, data, int(time.time() // 86_400) if used is None else used))
    con.commit()
    con.close()


def test_a_shipped_cache_with_pickles_runs_nothing(tmp_path: Path) -> None:
    sentinel = tmp_path / "sentinel"
    root = make_workspace(tmp_path / "ws", {"pyproject.toml": '[tool.repodoc]\ncache-dir = "cache"\n',
                                            "a.py": SOURCE})
    (root / "cache").mkdir()
    bomb = pickle.dumps(_Runs(sentinel))
    _plant(root / "cache" / f"facts-{ANALYSIS_VERSION}.sqlite", digest(SOURCE.encode(), "a.py"), bomb, bomb)
    proc = run_cli("generate", str(root), "--json", env=_env(tmp_path))  # the workspace's cache-dir: refused
    assert proc.returncode == 0, proc.stderr
    assert "cache-dir: refused" in proc.stderr
    # The person points the cache at it: the rows are not JSON of the facts, so they are misses.
    proc = run_cli("generate", str(root), "--json", env=_env(tmp_path, REPODOC_CACHE_DIR=str(root / "cache")))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["cached"] == 0
    assert not sentinel.exists()
    assert "def hello" in (root / "docs/a.py_docs.md").read_text()


def test_damaged_rows_are_misses(tmp_path: Path) -> None:
    files = {f"m{i}.py": f"import os\n\ndef f{i}(x: int) -> int:\n    '''Doc {i}.'''\n    return x\n" for i in range(6)}
    root = make_workspace(tmp_path / "ws", files)
    assert run_cli("generate", str(root), env=_env(tmp_path)).returncode == 0
    pages = {p: p.read_bytes() for p in (root / "docs").rglob("*.md")}
    db = tmp_path / "cache" / f"facts-{ANALYSIS_VERSION}.sqlite"
    keys = [digest(files[f"m{i}.py"].encode(), f"m{i}.py") for i in range(6)]
    good, imports = sqlite3.connect(db).execute("SELECT data, imports FROM facts WHERE key = ?",
                                                (keys[0],)).fetchone()
    wrong_type = json.loads(good)
    wrong_type["symbols"][0]["line"] = "1; import os"
    damaged = [
        ("not json", "{nope"),  # garbage
        (imports, json.dumps({"language": "python", "lines": 5, "surprise": 1})),  # unknown key
        ('{"a": 1}', json.dumps(wrong_type)),  # imports of the wrong shape; a string for a line number
        ("[" * 100_000, "[" * 100_000),  # nested too deep
        (imports, json.dumps({"language": "cobol", "lines": 1})),  # no such language
        (None, None),
    ]
    for key, (imports, data) in zip(keys, damaged, strict=True):
        _plant(db, key, imports, data)
    proc = run_cli("generate", str(root), "--json", env=_env(tmp_path))
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["files"] == 6 and summary["errors"] == [] and "Traceback" not in proc.stderr
    assert {p: p.read_bytes() for p in (root / "docs").rglob("*.md")} == pages
    shutil.rmtree(root / "docs")  # every page rendered: whole facts loaded from the damaged rows
    proc = run_cli("generate", str(root), "--json", env=_env(tmp_path))
    assert proc.returncode == 0 and json.loads(proc.stdout)["errors"] == [], proc.stderr
    assert {p: p.read_bytes() for p in (root / "docs").rglob("*.md")} == pages
    cache = FactsCache(tmp_path / "cache")  # every row was written again, whole
    assert len(cache.get_many(keys)) == 6 and len(cache.get_imports_many(keys)) == 6


def test_cache_is_private_and_pruned(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o755)
    old = cache / "facts-0.0.1-1.sqlite"
    old.write_bytes(b"an old version's database")
    os.utime(old, (time.time() - 3 * 86_400,) * 2)
    recent_other = cache / "facts-9.9.9-1.sqlite"  # another version, used today: kept
    recent_other.write_bytes(b"x")
    db = cache / f"facts-{ANALYSIS_VERSION}.sqlite"
    _plant(db, "f" * 40, "[]", json.dumps({"language": "text", "lines": 1}), used=1)  # unused since 1970
    os.chmod(db, 0o644)
    root = make_workspace(tmp_path / "ws", {"a.py": SOURCE})
    proc = run_cli("generate", str(root), env=_env(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert cache.stat().st_mode & 0o777 == 0o700
    assert db.stat().st_mode & 0o777 == 0o600
    assert all(p.stat().st_mode & 0o077 == 0 for p in cache.glob(f"facts-{ANALYSIS_VERSION}.sqlite*"))
    assert not old.exists() and recent_other.exists()
    keys = [k for (k,) in sqlite3.connect(db).execute("SELECT key FROM facts")]
    assert keys == [digest(SOURCE.encode(), "a.py")]


def test_a_relative_cache_folder_is_not_taken_from_the_working_folder(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", {"a.py": SOURCE})
    env = _env(tmp_path)
    del env["REPODOC_CACHE_DIR"]
    env.update(XDG_CACHE_HOME="relative-cache", HOME=str(tmp_path / "home"))
    proc = run_cli("generate", str(root), env=env, cwd=root)
    assert proc.returncode == 0, proc.stderr
    assert not (root / "relative-cache").exists()
    assert (tmp_path / "home/.cache/repodoc").is_dir()


def test_a_locked_cache_is_skipped(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", {"a.py": SOURCE})
    assert run_cli("generate", str(root), env=_env(tmp_path)).returncode == 0
    holder = sqlite3.connect(tmp_path / "cache" / f"facts-{ANALYSIS_VERSION}.sqlite", isolation_level=None)
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("INSERT INTO facts VALUES ('held', '[]', '{}', 0)")
    try:
        (root / "b.py").write_text("y = 2\n")
        proc = run_cli("generate", str(root), "--json", env=_env(tmp_path), timeout=60)
    finally:
        holder.close()
    assert proc.returncode == 0, proc.stderr
    assert "repodoc: warning: analysis cache" in proc.stderr and "locked" in proc.stderr
    assert json.loads(proc.stdout)["analysed"] == 2
    assert (root / "docs/b.py_docs.md").exists()


# -- the output folder ------------------------------------------------------------------------------

def test_modules_at_the_workspace_root_do_not_run_in_worker_processes(tmp_path: Path) -> None:
    """`repodoc generate` run from the workspace's root (as in CI): the render workers' fork server
    starts as `python -c`, whose import path began with the working folder, so the workspace's own
    `struct.py`, `signal.py`... ran there (found after render workers came from a fork server)."""
    root = tmp_path / "ws"
    (root / "pkg").mkdir(parents=True)
    sentinel = tmp_path / "ran"
    for name in ("struct", "signal", "socket", "selectors", "threading", "types", "errno", "warnings"):
        (root / f"{name}.py").write_text(f"open({str(sentinel)!r}, 'a').write({name!r} + chr(10))\n")
    for i in range(250):  # enough pages for render workers (PARALLEL_PAGES)
        (root / "pkg" / f"m{i}.py").write_text(f"def f{i}(x):\n    \"\"\"Doc.\"\"\"\n    return x\n")
    repodoc = Path(sys.executable).with_name("repodoc")  # the console script: its own path has no workspace
    proc = subprocess.run([str(repodoc), "generate", ".", "--jobs", "2"], cwd=root, env=_env(tmp_path),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    written = re.search(r"(\d+) pages written", proc.stdout)
    assert written and int(written[1]) >= PARALLEL_PAGES, proc.stdout  # else no render worker ran
    assert not sentinel.exists(), sentinel.read_text()


def _outside_cases(tmp: Path) -> dict[str, tuple[str, str]]:
    """name -> (pyproject [tool.repodoc] lines, what the error line says)."""
    return {
        "parent": ('output = "../x"\n', "outside the workspace"),
        "absolute": (f'output = "{tmp / "abs"}"\n', "outside the workspace"),
        "root": ('output = "."\n', "is the workspace folder"),
        "sources": ('output = "src"\n', "holds Python sources"),
        "symlink": ("", "outside the workspace"),
    }


@pytest.mark.parametrize("case", ["parent", "absolute", "root", "sources", "symlink"])
def test_output_must_stay_inside_the_workspace(tmp_path: Path, case: str) -> None:
    lines, says = _outside_cases(tmp_path)[case]
    root = make_workspace(tmp_path / "ws", {"pyproject.toml": "[tool.repodoc]\n" + lines, "a.py": SOURCE,
                                            "src/pkg/__init__.py": "", "src/pkg/m.py": SOURCE})
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    if case == "symlink":
        (root / "docs").symlink_to("../elsewhere")
    before = sorted(p.name for p in root.rglob("*"))
    proc = run_cli("generate", str(root), env=_env(tmp_path))
    assert proc.returncode == 2
    lines_out = proc.stderr.splitlines()
    assert len(lines_out) == 1 and lines_out[0].startswith("repodoc: error: ") and says in lines_out[0]
    assert ("output" in lines_out[0]) and (case == "symlink" or "pyproject.toml [tool.repodoc] output" in lines_out[0])
    assert proc.stdout == ""
    assert not (tmp_path / "cache").exists()  # before any analysis
    assert list(elsewhere.iterdir()) == [] and not (tmp_path / "x").exists() and not (tmp_path / "abs").exists()
    assert sorted(p.name for p in root.rglob("*")) == before


def test_a_docs_folder_with_its_own_conf_py_is_an_output_folder(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", {"a.py": SOURCE, "docs/conf.py": "project = 'x'\n",
                                            "pyproject.toml": '[tool.repodoc]\noutput = "docs"\n',  # chosen
                                            "docs/_ext/roles.py": "def setup(app):\n    pass\n",
                                            "lib/tool.py": SOURCE})
    assert run_cli("generate", str(root), env=_env(tmp_path)).returncode == 0
    proc = run_cli("generate", str(root), "--out", str(root / "lib"), env=_env(tmp_path))
    assert proc.returncode == 2 and f"holds Python sources ({root / 'lib/tool.py'})" in proc.stderr


def test_out_flag_may_leave_the_workspace_but_not_be_a_file(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", {"a.py": SOURCE, "notes.txt": "mine\n"})
    proc = run_cli("generate", str(root), "--out", str(root / "notes.txt"), env=_env(tmp_path))
    assert proc.returncode == 2 and "--out" in proc.stderr and "exists and is not a folder" in proc.stderr
    assert (root / "notes.txt").read_text() == "mine\n" and not (tmp_path / "cache").exists()
    proc = run_cli("generate", str(root), "--out", str(root), env=_env(tmp_path))
    assert proc.returncode == 2 and "is the workspace folder" in proc.stderr
    proc = run_cli("generate", str(root), "--out", str(tmp_path / "site"), env=_env(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "site/a.py_docs.md").exists()


# -- modes ------------------------------------------------------------------------------------------

def _generate_with_umask(root: Path, tmp: Path, umask: int) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "repodoc_lsp", "generate", str(root), "--json"],
                          env=_env(tmp), capture_output=True, text=True, timeout=120, umask=umask)


def test_pages_never_widen_who_can_read_a_source(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", {"a.py": SOURCE, "secret.py": "TOKEN = 'hunter2'\n",
                                            "team.py": "GROUP = 'teamsecret'\n"})
    os.chmod(root / "secret.py", 0o600)
    os.chmod(root / "team.py", 0o640)
    proc = _generate_with_umask(root, tmp_path, 0o022)
    assert proc.returncode == 0, proc.stderr
    skipped = {s["path"]: s["reason"] for s in json.loads(proc.stdout)["skipped"]}
    assert skipped["secret.py"] == "private (mode 0600; pages of mode 0644 would let its group and others read it)"
    assert skipped["team.py"] == "private (mode 0640; pages of mode 0644 would let others read it)"
    assert not any("hunter2" in p.read_text() or "teamsecret" in p.read_text() for p in (root / "docs").rglob("*.md"))
    assert (root / "docs/a.py_docs.md").stat().st_mode & 0o777 == 0o644
    # With a private umask the pages are private too: the same sources are documented.
    proc = _generate_with_umask(root, tmp_path, 0o077)
    assert proc.returncode == 0, proc.stderr
    assert "hunter2" in (root / "docs/secret.py_docs.md").read_text()
    assert (root / "docs/secret.py_docs.md").stat().st_mode & 0o777 == 0o600


# -- the language server over stdio -----------------------------------------------------------------

@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "repodoc_lsp", "serve"],
                                              server_env=_env(Path("/nonexistent"))))
async def client(lsp_client: LanguageClient):
    yield lsp_client
    await asyncio.wait_for(lsp_client.shutdown_session(), 10)


async def _start(client: LanguageClient, root: Path, options: dict) -> None:
    client.feature(types.CLIENT_REGISTER_CAPABILITY)(lambda params: None)
    client.set_configuration({}, section="repodoc")
    await client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"), root_uri=root.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
        initialization_options=options))


async def _until(predicate: Callable[[], object], timeout: float = 30) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise TimeoutError("condition not met in time")
        await asyncio.sleep(0.05)


def _messages(client: LanguageClient) -> list[str]:
    return [m.message for m in client.messages]


async def _save(client: LanguageClient, path: Path) -> None:
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=path.as_uri(), language_id="python", version=1, text=path.read_text())))
    path.write_text(path.read_text() + "\n\ndef added():\n    pass\n")
    client.text_document_did_save(types.DidSaveTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=path.as_uri())))


async def test_server_refuses_the_workspace_settings_and_writes_nothing_outside(
        client: LanguageClient, tmp_path: Path) -> None:
    sentinel = tmp_path / "sentinel"
    elsewhere = tmp_path / "x"
    root = make_workspace(tmp_path / "ws", {
        "pyproject.toml": '[tool.repodoc]\ntemplates = "tpl"\ncache-dir = "cache"\n'
                          'python-path = "/usr/bin/python3"\noutput = "../x"\n',
        "a.py": SOURCE, "tpl/file_kw.md.j2": _trap(sentinel)})
    await _start(client, root, {"cacheDir": str(tmp_path / "cache")})
    await _until(lambda: len(client.messages) >= 4)
    pyproject = root / "pyproject.toml"
    texts = _messages(client)
    for key in ("templates", "cache-dir", "python-path"):
        assert any(t.startswith(f"repodoc: {pyproject} [tool.repodoc]: {key}: refused") for t in texts), texts
    refusal = [m for m in client.messages if "output '../x'" in m.message]
    assert len(refusal) == 1 and refusal[0].type == types.MessageType.Error
    assert f"{pyproject} [tool.repodoc] output '../x'" in refusal[0].message
    await _save(client, root / "a.py")
    with pytest.raises(JsonRpcException, match="outside the workspace"):
        await client.workspace_execute_command_async(types.ExecuteCommandParams(command="repodoc.generate"))
    await asyncio.sleep(1)  # a save's regeneration would have written by now
    assert not elsewhere.exists() and not sentinel.exists() and not (root / "cache").exists()
    assert len([m for m in client.messages if "output '../x'" in m.message]) == 1


async def test_server_person_settings_are_checked_and_sandboxed(client: LanguageClient, tmp_path: Path) -> None:
    sentinel = tmp_path / "sentinel"
    root = make_workspace(tmp_path / "ws", {"a.py": SOURCE, "tpl/file_kw.md.j2": _trap(sentinel)})
    await _start(client, root, {"cacheDir": str(tmp_path / "cache"), "templates": "tpl",
                                "pythonPath": str(tmp_path / "no-such-python")})
    await _until(lambda: client.messages)
    assert _messages(client) == [f"repodoc: settings: pythonPath: {tmp_path / 'no-such-python'}: not an "
                                 "executable interpreter file; using the default"]
    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(command="repodoc.generate"))
    assert "a.py_kw.md" in [e["path"] for e in result["errors"]]  # every _kw.md page: the template's
    assert all("refused by the template sandbox" in e["reason"] for e in result["errors"])
    assert not sentinel.exists()
    assert (tmp_path / "cache").stat().st_mode & 0o777 == 0o700


async def test_server_skips_a_locked_cache(client: LanguageClient, tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", {"a.py": SOURCE})
    assert run_cli("generate", str(root), env=_env(tmp_path)).returncode == 0
    holder = sqlite3.connect(tmp_path / "cache" / f"facts-{ANALYSIS_VERSION}.sqlite", isolation_level=None)
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("INSERT INTO facts VALUES ('held', '[]', '{}', 0)")
    try:
        await _start(client, root, {"cacheDir": str(tmp_path / "cache")})
        await _until(lambda: client.messages)
        assert "analysis cache" in client.messages[0].message and "locked" in client.messages[0].message
        found: list = []

        async def search() -> None:
            found[:] = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="hello")) or []
        for _ in range(100):
            await search()
            if found:
                break
            await asyncio.sleep(0.1)
        assert [s.name for s in found] == ["hello"]  # analysed without the cache
    finally:
        holder.close()
