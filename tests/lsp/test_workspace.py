"""Settings, several workspace folders, requests while indexing."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsp_helpers import SAMPLE, build, start, symbols, wait_for
from lsprotocol import types
from pytest_lsp import LanguageClient

from repodoc_lsp.config import FIELDS


async def test_bad_setting_is_told_once_and_defaults_apply(client: LanguageClient, tmp_path: Path) -> None:
    many = "".join(f"def func_{i}():\n    pass\n" for i in range(250))
    root = build(tmp_path / "ws", {**SAMPLE, "many.py": many})
    await start(client, root, options={"cacheDir": str(tmp_path / "c"), "maxWorkspaceSymbols": "many",
                                       "nonsense": 1})
    await wait_for(lambda: symbols(client, "Shape"))
    await wait_for(lambda: len(client.messages) >= 2)
    texts = sorted(m.message for m in client.messages)
    assert texts == [
        "repodoc: settings: maxWorkspaceSymbols: expected a whole number, got 'many'; using the default",
        f"repodoc: settings: unknown key 'nonsense' (known keys: {', '.join(f.editor_key for f in FIELDS)})"
        "; using the default"]
    assert "outputDir, include, exclude" in texts[1]
    assert all(m.type == types.MessageType.Warning for m in client.messages)
    await wait_for(lambda: symbols(client, "func_249"))
    assert len(await symbols(client, "func")) == 200  # the default maximum


async def test_configuration_change_applies(client: LanguageClient, tmp_path: Path) -> None:
    root = build(tmp_path / "ws", SAMPLE)
    await start(client, root, options={"cacheDir": str(tmp_path / "c")})
    await wait_for(lambda: symbols(client, "Shape"))
    client.set_configuration({"outputDir": "site", "maxWorkspaceSymbols": 2}, section="repodoc")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={}))
    await wait_for(lambda: len(client.progress_reports) >= 2)  # re-indexed with the new settings
    await wait_for(lambda: symbols(client, "Shape"))
    assert len(await symbols(client, "a")) == 2
    await client.workspace_execute_command_async(types.ExecuteCommandParams(command="repodoc.generate"))
    assert (root / "site/index.md").exists() and not (root / "docs").exists()


async def test_pyproject_settings_are_the_defaults(client: LanguageClient, tmp_path: Path) -> None:
    root = build(tmp_path / "ws", {**SAMPLE, "pyproject.toml": '[tool.repodoc]\noutput = "handbook"\n'})
    await start(client, root, options={"cacheDir": str(tmp_path / "c")})
    await wait_for(lambda: symbols(client, "Shape"))
    await client.workspace_execute_command_async(types.ExecuteCommandParams(command="repodoc.generate"))
    assert (root / "handbook/pkg/shapes.py_docs.md").exists()


async def test_two_workspace_folders(client: LanguageClient, tmp_path: Path) -> None:
    one = build(tmp_path / "one", SAMPLE)
    two = build(tmp_path / "two", {"lib.py": "class OnlyInTwo:\n    pass\n", "sub/m.py": "x = 1\n",
                                   "docs/sub": "a file where the folder of sub/'s pages goes\n"})
    await start(client, one, options={"cacheDir": str(tmp_path / "c"), "outputDir": "docs"}, folders=[one, two])
    found = await wait_for(lambda: symbols(client, "OnlyInTwo"))
    assert found[0].location.uri == (two / "lib.py").as_uri()
    await wait_for(lambda: symbols(client, "Shape"))
    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(command="repodoc.generate"))
    assert len(result["roots"]) == 2
    assert (one / "docs/index.md").exists() and (two / "docs/lib.py_docs.md").exists()
    # what one root could not write is in the merged answer too: a person's file where a folder of
    # pages goes is theirs, left alone (a conflict, not an error)
    assert {c["path"] for c in result["conflicts"]} >= {"sub/m.py_docs.md", "sub/m.py_kw.md"}
    assert result["conflicts"] == [c for r in result["roots"] for c in r["conflicts"]]
    assert result["errors"] == [e for r in result["roots"] for e in r["errors"]]
    assert (two / "docs/sub").read_text() == "a file where the folder of sub/'s pages goes\n"


async def test_requests_during_indexing_are_answered(client: LanguageClient, tmp_path: Path) -> None:
    files = {f"p{i // 100}/m{i}.py": f"class Thing{i}:\n    pass\n" + "def f():\n    x = 1\n" * 200
             for i in range(600)}
    root = build(tmp_path / "ws", files)
    await start(client, root, options={"cacheDir": str(tmp_path / "c")})
    early = await symbols(client, "Thing")  # answered at once, from what is indexed so far
    assert len(early) < 200 or early
    token = await wait_for(lambda: next((t for t in client.progress_reports if "indexing" in str(t)), None))
    await wait_for(lambda: any(isinstance(r, types.WorkDoneProgressEnd) for r in client.progress_reports[token]), 60)
    reports = client.progress_reports[token]
    assert reports[0].title == "RepoDoc: indexing"
    assert any(getattr(r, "message", "") == "600/600" for r in reports)
    assert len(await symbols(client, "Thing")) == 200


async def test_client_only_keys_are_not_reported(client: LanguageClient, tmp_path: Path) -> None:
    root = build(tmp_path / "ws", SAMPLE)
    vscode_section = {"outputDir": "docs", "trace": {"server": "off"}, "interpreter": "python3", "serverCommand": []}
    await start(client, root, options={"cacheDir": str(tmp_path / "c"), **vscode_section},
                configuration=vscode_section)
    await wait_for(lambda: symbols(client, "Shape"))
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"repodoc": {**vscode_section, "cacheDir": str(tmp_path / "c")}}))
    assert (await symbols(client, "Shape"))[0].name == "Shape"
    assert client.messages == []


async def test_a_burst_of_settings_changes_is_one_rescan(client: LanguageClient, tmp_path: Path) -> None:
    many = "".join(f"def func_{i}():\n    pass\n" for i in range(50))
    root = build(tmp_path / "ws", {**SAMPLE, "many.py": many})
    await start(client, root, options={"cacheDir": str(tmp_path / "c")})
    await wait_for(lambda: symbols(client, "Shape"))

    def indexings() -> list[str]:
        return [t for t in client.progress_reports if "indexing" in str(t)]

    await wait_for(lambda: len(indexings()) == 1)
    for i in range(20):  # a person dragging a slider, a settings sync (maxFileBytes needs a rescan)
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
            settings={"repodoc": {"cacheDir": str(tmp_path / "c"), "maxWorkspaceSymbols": 40 - i,
                                  "maxFileBytes": 100_000 - i}}))
        await asyncio.sleep(0.02)
    await wait_for(lambda: len(indexings()) == 2)
    await wait_for(lambda: len(client.progress_reports[indexings()[1]]) > 1
                   and isinstance(client.progress_reports[indexings()[1]][-1], types.WorkDoneProgressEnd))
    assert len(await symbols(client, "func_")) == 21  # the last one applies
    await asyncio.sleep(1.0)
    assert len(indexings()) == 2  # one rescan for the burst
