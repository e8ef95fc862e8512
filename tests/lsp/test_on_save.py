"""Regeneration on save (didSave and watched files) against the real server."""

from __future__ import annotations

from pathlib import Path

import psutil
from helpers import read_manifest, regen_processes, until_the_process_writes
from lsp_helpers import SAMPLE, build, open_file, start, symbols, wait_for
from lsprotocol import types
from pytest_lsp import LanguageClient

from repodoc_lsp.output.manifest import MANIFEST


def _mtimes(out: Path) -> dict[str, int]:
    return {p.relative_to(out).as_posix(): p.stat().st_mtime_ns for p in out.rglob("*.md")}


async def _generated(client: LanguageClient, root: Path, options: dict | None = None) -> dict[str, int]:
    await start(client, root, options={"cacheDir": str(root.parent / "cache"), **(options or {})})
    await wait_for(lambda: symbols(client, "Shape"))
    await client.workspace_execute_command_async(types.ExecuteCommandParams(command="repodoc.generate"))
    return _mtimes(root / "docs")


async def test_save_rewrites_only_what_changed(client: LanguageClient, tmp_path: Path) -> None:
    root = build(tmp_path / "ws", SAMPLE)
    before = await _generated(client, root)
    shapes = root / "pkg/shapes.py"
    uri = open_file(client, shapes)
    shapes.write_text(shapes.read_text() + "\n\ndef saved_function():\n    pass\n")
    client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    kw = root / "docs/pkg/shapes.py_kw.md"
    await wait_for(lambda: "**`saved_function`**" in kw.read_text(), 20)
    assert (await wait_for(lambda: symbols(client, "saved_function"), 10))[0].name == "saved_function"
    await wait_for(lambda: _mtimes(root / "docs")["pkg/doc.md"] != before["pkg/doc.md"], 10)
    changed = {p for p, m in _mtimes(root / "docs").items() if before.get(p) != m}
    assert changed == {"pkg/shapes.py_docs.md", "pkg/shapes.py_kw.md", "pkg/doc.md"}


async def test_save_with_syntax_error_updates_the_index(client: LanguageClient, tmp_path: Path) -> None:
    root = build(tmp_path / "ws", SAMPLE)
    await _generated(client, root)
    use = root / "pkg/use.py"
    use.write_text("def half_done(:\n    pass\n\nclass StillThere:\n    pass\n")
    client.text_document_did_save(types.DidSaveTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=use.as_uri())))
    await wait_for(lambda: symbols(client, "StillThere"), 20)
    assert (await symbols(client, "half_done"))[0].name == "half_done"
    assert "**Syntax error** at [line 1]" in (root / "docs/pkg/use.py_docs.md").read_text()


async def test_regenerate_off_still_indexes(client: LanguageClient, tmp_path: Path) -> None:
    root = build(tmp_path / "ws", SAMPLE)
    before = await _generated(client, root, {"regenerateOnSave": False})
    shapes = root / "pkg/shapes.py"
    shapes.write_text(shapes.read_text() + "\n\ndef quiet():\n    pass\n")
    client.text_document_did_save(types.DidSaveTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=shapes.as_uri())))
    await wait_for(lambda: symbols(client, "quiet"), 20)
    assert _mtimes(root / "docs") == before


async def test_watched_files_created_and_deleted(client: LanguageClient, tmp_path: Path) -> None:
    root = build(tmp_path / "ws", SAMPLE)
    await _generated(client, root)
    new = root / "pkg/extra.py"
    new.write_text("class ExtraThing:\n    pass\n")
    gone = root / "tests/test_shapes.py"
    gone.unlink()
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
        types.FileEvent(uri=new.as_uri(), type=types.FileChangeType.Created),
        types.FileEvent(uri=gone.as_uri(), type=types.FileChangeType.Deleted),
        types.FileEvent(uri=(root / "docs/index.md").as_uri(), type=types.FileChangeType.Changed),
    ]))
    await wait_for(lambda: (root / "docs/pkg/extra.py_kw.md").exists(), 20)
    await wait_for(lambda: not (root / "docs/tests").exists(), 20)
    await wait_for(lambda: "[`extra.py`]" in (root / "docs/pkg/index.md").read_text(), 20)

    async def test_circle_gone() -> bool:  # the index and the pages are updated side by side
        return await symbols(client, "test_circle") == []
    await wait_for(test_circle_gone, 20)
    assert (await symbols(client, "ExtraThing"))[0].name == "ExtraThing"


