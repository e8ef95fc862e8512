"""Which folders become roots, and what the server reads and writes there (issues 12 and 16)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import psutil
import pytest
from lsp_helpers import SAMPLE, build, open_file, position_of, start, symbols, wait_for
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from repodoc_lsp.output.manifest import MANIFEST, OLD_MANIFEST

VENDORED = {"pyproject.toml": '[project]\nname = "vendored"\n',
            "lib.py": 'class VendoredThing:\n    """Vendored, not ours."""\n'}


def _generate(client: LanguageClient, *arguments: object) -> asyncio.Future:
    return client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="repodoc.generate", arguments=list(arguments) or None))


async def _hover(client: LanguageClient, path: Path, needle: str) -> str:
    uri = open_file(client, path)
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=position_of(path.read_text(), needle)))
    return hover.contents.value if hover else ""


async def test_a_file_outside_the_workspace_gets_hover_only(client: LanguageClient, tmp_path: Path) -> None:
    root = build(tmp_path / "ws", SAMPLE)
    outside = build(tmp_path / "vendored", {**VENDORED, "pyproject.toml": VENDORED["pyproject.toml"]
                                            + '[tool.repodoc]\nhover = "off"\nnonsense = 1\n'})
    await start(client, root, options={"cacheDir": str(tmp_path / "c")})
    assert await symbols(client, "Shape")
    # its pyproject.toml is not read: its settings neither apply nor are complained about
    assert "Vendored, not ours." in await _hover(client, outside / "lib.py", "VendoredThing")
    assert client.messages == []
    with pytest.raises(JsonRpcException, match="not in a workspace folder"):
        await client.workspace_execute_command_async(types.ExecuteCommandParams(
            command="repodoc.pagesFor", arguments=[(outside / "lib.py").as_uri()]))
    result = await _generate(client)  # without arguments: every root, and the outside folder is none
    assert "roots" not in result and (root / "docs/index.md").exists()
    assert await symbols(client, "VendoredThing") == []
    client.text_document_did_save(types.DidSaveTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=(outside / "lib.py").as_uri())))
    assert await symbols(client, "Shape")  # the save was handled (ignored) before this answer
    assert sorted(p.name for p in outside.iterdir()) == ["lib.py", "pyproject.toml"]


async def test_files_opened_in_many_outside_folders_cost_nothing_lasting(client: LanguageClient,
                                                                          tmp_path: Path) -> None:
    """Issue 14: 100 outside folders opened held 200 more descriptors (a root each)."""
    root = build(tmp_path / "ws", SAMPLE)
    await start(client, root, options={"cacheDir": str(tmp_path / "c")})
    assert await symbols(client, "Shape")
    assert "Make a shape called NAME." in await _hover(client, root / "pkg/use.py", "make_shape('x')")
    server = psutil.Process(client._server.pid)  # type: ignore[attr-defined]
    threads, fds = server.num_threads(), server.num_fds()  # jedi's thread is started
    for i in range(25):
        lib = f'class Vendored{i}:\n    """Doc {i}."""\n'
        outside = build(tmp_path / f"vendored{i}", {**VENDORED, "lib.py": lib})
        assert f"Doc {i}." in await _hover(client, outside / "lib.py", f"Vendored{i}")
    # A root each would add 25 worker threads; pygls' and asyncio's own pools may start up to 10
    # threads of theirs meanwhile (they grow on demand: this failed about one run in five at `<= threads`)
    assert server.num_threads() < threads + 12 and server.num_fds() <= fds + 2, \
        (threads, server.num_threads(), fds, server.num_fds())
    assert await symbols(client, "Vendored") == []


async def test_no_workspace_folder_means_hover_only(client: LanguageClient, tmp_path: Path) -> None:
    root = build(tmp_path / "proj", SAMPLE)
    await start(client, None, options={"cacheDir": str(tmp_path / "c")})
    assert "Make a shape called NAME." in await _hover(client, root / "pkg/use.py", "make_shape('x')")
    assert await symbols(client, "Circle") == []
    with pytest.raises(JsonRpcException, match="no workspace folder is open"):
        await _generate(client)
    assert not (root / "docs").exists()


@pytest.mark.parametrize("where", ["filesystem root", "home folder", "output folder", "earlier output folder",
                                   "system folder"])
async def test_folders_that_are_never_roots(client: LanguageClient, tmp_path: Path, where: str) -> None:
    folder, why = {"filesystem root": (Path("/"), "/ is the root of the file system"),
                   "home folder": (Path.home(), f"{Path.home()} is your home folder"),
                   "output folder": (tmp_path / "ws/docs/pkg", "is inside the repodoc output folder"),
                   "earlier output folder": (tmp_path / "ws/docs/pkg", "is inside the repodoc output folder"),
                   "system folder": (Path("/proc/self"), "is a system folder")}[where]
    if where.endswith("output folder"):  # its manifest, or the uncompressed one of an earlier version
        manifest = MANIFEST if where == "output folder" else OLD_MANIFEST
        build(tmp_path / "ws", {**SAMPLE, f"docs/{manifest}": '{"pages": {}}', "docs/pkg/x.md": "x\n"})
    await start(client, folder, options={"cacheDir": str(tmp_path / "c")})
    message = await wait_for(lambda: [m for m in client.messages if why in m.message], 10)
    assert message[0].message.endswith(": not indexed, no pages; files there get hover only")
    assert len(client.messages) == 1
    assert await symbols(client, "Shape") == []
    with pytest.raises(JsonRpcException, match="no workspace folder is open"):
        await _generate(client)


async def test_fifos_and_devices_in_the_workspace_are_never_read(client: LanguageClient, tmp_path: Path) -> None:
    root = build(tmp_path / "ws", {**SAMPLE, "sub/mod.py": "def in_sub():\n    pass\n"})
    os.mkfifo(root / "pipe.py")
    os.mkfifo(root / "sub/.gitignore")  # read for the ignore rules: must not block either
    os.symlink("/dev/null", root / "null.py")
    os.symlink("/dev/zero", root / "sub/zero.md")
    (root / "pkg/use.py").write_text("import pipe\nfrom pkg.shapes import Shape\n\nShape('y')\n")
    await start(client, root, options={"cacheDir": str(tmp_path / "c")})
    assert await symbols(client, "in_sub")
    summary = await asyncio.wait_for(_generate(client), 60)
    skipped = {s["path"]: s["reason"] for s in summary["skipped"]}
    assert skipped["null.py"] == skipped["sub/zero.md"] == "symbolic link to outside the workspace"
    assert not (root / "docs/pipe.py_docs.md").exists()
    assert "A shape on the plane." in await _hover(client, root / "pkg/use.py", "Shape('y')")
    for name in ("pipe.py", "null.py", "sub/mod.py"):  # saves and watched-file events of each
        client.text_document_did_save(types.DidSaveTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=(root / name).as_uri())))
    mod = root / "sub/mod.py"
    mod.write_text("def in_sub():\n    pass\n\n\ndef after_the_pipe():\n    pass\n")
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
        types.FileEvent(uri=(root / "pipe.py").as_uri(), type=types.FileChangeType.Changed),
        types.FileEvent(uri=mod.as_uri(), type=types.FileChangeType.Changed)]))
    await wait_for(lambda: "after_the_pipe" in (root / "docs/sub/mod.py_kw.md").read_text(), 30)
    cli = subprocess.run([sys.executable, "-m", "repodoc_lsp", "generate", str(root), "--json"], timeout=60,
                         capture_output=True, text=True, env={**os.environ, "REPODOC_CACHE_DIR": str(tmp_path / "c")})
    assert cli.returncode == 0, cli.stderr


async def test_a_workspace_too_large_is_capped_with_one_message(client: LanguageClient, tmp_path: Path) -> None:
    root = build(tmp_path / "ws", {f"m{i:02}.py": f"def capped_{i}():\n    pass\n" for i in range(12)})
    await start(client, root, options={"cacheDir": str(tmp_path / "c"), "maxWorkspaceFiles": 5})
    await wait_for(lambda: client.messages, 20)
    assert [m.message for m in client.messages] == [
        f"repodoc: {root} has more than 5 files: the rest are left out (max-workspace-files)"]
    assert len(await symbols(client, "capped_")) == 5


async def test_a_removed_workspace_folder_is_released(client: LanguageClient, tmp_path: Path) -> None:
    main = build(tmp_path / "main", SAMPLE)
    await start(client, main, options={"cacheDir": str(tmp_path / "c")})
    assert await symbols(client, "Shape")
    server = psutil.Process(client._server.pid)  # type: ignore[attr-defined]
    threads = server.num_threads()

    def change(added: list[Path], removed: list[Path]) -> None:
        client.workspace_did_change_workspace_folders(types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(
                added=[types.WorkspaceFolder(uri=f.as_uri(), name=f.name) for f in added],
                removed=[types.WorkspaceFolder(uri=f.as_uri(), name=f.name) for f in removed])))

    fds = []
    for cycle in range(3):  # SQLite keeps a closed connection's descriptor for the next one: count
        folders = [build(tmp_path / f"extra{cycle}-{i}", {"m.py": f"class Extra{cycle}x{i}:\n    pass\n"})
                   for i in range(10)]  # across cycles, not against the start
        change(folders, [])
        for i in range(10):
            await wait_for(lambda name=f"Extra{cycle}x{i}": symbols(client, name), 30)
        during = server.num_threads()
        assert during >= threads + 10  # a worker thread per root
        change([], folders)
        assert await symbols(client, "Extra") == []
        result = await _generate(client)
        assert "roots" not in result and not any((f / "docs").exists() for f in folders)
        # their threads end (pygls' and asyncio's pools may have grown by a thread or two meanwhile)
        await wait_for(lambda during=during: server.num_threads() <= during - 8, 10)
        fds.append(server.num_fds())
    assert fds[2] <= fds[0] + 2, fds


async def test_settings_sent_as_an_empty_array(client: LanguageClient, tmp_path: Path) -> None:
    """Neovim sends Lua's `{}` as `[]`: `settings = {repodoc = {}}` arrives as {"repodoc": []}."""
    root = build(tmp_path / "ws", SAMPLE)
    client.set_configuration([], section="repodoc")
    await start(client, root, options={"repodoc": []}, configuration=[])  # type: ignore[arg-type]
    assert await symbols(client, "Shape")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"repodoc": []}))
    assert await symbols(client, "Shape")
    assert client.messages == []


