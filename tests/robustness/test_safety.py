"""Nothing from the workspace runs, and nothing is written outside the output folder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from helpers import make_workspace, regen_processes, until_the_process_writes

from repodoc_lsp.output.manifest import MANIFEST


def _generate(root: Path, tmp: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "repodoc_lsp", "generate", str(root), "--json"],
                          env={**os.environ, "REPODOC_CACHE_DIR": str(tmp / "cache")}, capture_output=True,
                          text=True, timeout=300)


def test_workspace_code_is_never_run(tmp_path: Path) -> None:
    sentinel = tmp_path / "sentinel"
    trap = f"open({str(sentinel)!r}, 'w').write('ran')\n"
    root = make_workspace(tmp_path / "ws", {
        "evil.py": trap + "def hello():\n    pass\n",
        "conftest.py": trap,
        "setup.py": trap,
        "pkg/__init__.py": trap,
        "user.py": "import evil\nfrom pkg import x\nevil.hello()\n",
    })
    proc = _generate(root, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (root / "docs" / "evil.py_kw.md").is_file()
    assert not sentinel.exists()


def test_symlinked_output_subfolder_is_not_followed(tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "keep.txt").write_text("mine\n")
    root = make_workspace(tmp_path / "ws", {"pkg/a.py": "def a():\n    pass\n", "b.py": "x = 1\n",
                                            "pyproject.toml": '[tool.repodoc]\noutput = "docs"\n'})  # docs/ chosen
    (root / "docs").mkdir()
    (root / "docs" / "pkg").symlink_to(other, target_is_directory=True)
    (root / "docs" / "out.md").symlink_to(other / "keep.txt")
    before = sorted((p.name, p.read_bytes()) for p in other.iterdir())
    proc = _generate(root, tmp_path)
    assert proc.returncode in (0, 3), proc.stderr
    assert sorted((p.name, p.read_bytes()) for p in other.iterdir()) == before


def _limit_file_size() -> None:
    import resource
    import signal
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writes past the limit fail with EFBIG, as on a full disk
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))


def test_full_disk_loses_nothing(tmp_path: Path) -> None:
    """A full disk, simulated with RLIMIT_FSIZE (no file may grow past 4 KB): a clear error, old pages kept."""
    root = make_workspace(tmp_path / "ws", {f"m{i}.py": f"def f{i}():\n    pass\n" for i in range(5)})
    assert _generate(root, tmp_path).returncode == 0
    before = {p: p.read_bytes() for p in (root / "docs").rglob("*.md")}
    (root / "m0.py").write_text("".join(f"def big_function_{i}():\n    '''{'x' * 80}'''\n" for i in range(400)))
    proc = subprocess.run([sys.executable, "-m", "repodoc_lsp", "generate", str(root)],
                          env={**os.environ, "REPODOC_CACHE_DIR": str(tmp_path / "cache2")}, capture_output=True,
                          text=True, timeout=300, preexec_fn=_limit_file_size)
    # Generation goes on past a page it cannot write and says which page and why (left as it is).
    assert "Traceback" not in proc.stderr, proc.stderr
    assert "m0.py_kw.md: cannot write: File too large (the previous page is kept)" in proc.stderr, proc.stderr
    assert proc.returncode == 3  # a page that could not be written is an error, not a success
    for path, old in before.items():
        if path.name != "m0.py_kw.md" and path.name != "m0.py_docs.md" and path.parent.name == "docs" \
                and path.name not in ("index.md", "doc.md"):
            assert path.read_bytes() == old, path  # pages of unchanged files are not touched
        assert path.read_text().startswith("<!--"), path  # every page whole
    assert (root / "docs" / "m0.py_kw.md").read_bytes() == before[root / "docs" / "m0.py_kw.md"]
    check = subprocess.run([sys.executable, "-m", "repodoc_lsp", "generate", str(root), "--check"],
                           env={**os.environ, "REPODOC_CACHE_DIR": str(tmp_path / "cache2")}, capture_output=True,
                           text=True, timeout=300)
    assert check.returncode != 0  # the stale page is reported, not hidden
    assert _generate(root, tmp_path).returncode == 0  # with room again, the next run repairs the tree
    assert "big_function_399" in (root / "docs" / "m0.py_kw.md").read_text()
    assert not [p for p in (root / "docs").rglob("*") if p.name.startswith(".") and p.is_file()
                and p.name != MANIFEST]


async def test_the_regeneration_process_imports_nothing_from_the_workspace(tmp_path: Path) -> None:
    """Editors start the server in the workspace folder: neither the server nor the process that
    writes pages on save may import the workspace's `types.py` or `signal/` (PyTorch has both)."""
    import asyncio

    from lsprotocol import types
    from pygls.lsp.client import LanguageClient

    sentinel = tmp_path / "sentinel"
    trap = f"open({str(sentinel)!r}, 'a').write(__name__)\nraise ImportError('workspace module')\n"
    root = make_workspace(tmp_path / "ws", {"types.py": trap, "signal/__init__.py": trap, "pickle.py": trap,
                                            "mod.py": "def first():\n    pass\n",
                                            "docs/.repodoc-manifest.json": '{"pages": {}}'})  # a tree to keep
    client = LanguageClient("safety-test", "1")
    await client.start_io(sys.executable, "-m", "repodoc_lsp", "serve", cwd=str(root),
                          env={**os.environ, "REPODOC_CACHE_DIR": str(tmp_path / "cache")})
    server = client._server  # type: ignore[attr-defined]
    try:
        await client.initialize_async(types.InitializeParams(capabilities=types.ClientCapabilities(),
                                                             root_uri=root.as_uri()))
        client.initialized(types.InitializedParams())
        for _ in range(400):
            if await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="first")):
                break
            await asyncio.sleep(0.05)
        mod, kw = root / "mod.py", root / "docs" / "mod.py_kw.md"

        async def save(n: int) -> None:
            mod.write_text(f"def saved_{n}():\n    pass\n")
            client.text_document_did_save(types.DidSaveTextDocumentParams(
                text_document=types.TextDocumentIdentifier(uri=mod.as_uri())))
            for _ in range(400):
                if kw.is_file() and f"**`saved_{n}`**" in kw.read_text():
                    return
                await asyncio.sleep(0.05)
            raise AssertionError(f"save {n} was not regenerated")

        await save(1000)  # starts the regeneration process
        for _ in range(200):
            if regen := regen_processes(server.pid):
                break
            await asyncio.sleep(0.05)
        assert regen, "no regeneration process started"
        await until_the_process_writes(regen[0], save, lambda: kw.stat().st_size)
        assert not sentinel.exists(), sentinel.read_text()
    finally:
        await asyncio.wait_for(client.shutdown_async(None), 10)
        client.exit(None)
        await asyncio.wait_for(server.wait(), 10)
        await client.stop()


