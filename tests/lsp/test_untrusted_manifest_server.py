"""The server reads the manifest a checkout ships as data: `repodoc.generate` and the removal of the
pages of a deleted source (a branch switch, no command) delete nothing outside the output folder
and no page a person edited (the real server over stdio)."""

from __future__ import annotations

from pathlib import Path

from helpers import read_manifest, write_manifest
from lsp_helpers import SAMPLE, build, start, symbols, wait_for
from lsprotocol import types
from pytest_lsp import LanguageClient

from repodoc_lsp import MARKER
from repodoc_lsp.output.manifest import content_digest


def _deleted(client: LanguageClient, path: Path) -> None:
    path.unlink()
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
        types.FileEvent(uri=path.as_uri(), type=types.FileChangeType.Deleted)]))


async def test_a_forged_manifest_deletes_nothing_outside_nor_a_persons_edit(client: LanguageClient,
                                                                          tmp_path: Path) -> None:
    root = build(tmp_path / "ws", SAMPLE)
    docs = root / "docs"
    bait = tmp_path / "other/docs/index.md"  # another project's page, with the marker
    bait.parent.mkdir(parents=True)
    bait.write_text(f"{MARKER}\nTheirs.\n")
    theirs = bait.read_bytes()
    await start(client, root, options={"cacheDir": str(tmp_path / "cache")})
    await wait_for(lambda: symbols(client, "Shape"))
    await client.workspace_execute_command_async(types.ExecuteCommandParams(command="repodoc.generate"))

    def forged(key: str) -> dict:
        table = read_manifest(docs)
        table["pages"][key] = [*table["pages"]["index.md"][:3], content_digest(theirs)]
        write_manifest(docs, table)
        return table

    # an absolute page name: repodoc.generate answered -32603 (a RecursionError); now a summary
    forged(str(bait))
    summary = await client.workspace_execute_command_async(types.ExecuteCommandParams(command="repodoc.generate"))
    assert summary["errors"] == [] and bait.read_bytes() == theirs
    assert str(bait) not in read_manifest(docs)["pages"]

    # `..` out of the output folder, the pages of a deleted source removed with no command: the other
    # project's page was deleted through out/../../other/docs
    forged("../../other/docs/index.md")
    _deleted(client, root / "tests/test_shapes.py")
    await wait_for(lambda: "../../other/docs/index.md" not in read_manifest(docs)["pages"], 30)
    assert bait.read_bytes() == theirs

    # an edited page whose digest is empty, its source deleted: it was deleted as "not edited"
    table = read_manifest(docs)
    table["pages"]["pkg/use.py_kw.md"][3] = ""
    write_manifest(docs, table)
    kw = docs / "pkg/use.py_kw.md"
    edited = kw.read_text() + "\nA note a person added.\n"
    kw.write_text(edited)
    _deleted(client, root / "pkg/use.py")
    await wait_for(lambda: "pkg/use.py_docs.md" not in read_manifest(docs)["pages"], 30)
    assert not (docs / "pkg/use.py_docs.md").exists()  # as repodoc wrote it: removed
    assert kw.read_text() == edited and bait.read_bytes() == theirs
    assert read_manifest(docs)["pages"]["pkg/use.py_kw.md"][3] == ""  # kept in the manifest: reported again
