"""`repodoc mcp`: the tools read the language server's root (in-process tests of `Docs`), and the
real process answers the SDK's own client over stdio, and a client sending malformed requests."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import make_workspace

from repodoc_lsp.config import load_settings
from repodoc_lsp.knowledge.index import KeywordIndex
from repodoc_lsp.mcp import saved
from repodoc_lsp.mcp.docs import Docs, DocsError
from repodoc_lsp.mcp.pages import Pages
from repodoc_lsp.mcp.server import open_docs
from repodoc_lsp.mcp.tools import Tools
from repodoc_lsp.pipeline.runtime import LIBRARY

pytest.importorskip("mcp.server.mcpserver")

FILES = {
    "pkg/__init__.py": '"""The package."""\n',
    "pkg/core.py": '"""Core."""\n\n\nclass Widget:\n    """A widget."""\n\n    def spin(self) -> int:\n'
                   '        """Spin it."""\n        return 1\n\n\ndef make_widget() -> Widget:\n'
                   '    """Make one."""\n    return Widget()\n',
    "pkg/use.py": "from pkg.core import Widget, make_widget\n\n\ndef twice() -> list[Widget]:\n"
                  "    return [make_widget(), make_widget()]\n",
    "README.md": "# Demo\n\nSee `pkg.core.Widget` and `pkg.core.Gone`.\n",
}
QUERIES = ["widget", "Widget", "make", "mw", "spin", "wdg", "core", "demo", "w", ""]


def _docs(tmp_path: Path) -> tuple[Docs, Tools, Pages]:
    root = make_workspace(tmp_path / "ws", FILES)
    settings, _ = load_settings(root, {"cacheDir": str(tmp_path / "cache")})
    docs, tools, pages = open_docs(root, settings, LIBRARY, poll=0)
    docs.start()
    return docs, tools, pages


def test_tools_answer_from_the_servers_index_and_follow_the_disk(tmp_path: Path) -> None:
    docs, tools, pages = _docs(tmp_path)
    try:
        hits = docs.answer(lambda: tools.search_symbols("widget", 5))
        assert hits[0] == {"name": "Widget", "kind": "class", "path": "pkg/core.py", "line": 4,
                           "symbol": "pkg.core.Widget"}
        used = docs.answer(lambda: tools.used_by("pkg.core.make_widget"))
        assert used["used_by"] == [{"path": "pkg/use.py", "lines": [1, 5]}]
        assert docs.answer(lambda: tools.used_by("pkg.core"))["used_by"] == [{"path": "pkg/use.py"}]
        outline = docs.answer(lambda: tools.outline("pkg/core.py"))
        assert [r["name"] for r in outline["symbols"]][:2] == ["Widget", "make_widget"]  # most used first
        folder = docs.answer(lambda: tools.outline("pkg"))
        assert folder["files"][0]["path"] == "pkg/core.py"  # most imported first
        section = docs.answer(lambda: pages.get_page(symbol="pkg.core.Widget.spin"))
        assert section["page"] == "pkg/core.py_docs.md#method-Widget.spin" and "Spin it." in section["text"]
        stale = docs.answer(lambda: tools.check_references(["README.md"]))["stale"]
        assert [(s["line"], s["reference"]) for s in stale] == [(3, "pkg.core.Gone")]

        # edits on disk are taken before the next answer: a new file, a changed one, a deleted one
        (docs.path / "pkg/extra.py").write_text("from pkg.core import Widget\n\n\nclass Gadget(Widget):\n    pass\n")
        (docs.path / "pkg/core.py").write_text(FILES["pkg/core.py"] + "\n\nclass Gone:\n    pass\n")
        (docs.path / "pkg/use.py").unlink()
        (docs.path / "tools/deep").mkdir(parents=True)  # a new folder in a new folder
        (docs.path / "tools/deep/run.py").write_text("def brand_new_tool():\n    pass\n")
        assert docs.answer(lambda: tools.search_symbols("Gadget", 5))[0]["path"] == "pkg/extra.py"
        assert docs.answer(lambda: tools.search_symbols("brand_new_tool", 5))[0]["path"] == "tools/deep/run.py"
        used = docs.answer(lambda: tools.used_by("pkg.core.Widget"))
        assert [u["path"] for u in used["used_by"]] == ["pkg/extra.py"]
        assert used["subclassed_by"] == ["pkg.extra.Gadget"]
        assert docs.answer(lambda: tools.check_references(["README.md"]))["stale"] == []
        (docs.path / "tools/deep/run.py").chmod(0o600)  # made private: no input any more
        assert docs.search(lambda: tools.search_symbols("brand_new_tool", 5)) == []
        with pytest.raises(DocsError, match="unknown symbol"):
            docs.answer(lambda: tools.used_by("pkg.use.twice"))
    finally:
        docs.close()
    # the index is kept as the workspace became: the next start searches it
    kept = KeywordIndex()
    assert saved.load(saved.saved_path(docs.path, docs.root.settings), docs.path, kept)
    assert [e.rel for e in kept.lookup("Gadget")] == ["pkg/extra.py"]


def test_nothing_outside_the_workspace_is_read(tmp_path: Path) -> None:
    docs, tools, pages = _docs(tmp_path)
    secret = tmp_path / "secret.md"
    secret.write_text("# Secret\n\n`pkg.core.Widget`\n")
    (docs.path / "link.md").symlink_to(secret)
    (docs.path / "out").symlink_to(tmp_path)
    try:
        for path in ("../secret.md", str(secret), "link.md", "out/secret.md", "out"):
            with pytest.raises(DocsError, match="outside the workspace"):
                docs.answer(lambda path=path: tools.check_references([path]))
            with pytest.raises(DocsError, match="outside the workspace"):
                docs.answer(lambda path=path: tools.outline(path))
            with pytest.raises(DocsError, match="outside the workspace"):
                docs.answer(lambda path=path: pages.get_page(path=path))
        for page in ("../secret.md", "/etc/passwd", "out/secret.md_docs.md"):
            with pytest.raises(DocsError):
                docs.answer(lambda page=page: pages.read_page(page))
    finally:
        docs.close()


def test_a_file_replaced_by_a_link_to_outside_is_not_read(tmp_path: Path) -> None:
    """A workspace file swapped for a symbolic link to a file outside, after the scan: the next
    answers do not hold what the outside file says."""
    docs, tools, pages = _docs(tmp_path)
    outside = tmp_path / "outside.py"
    outside.write_text('def leaked_secret_name():\n    """Outside the workspace."""\n')
    try:
        assert docs.answer(lambda: tools.search_symbols("Widget", 5))
        core = docs.path / "pkg/core.py"
        core.unlink()
        core.symlink_to(outside)
        assert docs.search(lambda: tools.search_symbols("leaked_secret_name", 5)) == []
        with pytest.raises(DocsError, match="no page of that name"):  # no input any more
            docs.answer(lambda: pages.get_page(path="pkg/core.py_docs.md"))
    finally:
        docs.close()


def test_a_restart_searches_the_index_kept_while_the_workspace_loads(tmp_path: Path) -> None:
    docs, tools, _pages = _docs(tmp_path)
    try:
        expected = {q: docs.answer(lambda q=q: tools.search_symbols(q, 50)) for q in QUERIES}
    finally:
        docs.close()
    settings, _ = load_settings(docs.path, {"cacheDir": str(tmp_path / "cache")})
    path = saved.saved_path(docs.path, settings)
    assert path.is_file() and tmp_path / "cache" in path.parents  # in the cache folder, not the workspace

    again = Docs(docs.path, settings, LIBRARY, poll=0)  # not started: nothing scanned
    try:
        again.root.submit(again._load_saved).result()
        assert not again.root.indexed.is_set()
        search = Tools(again, Pages(again)).search_symbols
        assert {q: again.search(lambda q=q: search(q, 50)) for q in QUERIES} == expected  # as the rebuilt index
    finally:
        again.close()
    written = path.stat().st_ino
    third, tools, _pages = open_docs(docs.path, settings, LIBRARY, poll=0)
    third.start()
    try:
        assert {q: third.answer(lambda q=q: tools.search_symbols(q, 50)) for q in QUERIES} == expected
    finally:
        third.close()
    assert path.stat().st_ino == written  # nothing changed since: its scan did not write it again

    # anything changed since (a file's content, a file added, an ignore file): not used
    (docs.path / "pkg/core.py").write_text(FILES["pkg/core.py"] + "\n# more\n")
    assert not saved.load(path, docs.path, KeywordIndex())


def test_a_damaged_or_foreign_kept_index_is_ignored_and_made_again(tmp_path: Path) -> None:
    """The kept index is data checked before use: cut short, a byte changed, another format or
    version, a pickle (never loaded: nothing runs) are each ignored; a server started on a damaged
    one scans, answers as before and keeps a good one."""
    docs, tools, _pages = _docs(tmp_path)
    try:
        expected = {q: docs.answer(lambda q=q: tools.search_symbols(q, 50)) for q in QUERIES}
    finally:
        docs.close()
    path = saved.saved_path(docs.path, docs.root.settings)
    good = path.read_bytes()
    header, _, body = good.partition(b"\n")
    head = json.loads(header)
    sentinel = tmp_path / "ran"
    bad = {"cut short": good[: len(good) // 2], "no header": body,
           "a byte changed": header + b"\n" + body.replace(b'"Widget"', b'"Wodget"', 1),
           "another format": json.dumps({**head, "format": saved.FORMAT + 1}).encode() + b"\n" + body,
           "another version": json.dumps({**head, "version": "0.0.1"}).encode() + b"\n" + body,
           "a pickle": pickle.dumps(_Runs(sentinel))}
    assert saved.load(path, docs.path, KeywordIndex())
    for what, data in bad.items():
        path.write_bytes(data)
        index = KeywordIndex()
        assert not saved.load(path, docs.path, index), what
        assert len(index) == 0, what
    assert not sentinel.exists()

    path.write_bytes(bad["a byte changed"])
    again, tools, _pages = _docs(tmp_path)
    try:
        assert {q: again.answer(lambda q=q: tools.search_symbols(q, 50)) for q in QUERIES} == expected
    finally:
        again.close()
    assert saved.load(path, docs.path, KeywordIndex())  # made again by the scan


class _Runs:
    """A pickle that would write `path` when loaded."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self) -> tuple:
        return (Path.write_text, (self.path, "ran"))