async def test_save_outside_the_workspace_is_ignored(client: LanguageClient, tmp_path: Path) -> None:
    root = build(tmp_path / "ws", SAMPLE)
    before = await _generated(client, root)
    outside = tmp_path / "elsewhere.py"
    outside.write_text("x = 1\n")
    client.text_document_did_save(types.DidSaveTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=outside.as_uri())))
    assert (await symbols(client, "Shape"))[0].name == "Shape"  # still serving
    assert _mtimes(root / "docs") == before


async def _save(client: LanguageClient, path: Path, text: str) -> None:
    path.write_text(text)
    client.text_document_did_save(types.DidSaveTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=path.as_uri())))


async def test_pages_are_written_by_a_process_that_is_replaced_when_it_dies(
        client: LanguageClient, tmp_path: Path) -> None:
    root = build(tmp_path / "ws", SAMPLE)
    await _generated(client, root)
    server = client._server  # type: ignore[attr-defined]
    shapes, kw = root / "pkg/shapes.py", root / "docs/pkg/shapes.py_kw.md"
    original = shapes.read_text()

    async def save(name: str) -> None:
        await _save(client, shapes, original + f"\n\ndef {name}():\n    pass\n")
        await wait_for(lambda: f"**`{name}`**" in kw.read_text(), 20)

    first = (await wait_for(lambda: regen_processes(server.pid), 20))[0]  # the one that generated
    await until_the_process_writes(first, lambda n: save(f"probe_{n}"),
                                   lambda: kw.stat().st_size + (root / "docs/pkg/shapes.py_docs.md").stat().st_size)
    first.kill()
    await wait_for(lambda: not first.is_running() or first.status() == psutil.STATUS_ZOMBIE, 10)
    await save("after_kill")  # written by the server itself; a new process is started
    assert "probe_" not in kw.read_text()
    assert (await wait_for(lambda: symbols(client, "after_kill"), 10))[0].name == "after_kill"
    second = await wait_for(lambda: [p for p in regen_processes(server.pid) if p.pid != first.pid], 20)
    assert second[0].is_running()
    await save("with_new_process")


async def test_the_whole_tree_is_written_by_the_process_which_then_takes_the_saves(
        client: LanguageClient, tmp_path: Path) -> None:
    root = build(tmp_path / "ws", SAMPLE)
    await start(client, root, options={"cacheDir": str(tmp_path / "cache")})
    await wait_for(lambda: symbols(client, "Shape"))
    server = client._server  # type: ignore[attr-defined]
    assert regen_processes(server.pid) == []  # a session without saves or generate never starts it
    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(command="repodoc.generate"))
    # a pair per file but pyproject.toml (a line of the root's index.md), 3 folders' index.md and
    # doc.md, llms.txt
    assert result["written"] == 2 * (len(SAMPLE) - 1) + 6 + 1 and result["cancelled"] is False
    [process] = regen_processes(server.pid)
    tree = sum(p.stat().st_size for p in (root / "docs").rglob("*.md"))
    assert process.io_counters().write_chars >= tree  # every page went through it
    shapes = root / "pkg/shapes.py"
    written = process.io_counters().write_chars
    await _save(client, shapes, shapes.read_text() + "\n\ndef after_generate():\n    pass\n")
    kw = root / "docs/pkg/shapes.py_kw.md"
    await wait_for(lambda: "**`after_generate`**" in kw.read_text(), 20)
    assert process.io_counters().write_chars - written >= kw.stat().st_size  # its replica was ready
    assert regen_processes(server.pid) == [process]


def _manifest_pages(manifest: Path) -> dict:
    try:
        data = read_manifest(manifest.parent)
    except (OSError, EOFError, ValueError, RecursionError):
        return {}
    return data.get("pages") or {} if isinstance(data, dict) else {}