async def test_the_first_symbol_query_waits_for_the_first_index(client: LanguageClient, tmp_path: Path) -> None:
    root = build(tmp_path / "ws", SAMPLE)
    await start(client, root, options={"cacheDir": str(tmp_path / "c")})
    found = await symbols(client, "make_shape")  # at once: no waiting loop
    assert found and found[0].name == "make_shape"


async def _save(client: LanguageClient, path: Path, text: str) -> None:
    path.write_text(text)
    client.text_document_did_save(types.DidSaveTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=path.as_uri())))


async def test_a_save_never_starts_a_docs_tree(client: LanguageClient, tmp_path: Path) -> None:
    root = build(tmp_path / "notes", {"todo.md": "# Todo\n", "tool.py": "def tool():\n    pass\n"})
    await start(client, root, options={"cacheDir": str(tmp_path / "c")})
    assert await symbols(client, "tool")
    await _save(client, root / "tool.py", "def tool():\n    pass\n\n\ndef saved_tool():\n    pass\n")
    await _save(client, root / "todo.md", "# Todo\n\n## Saved heading\n")
    await wait_for(lambda: symbols(client, "saved_tool"), 20)  # the index follows the saves
    await wait_for(lambda: symbols(client, "Saved heading"), 20)
    assert sorted(p.name for p in root.iterdir()) == ["todo.md", "tool.py"]
    await _generate(client)  # the person asks for a tree: from then on saves keep it current
    await _save(client, root / "tool.py", "def tool():\n    pass\n\n\ndef kept_current():\n    pass\n")
    await wait_for(lambda: "kept_current" in (root / "docs/tool.py_kw.md").read_text(), 20)


async def test_a_save_keeps_an_existing_tree_current(client: LanguageClient, tmp_path: Path) -> None:
    root = build(tmp_path / "ws", SAMPLE)
    cli = subprocess.run([sys.executable, "-m", "repodoc_lsp", "generate", str(root), "-q"], timeout=60,
                         capture_output=True, text=True, env={**os.environ, "REPODOC_CACHE_DIR": str(tmp_path / "c")})
    assert cli.returncode == 0, cli.stderr
    await start(client, root, options={"cacheDir": str(tmp_path / "c")})
    assert await symbols(client, "Shape")
    shapes = root / "pkg/shapes.py"
    await _save(client, shapes, shapes.read_text() + "\n\ndef from_a_save():\n    pass\n")
    await wait_for(lambda: "from_a_save" in (root / "docs/pkg/shapes.py_kw.md").read_text(), 20)
