"""The server decides the output folder as the CLI does: beside a project's own Sphinx docs/ it
writes to repodoc-docs/, says so once, and leaves docs/ as it was."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsp_helpers import SAMPLE, build, start, symbols, wait_for
from lsprotocol import types
from pytest_lsp import LanguageClient


async def test_the_server_writes_beside_a_projects_own_docs(client: LanguageClient, tmp_path: Path) -> None:
    root = build(tmp_path / "ws", {**SAMPLE, "docs/conf.py": "project = 'x'\n", "docs/index.rst": "Demo\n====\n"})
    await start(client, root, options={"cacheDir": str(tmp_path / "c")})
    await wait_for(lambda: symbols(client, "Shape"))
    notice = ("repodoc: docs/ holds your own documentation (docs/conf.py); writing to repodoc-docs/ "
              f"(set `output` in [tool.repodoc] to choose) ({root})")
    await wait_for(lambda: [m for m in client.messages if m.message == notice], 10)
    result = await asyncio.wait_for(client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="repodoc.generate")), 60)
    assert "docs/index.rst_docs.md" in result["writtenPages"], result
    assert (root / "repodoc-docs/pkg/shapes.py_docs.md").is_file()
    assert sorted(p.name for p in (root / "docs").iterdir()) == ["conf.py", "index.rst"]
    assert [m.type for m in client.messages] == [types.MessageType.Info]