def test_a_page_is_the_page_generate_writes(tmp_path: Path) -> None:
    docs, _tools, pages = _docs(tmp_path)
    try:
        from repodoc_lsp.pipeline.generate import generate
        from repodoc_lsp.store.workspace import Workspace

        ws = Workspace(docs.path, docs.root.settings, incremental=False)
        generate(docs.path, ws)
        out = docs.root.ws.out
        for page in ("pkg/core.py_docs.md", "pkg/core.py_kw.md", "pkg/index.md", "doc.md"):
            assert docs.answer(lambda page=page: pages.read_page(page)) == (out / page).read_text(), page
        assert docs.answer(lambda: pages.get_page(path="pkg/core.py"))["text"] == \
            (out / "pkg/core.py_docs.md").read_text()
    finally:
        docs.close()


def _server(root: Path, cache: Path) -> Any:
    from mcp.client.stdio import StdioServerParameters

    env = {"REPODOC_CACHE_DIR": str(cache), "PATH": os.environ.get("PATH", "")}
    return StdioServerParameters(command=sys.executable, args=["-m", "repodoc_lsp", "mcp", str(root), "--poll", "0"],
                                 env=env)


async def test_the_sdk_client_over_stdio(tmp_path: Path) -> None:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import stdio_client

    root = make_workspace(tmp_path / "ws", FILES)
    async with stdio_client(_server(root, tmp_path / "cache")) as (read, write), ClientSession(read, write) as s:
        await s.initialize()
        tools = {t.name: t for t in (await s.list_tools()).tools}
        assert set(tools) >= {"search_symbols", "used_by", "get_page", "outline", "check_references"}
        assert set(tools["search_symbols"].input_schema["properties"]) == {"query", "limit"}

        async def call(name: str, **arguments: Any) -> Any:
            result = await s.call_tool(name, arguments)
            assert not result.is_error, result.content
            return result.structured_content["result"] if "result" in (result.structured_content or {}) \
                else result.structured_content

        assert (await call("search_symbols", query="make", limit=1))[0]["symbol"] == "pkg.core.make_widget"
        assert (await call("used_by", symbol="pkg.core.Widget"))["used_by"][0]["path"] == "pkg/use.py"
        assert (await call("outline", path="pkg"))["files"][0]["path"] == "pkg/core.py"
        assert "Make one." in (await call("get_page", symbol="pkg.core.make_widget"))["text"]
        assert (await call("check_references", paths=["README.md"]))["stale"][0]["reference"] == "pkg.core.Gone"

        listed = [str(r.uri) for r in (await s.list_resources()).resources]
        assert listed == ["repodoc://page/index.md"]
        page = await s.read_resource("repodoc://page/pkg/core.py_docs.md")
        assert page.contents[0].text.splitlines()[1] == "# Documentation: `pkg/core.py`"

        for name, arguments, message in (("used_by", {"symbol": "pkg.nope.Thing"}, "unknown symbol: pkg.nope.Thing"),
                                         ("outline", {"path": "../.."}, "outside the workspace"),
                                         ("get_page", {"path": "/etc/passwd"}, "outside the workspace")):
            result = await s.call_tool(name, arguments)
            assert result.is_error and message in result.content[0].text, result.content
        with pytest.raises(Exception, match=r"(?i)path|traversal|not found|unknown"):
            await s.read_resource("repodoc://page/../../etc/passwd")