async def test_full_disk_under_the_server_is_told_once_per_burst(tmp_path: Path) -> None:
    """The server under a full disk (RLIMIT_FSIZE, as above): a burst of saves whose pages cannot be
    written shows one window/showMessage naming a page and the reason, and a log line names every
    page; `repodoc.generate` says so too; the old pages are kept."""
    import asyncio

    from lsprotocol import types
    from pygls.lsp.client import LanguageClient

    root = make_workspace(tmp_path / "ws", {f"m{i}.py": f"def f{i}():\n    pass\n" for i in range(5)})
    assert _generate(root, tmp_path).returncode == 0
    before = {p: p.read_bytes() for p in (root / "docs").rglob("*.md")}
    log = tmp_path / "server.log"
    messages: list[types.ShowMessageParams] = []
    client = LanguageClient("full-disk-test", "1")
    client.feature(types.WINDOW_SHOW_MESSAGE)(  # not the analysis cache's own warnings
        lambda params: params.message.startswith(("repodoc on save", "repodoc generate")) and messages.append(params))
    await client.start_io(sys.executable, "-m", "repodoc_lsp", "serve", "--log-file", str(log),
                          env={**os.environ, "REPODOC_CACHE_DIR": str(tmp_path / "cache")},
                          preexec_fn=_limit_file_size)
    server = client._server  # type: ignore[attr-defined]
    try:
        await client.initialize_async(types.InitializeParams(capabilities=types.ClientCapabilities(),
                                                             root_uri=root.as_uri()))
        client.initialized(types.InitializedParams())
        for _ in range(400):
            if await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="f4")):
                break
            await asyncio.sleep(0.05)
        big = "".join(f"def big_function_{i}():\n    '''{'x' * 80}'''\n" for i in range(400))
        for name in ("m0.py", "m1.py"):  # one burst: two files whose kw pages and part pages cannot be written
            (root / name).write_text(big)
            client.text_document_did_save(types.DidSaveTextDocumentParams(
                text_document=types.TextDocumentIdentifier(uri=(root / name).as_uri())))
        for _ in range(400):
            if messages:
                break
            await asyncio.sleep(0.05)
        await asyncio.sleep(1.0)  # any second message of the burst would come by now
        assert len(messages) == 1, [m.message for m in messages]
        told = messages[0]
        assert told.type == types.MessageType.Error
        assert told.message.startswith(f"repodoc on save: {root / 'docs'}/") and " more could not" in told.message
        assert "could not be written (cannot write: File too large); the previous pages are kept" in told.message
        logged = log.read_text()
        assert all(f"{root / 'docs' / page}: cannot write: File too large" in logged
                   for page in ("m0.py_kw.md", "m0.py_docs.part2.md", "m1.py_kw.md", "m1.py_docs.part2.md")), logged
        result = await client.workspace_execute_command_async(types.ExecuteCommandParams(command="repodoc.generate"))
        assert {e["path"] for e in result["errors"]} >= {"m0.py_kw.md", "m1.py_kw.md"}
        for _ in range(100):
            if len(messages) > 1:
                break
            await asyncio.sleep(0.05)
        assert [m.message.split(":")[0] for m in messages] == ["repodoc on save", "repodoc generate"]
        for path in before:
            assert path.read_text().startswith("<!--"), path  # every page whole
        assert (root / "docs" / "m0.py_kw.md").read_bytes() == before[root / "docs" / "m0.py_kw.md"]
    finally:
        await asyncio.wait_for(client.shutdown_async(None), 10)
        client.exit(None)
        await asyncio.wait_for(server.wait(), 10)
        await client.stop()
