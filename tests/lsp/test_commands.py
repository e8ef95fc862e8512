"""workspace/executeCommand: generate (progress, cancel), generateFile, pagesFor, status."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from lsp_helpers import SAMPLE, build, open_file, start, symbols, wait_for
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient


def _command(command: str, *arguments: object) -> types.ExecuteCommandParams:
    return types.ExecuteCommandParams(command=command, arguments=list(arguments) or None)


async def test_generate_with_progress_writes_the_tree(client: LanguageClient, tmp_path: Path) -> None:
    root = build(tmp_path / "ws", SAMPLE)
    await start(client, root, options={"cacheDir": str(tmp_path / "cache")})
    result = await client.workspace_execute_command_async(_command("repodoc.generate"))
    # a pair per file but pyproject.toml (a line of the root's index.md), 3 folders' two pages, llms.txt
    assert result["files"] == len(SAMPLE) and result["written"] == 2 * (len(SAMPLE) - 1) + 6 + 1
    assert result["cancelled"] is False and result["conflicts"] == []
    assert (root / "docs/index.md").is_file() and (root / "docs/pkg/shapes.py_docs.md").is_file()
    reports = [r for token, rs in client.progress_reports.items() if "generating" in str(token) for r in rs]
    assert reports[0].title == "RepoDoc: generating" and reports[0].cancellable is True
    assert isinstance(reports[-1], types.WorkDoneProgressEnd)
    assert reports[-1].message == f"{result['written']} pages written, 0 unchanged, 0 removed"
    again = await client.workspace_execute_command_async(_command("repodoc.generate", {"root": root.as_uri()}))
    assert again["written"] == 0 and again["unchanged"] == result["written"]


async def test_generate_is_cancellable(client: LanguageClient, tmp_path: Path) -> None:
    files = {f"pkg{i // 50}/m{i}.py": f'"""Module {i}."""\n' + "def f():\n    pass\n" * 20 for i in range(400)}
    root = build(tmp_path / "ws", files)
    await start(client, root, options={"cacheDir": str(tmp_path / "cache")})
    await wait_for(lambda: symbols(client, "f"))
    task = asyncio.ensure_future(client.workspace_execute_command_async(_command("repodoc.generate")))
    token = await wait_for(lambda: next((t for t in client.progress_reports if "generating" in str(t)), None))
    await wait_for(lambda: len(client.progress_reports[token]) > 1)
    client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
    result = await task
    counts = {k: v for k, v in result.items() if not isinstance(v, list)}
    assert result["cancelled"] is True and result["written"] < 2 * 400, counts
    for page in (root / "docs").rglob("*.md"):  # nothing half written
        assert page.read_text().rstrip().endswith("*")


async def test_pages_for_and_generate_file(client: LanguageClient, tmp_path: Path) -> None:
    root = build(tmp_path / "ws", SAMPLE)
    await start(client, root, options={"cacheDir": str(tmp_path / "cache"), "outputDir": "site"})
    await wait_for(lambda: symbols(client, "Shape"))
    uri = (root / "pkg/shapes.py").as_uri()
    pages = await client.workspace_execute_command_async(_command("repodoc.pagesFor", uri))
    assert pages == {"docs": str(root / "site/pkg/shapes.py_docs.md"), "kw": str(root / "site/pkg/shapes.py_kw.md"),
                     "docsUri": (root / "site/pkg/shapes.py_docs.md").as_uri(),
                     "kwUri": (root / "site/pkg/shapes.py_kw.md").as_uri(), "exists": False}
    (root / "pkg/shapes.py").write_text((root / "pkg/shapes.py").read_text() + "\n\ndef added():\n    pass\n")
    done = await client.workspace_execute_command_async(_command("repodoc.generateFile", uri))
    assert str(root / "site/pkg/shapes.py_kw.md") in done["written"]
    assert "**`added`**" in (root / "site/pkg/shapes.py_kw.md").read_text()
    with pytest.raises(JsonRpcException):
        await client.workspace_execute_command_async(_command("repodoc.pagesFor", "file:///elsewhere/x.py"))
    with pytest.raises(JsonRpcException):
        await client.workspace_execute_command_async(_command("repodoc.pagesFor"))


async def test_a_persons_files_in_the_output_folder_survive_generate_and_saves(client: LanguageClient,
                                                                              tmp_path: Path) -> None:
    root = build(tmp_path / "ws", SAMPLE)
    mine = {root / "docs/notes.md": "my notes\n", root / "docs/pkg/shapes.py_kw.md": "my own keyword list\n",
            root / "docs/pkg/use.py_docs.md/keep.txt": "a folder where a page would go\n"}
    for path, text in mine.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    await start(client, root, options={"cacheDir": str(tmp_path / "cache"), "outputDir": "docs"})  # chosen
    await wait_for(lambda: symbols(client, "Shape"))
    result = await client.workspace_execute_command_async(_command("repodoc.generate"))
    conflicts = {c["path"]: c["reason"] for c in result["conflicts"]}
    assert conflicts == {"pkg/shapes.py_kw.md": "a file repodoc did not generate is in the way",
                         "pkg/use.py_docs.md": "a folder is in the way"}
    assert (root / "docs/pkg/shapes.py_docs.md").is_file()  # the rest of the tree is written

    shapes = root / "pkg/shapes.py"  # a save regenerates around the person's file, never over it
    shapes.write_text(shapes.read_text() + "\n\ndef added():\n    pass\n")
    client.text_document_did_save(types.DidSaveTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=shapes.as_uri())))
    await wait_for(lambda: "added" in (root / "docs/pkg/shapes.py_docs.md").read_text())
    removed = await client.workspace_execute_command_async(_command("repodoc.generate"))
    assert removed["removed"] == 0
    assert {path: path.read_text() for path in mine} == mine


async def test_generate_with_force_overwrites_edited_pages_after_copying_them(client: LanguageClient,
                                                                               tmp_path: Path) -> None:
    """Issue 13: a person's edit of a generated page is a conflict that says how to overwrite it;
    `repodoc.generate` with `{"force": true}` overwrites it (and deletes an edited page whose source
    is gone) after copying each to PAGE.orig, as `repodoc generate --force` does."""
    root = build(tmp_path / "ws", {**SAMPLE, "gone.py": "def f():\n    pass\n"})
    await start(client, root, options={"cacheDir": str(tmp_path / "cache")})
    first = await client.workspace_execute_command_async(_command("repodoc.generate"))
    assert first["conflicts"] == []
    page, orphan = root / "docs/pkg/shapes.py_docs.md", root / "docs/gone.py_kw.md"
    fresh = page.read_text()
    page.write_text(fresh.replace("## File Metadata", "## File Metadata\n\nMy own note.", 1))
    orphan.write_text(orphan.read_text() + "\nmy note\n")
    (root / "gone.py").unlink()

    kept = await client.workspace_execute_command_async(_command("repodoc.generate"))
    reasons = {c["path"]: c["reason"] for c in kept["conflicts"]}
    how = 'repodoc.generate with {"force": true}'
    assert set(reasons) == {"pkg/shapes.py_docs.md", "gone.py_kw.md"}, reasons
    assert reasons["pkg/shapes.py_docs.md"].startswith("changed since repodoc wrote it (kept; " + how)
    assert "overwrites it after copying it to PAGE.orig" in reasons["pkg/shapes.py_docs.md"]
    assert how in reasons["gone.py_kw.md"] and "deletes it" in reasons["gone.py_kw.md"]
    assert "--force" not in str(reasons) and "My own note." in page.read_text() and orphan.exists()

    with pytest.raises(JsonRpcException, match="force"):
        await client.workspace_execute_command_async(_command("repodoc.generate", {"force": "yes"}))
    forced = await client.workspace_execute_command_async(_command("repodoc.generate", {"force": True}))
    assert forced["conflicts"] == [], forced["conflicts"]
    assert page.read_text() == fresh and "My own note." in Path(f"{page}.orig").read_text()
    assert not orphan.exists() and "my note" in Path(f"{orphan}.orig").read_text()
    again = await client.workspace_execute_command_async(_command("repodoc.generate"))
    assert again["conflicts"] == [] and again["written"] == 0


async def test_status_tells_files_pages_last_run_and_errors(client: LanguageClient, tmp_path: Path) -> None:
    """repodoc.status: root, output, files, pages, the last run (generate, then a save) and its errors;
    hovers are warmed after indexing with no hover asked (the first hover is not the one that pays)."""
    root = build(tmp_path / "ws", SAMPLE)
    tpl = build(tmp_path / "tpl", {"file_kw.md.j2": "{{ marker }}\n{{ 1 // (rel != 'pkg/use.py') }}\n"})
    await start(client, root, options={"cacheDir": str(tmp_path / "cache"), "templates": str(tpl)})
    open_file(client, root / "pkg/use.py")

    async def status() -> dict:
        [found] = (await client.workspace_execute_command_async(_command("repodoc.status")))["roots"]
        return found

    before = await wait_for(lambda: _when(status(), lambda s: s["indexed"] and s["hoverReady"]), 60)
    assert before["root"] == str(root) and before["out"] == str(root / "docs")
    assert before["files"] == len(SAMPLE) and before["pages"] == 0
    assert before["lastRun"] is None and before["errors"] == []
    result = await client.workspace_execute_command_async(_command("repodoc.generate"))
    after = await status()
    assert after["pages"] == result["written"] > 0
    run = after["lastRun"]
    assert run["kind"] == "generate" and run["written"] == result["written"] and run["errors"] == 1
    assert run["when"].endswith("+00:00") and run["failure"] == ""
    assert after["errors"] == ["pkg/use.py_kw.md: cannot render: ZeroDivisionError: integer division or modulo by zero"]
    shapes = root / "pkg/shapes.py"
    shapes.write_text(shapes.read_text() + "\n\ndef saved():\n    pass\n")
    client.text_document_did_save(types.DidSaveTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=shapes.as_uri())))
    saved = await wait_for(lambda: _when(status(), lambda s: (s["lastRun"] or {}).get("kind") == "save"), 20)
    assert saved["lastRun"]["written"] > 0 and saved["lastRun"]["conflicts"] == 0


async def _when(value: Awaitable[dict], test: Callable[[dict], bool]) -> dict | None:
    found = await value
    return found if test(found) else None


async def test_templates_that_do_not_compile_are_told_at_start(client: LanguageClient, tmp_path: Path) -> None:
    """A person's template that does not compile (one the file page includes) is shown as the root starts,
    naming its file and line; hovers and symbols work; repodoc.generate fails naming it, no page written.
    (It was found only at the first class's page: that page an error, the others written.)"""
    root = build(tmp_path / "ws", SAMPLE)
    tpl = build(tmp_path / "tpl", {"_class.md.j2": "{# mine #}\n{% if %}\n"})
    await start(client, root, options={"cacheDir": str(tmp_path / "cache"), "templates": str(tpl)})
    told = await wait_for(lambda: [m for m in client.messages if "_class.md.j2" in m.message], 20)
    assert told[0].type == types.MessageType.Error
    assert told[0].message.startswith(f"repodoc: error: template {tpl / '_class.md.j2'}, line 2: TemplateSyntaxError")
    assert [s.name for s in await symbols(client, "make_shape")] == ["make_shape"]
    uri = open_file(client, root / "pkg/use.py")
    text = (root / "pkg/use.py").read_text()
    where = types.Position(line=2, character=text.splitlines()[2].index("make_shape"))
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=where))
    assert hover is not None and "Make a shape called NAME." in str(hover.contents)
    with pytest.raises(JsonRpcException, match=r"_class\.md\.j2, line 2"):
        await client.workspace_execute_command_async(_command("repodoc.generate"))
    assert not (root / "docs").exists()