def test_malformed_requests_get_errors_and_the_server_lives(tmp_path: Path) -> None:
    """A client writing garbage, requests of unknown methods, unknown tools, tool calls of wrong
    arguments and paths outside the workspace: each request is answered with an error, and the
    next good request with its answer."""
    root = make_workspace(tmp_path / "ws", FILES)
    params = _server(root, tmp_path / "cache")
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        "this is not JSON", "[1, 2",
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": 5}},
        {"jsonrpc": "2.0", "id": 3, "method": "no/such/method"},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "used_by", "arguments": {"symbol": 7}}},
        {"jsonrpc": "2.0", "id": 5, "method": "tools/call",
         "params": {"name": "search_symbols", "arguments": {"query": "x" * 100_000}}},
        {"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "no_such_tool", "arguments": {}}},
        {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
         "params": {"name": "outline", "arguments": {"path": "../../etc", "extra": 1}}},
        {"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": "search_symbols", "arguments": []}},
        {"jsonrpc": "2.0", "id": 9, "method": "tools/call",
         "params": {"name": "search_symbols", "arguments": {"query": "widget", "limit": 1}}},
    ]
    text = "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines)
    proc = subprocess.Popen([params.command, *params.args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=params.env, text=True)
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(text)
        proc.stdin.flush()
        answers: dict[int, dict] = {}
        while not answers.keys() >= set(range(2, 10)):  # answers may come in any order
            line = proc.stdout.readline()
            assert line, f"the server ended: {proc.wait(10)}"
            message = json.loads(line)
            answers[message.get("id")] = message
        assert answers[2]["error"]["code"] == -32602
        assert answers[3]["error"]["code"] == -32601
        assert answers[4]["result"]["isError"] and "symbol" in answers[4]["result"]["content"][0]["text"]
        assert answers[5]["result"]["isError"] and "at most 256" in answers[5]["result"]["content"][0]["text"]
        assert answers[6]["result"]["isError"] and "Unknown tool" in answers[6]["result"]["content"][0]["text"]
        assert answers[7]["result"]["isError"] and "outside the workspace" in answers[7]["result"]["content"][0]["text"]
        assert answers[8]["error"]["code"] == -32602
        assert answers[9]["result"]["structuredContent"]["result"][0]["name"] == "Widget"
        assert proc.poll() is None
    finally:
        proc.stdin.close()  # type: ignore[union-attr]
        assert proc.wait(20) == 0


def test_the_cache_folder_keeps_the_indexes_of_the_workspaces_used_last(tmp_path: Path) -> None:
    folder = tmp_path / "mcp"
    folder.mkdir()
    for i in range(saved.KEPT + 3):
        (folder / f"{i}.json").write_text("{}")
        os.utime(folder / f"{i}.json", (i, i))
    saved._prune(folder)
    assert sorted(int(p.stem) for p in folder.glob("*.json")) == list(range(3, saved.KEPT + 3))


def test_the_start_loads_no_pipeline_template_or_cattrs(tmp_path: Path) -> None:
    """What `repodoc mcp` does before the SDK answers `initialize` (the workspace's `Docs` made): the page
    pipeline, Jinja2 and cattrs load later, when first needed, on the root's thread (they were a good
    part of the start); in a process of its own, as the command's."""
    root = make_workspace(tmp_path / "ws", FILES)
    probe = ("import sys\nfrom pathlib import Path\nfrom repodoc_lsp.config import load_settings\n"
             "from repodoc_lsp.mcp.server import open_docs\nfrom repodoc_lsp.pipeline.runtime import LIBRARY\n"
             f"settings, _ = load_settings(Path({str(root)!r}), {{'cacheDir': {str(tmp_path / 'cache')!r}}})\n"
             f"docs, _, _ = open_docs(Path({str(root)!r}), settings, LIBRARY)\n"
             "print(sorted(m for m in ('jinja2', 'cattrs', 'repodoc_lsp.pipeline.generate') if m in sys.modules))\n"
             "docs.root.close()\n")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"