async def test_a_damaged_manifest_met_by_the_process_reaches_the_person(
        client: LanguageClient, tmp_path: Path) -> None:
    """The regeneration process meets a damaged manifest while the server runs: its warning (on
    its stderr, which went nowhere) is in the server's log (window/logMessage) for each save, and
    shown (window/showMessage) once for the burst; the pages are written and the manifest rebuilt."""
    root = build(tmp_path / "ws", SAMPLE)
    await _generated(client, root)  # the process wrote the tree: it takes the saves
    server = client._server  # type: ignore[attr-defined]
    [process] = regen_processes(server.pid)
    manifest, shapes = root / "docs" / MANIFEST, root / "pkg/shapes.py"
    kw = root / "docs/pkg/shapes.py_kw.md"
    original = shapes.read_text()
    for n, damage in enumerate(["1e999", '{"pages": ' + "[" * 30000]):
        manifest.write_text(damage)
        await _save(client, shapes, original + f"\n\ndef after_damage_{n}():\n    pass\n")
        await wait_for(lambda n=n: f"**`after_damage_{n}`**" in kw.read_text(), 20)
        await wait_for(lambda n=n: sum("damaged manifest" in m.message for m in client.log_messages) > n, 10)
        await wait_for(lambda: _manifest_pages(manifest), 10)  # rebuilt
    logged = [m for m in client.log_messages if "damaged manifest" in m.message]
    assert [m.type for m in logged] == [types.MessageType.Warning] * 2
    assert logged[0].message.startswith(f"repodoc: warning: {manifest}: damaged manifest (")
    shown = [m for m in client.messages if "damaged manifest" in m.message]
    assert [(m.type, m.message) for m in shown] == [(types.MessageType.Warning, logged[0].message)]
    assert not [m for m in client.log_messages if "Traceback" in m.message]
    assert regen_processes(server.pid) == [process]  # the process wrote them, and lives on


async def test_a_rename_saved_then_undone_leaves_the_pages_as_generated(
        client: LanguageClient, tmp_path: Path) -> None:
    """Shape -> Form saved (the page keeps `class-Shape` beside `class-Form`), then Form -> Shape saved:
    no alias for Form, a name only the undone rename had; the pages are byte for byte as generated."""
    root = build(tmp_path / "ws", SAMPLE)
    await _generated(client, root)
    out = root / "docs"

    def pages() -> dict[str, bytes]:
        return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*.md"))}

    generated = pages()
    shapes, page = root / "pkg/shapes.py", out / "pkg/shapes.py_docs.md"
    original = shapes.read_text()
    await _save(client, shapes, original.replace("Shape", "Form"))
    await wait_for(lambda: '<a id="class-Form"></a><a id="class-Shape"></a>' in page.read_text(), 20)
    await _save(client, shapes, original)
    await wait_for(lambda: "class-Form" not in page.read_text(), 20)
    assert '<a id="class-Shape"></a>\n' in page.read_text()
    await wait_for(lambda: pages() == generated, 20)  # the folder page follows the file's
    # the manifest is saved once the run's last page is written: read after it
    await wait_for(lambda: "aliases" not in read_manifest(out)["anchors"]["pkg/shapes.py_docs.md"], 10)


async def test_saved_gitignore_takes_a_file_out_and_back(client: LanguageClient, tmp_path: Path) -> None:
    """A .gitignore saved in the editor decides the inputs at once (pages and symbols), as `repodoc generate`
    would: the file it now ignores loses its pages, and gets them back when the line goes."""
    root = build(tmp_path / "ws", SAMPLE)
    await _generated(client, root)
    rules, page = root / ".gitignore", root / "docs/pkg/use.py_docs.md"

    def save(text: str) -> None:
        rules.write_text(text)
        client.text_document_did_save(types.DidSaveTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=rules.as_uri())))

    save("pkg/use.py\n")
    await wait_for(lambda: not page.exists(), 20)
    await wait_for(lambda: "use.py" not in (root / "docs/pkg/index.md").read_text(), 10)
    save("")
    await wait_for(lambda: page.exists(), 20)
