"""The language server's pure pieces: URIs, settings objects, which folders may be roots,
outlines, the dotted name at a cursor, reference columns in the client's units, merged
summaries. (The features themselves are tested over stdio in tests/lsp.)"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lsprotocol import types
from lsprotocol.converters import get_converter as default_converter
from pygls.workspace.position_codec import PositionCodec

from repodoc_lsp.analysis.model import SymbolKind
from repodoc_lsp.config import Settings
from repodoc_lsp.knowledge.index import MODULE, Entry, KeywordIndex
from repodoc_lsp.output.manifest import MANIFEST
from repodoc_lsp.server import references
from repodoc_lsp.server.commands import _merge
from repodoc_lsp.server.convert import _LINE, LSP_SYMBOL_KINDS, EditorDocument, path_of, split_lines, uri_of
from repodoc_lsp.server.protocol import encode
from repodoc_lsp.server.ref_diagnostics import _suggestion, wanted
from repodoc_lsp.server.references import _columns, _word, building, kept, locations, locations_json
from repodoc_lsp.server.roots import output_folder_around, project_folder, refusal
from repodoc_lsp.server.settings import unwrap
from repodoc_lsp.server.symbols import entry_range, outline, symbols
from repodoc_lsp.server.xref import dotted_at
from repodoc_lsp.store.regular import read_regular
from repodoc_lsp.store.workspace import Workspace


def test_uris_round_trip_and_every_index_kind_has_an_lsp_kind(tmp_path: Path) -> None:
    path = tmp_path / "a dir" / "café#1.py"
    uri = uri_of(path)
    assert uri.startswith("file://") and " " not in uri and "#1" not in uri
    assert path_of(uri) == path
    assert uri_of(path, "class-A").endswith("#class-A")
    assert path_of("untitled:Untitled-1") is None
    assert set(LSP_SYMBOL_KINDS) == {k.value for k in SymbolKind} | {MODULE}


def test_unwrap_takes_the_repodoc_section_flat_or_nested() -> None:
    assert unwrap({"repodoc": {"hover": "off", "trace": "verbose"}}) == {"hover": "off"}
    assert unwrap({"hover": "off", "serverCommand": ["x"], "interpreter": "py"}) == {"hover": "off"}
    assert unwrap({"repodoc": []}) == {} and unwrap({"repodoc": None}) == {}  # Lua's {} is sent as []
    assert unwrap([]) == {} and unwrap(None) == {} and unwrap("x") == {}


def test_which_folders_may_be_roots(tmp_path: Path) -> None:
    assert "root of the file system" in refusal(Path("/"))
    assert "home folder" in refusal(Path.home())
    assert "system folder" in refusal(Path("/proc/self"))
    ws = tmp_path / "ws"
    (ws / "docs" / "pkg").mkdir(parents=True)
    assert refusal(ws) == ""
    (ws / "docs" / MANIFEST).write_text("{}")
    assert output_folder_around((ws / "docs" / "pkg").resolve()) == (ws / "docs").resolve()
    assert "inside the repodoc output folder" in refusal(ws / "docs" / "pkg")
    assert refusal(ws) == ""


def test_project_folder_of_a_file_outside_every_root(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / "src" / "pkg").mkdir(parents=True)
    (project / "pyproject.toml").write_text("")
    assert project_folder(project / "src" / "pkg" / "m.py") == project.resolve()
    lone = tmp_path / "lone" / "deep"
    lone.mkdir(parents=True)
    assert project_folder(lone / "m.py") in {lone.resolve(), *lone.resolve().parents}


def _e(name: str, kind: str, container: str, line: int, end_line: int, col: int = 0) -> Entry:
    return Entry(name, kind, container, "m.py", line, col, end_line)


def test_outline_nests_entries_under_their_containers() -> None:
    entries = [_e("m", "method", "A", 3, 4, 4), _e("A", "class", "", 1, 5), _e("inner", "function", "A.m", 4, 4, 8),
               _e("f", "function", "", 7, 8), _e("Title", "heading", "", 10, 10), _e("Sub", "heading", "Title", 12, 12)]
    top = outline(entries)
    assert [(s.name, s.kind) for s in top] == [("A", types.SymbolKind.Class), ("f", types.SymbolKind.Function),
                                               ("Title", types.SymbolKind.String)]
    a = top[0]
    assert [c.name for c in a.children or []] == ["m"]
    assert [c.name for c in (a.children or [])[0].children or []] == ["inner"]
    assert [c.name for c in top[2].children or []] == ["Sub"]
    assert a.range == types.Range(start=types.Position(line=0, character=0), end=types.Position(line=4, character=0))
    assert entry_range(_e("x", "function", "", 1, 1, 4)).end == types.Position(line=0, character=4)


@pytest.mark.parametrize(("line", "col", "expected"), [
    ("x = nn.Linear(3)", 8, "nn.Linear"), ("x = nn.Linear(3)", 4, "nn"), ("a.b.c", 5, "a.b.c"),
    ("  foo", 2, "foo"), ("x = 3.5", 5, ""), ("", 0, ""), ("obj..attr", 6, "obj.attr"),
])
def test_dotted_at(line: str, col: int, expected: str) -> None:
    assert dotted_at(line, col) == expected


def test_reference_columns_are_whole_words_in_the_clients_units() -> None:
    assert _word("Shape, shape_of(Shape)", "Shape") == 0
    assert _word("MyShape = Shape", "Shape") == 10
    assert _word("Shapes only", "Shape") == -1
    text = "é = Shape()"
    assert _columns("😀 = Shape()", "Shape", PositionCodec(types.PositionEncodingKind.Utf16)) == (5, 10)  # two units
    assert _columns("😀 = Shape()", "Shape", PositionCodec(types.PositionEncodingKind.Utf8)) == (7, 12)  # four bytes
    assert _columns(text, "Nowhere", PositionCodec()) == (0, len(text))  # not spelt there: the line


def test_diagnostics_pieces() -> None:
    assert wanted("pkg/m.py") and wanted("README.md") and wanted("docs/guide.rst") and not wanted("data.csv")
    assert _suggestion({"suggestion": "pkg.Gadget"}) == "pkg.Gadget"
    assert _suggestion({"suggestion": 3}) == "" and _suggestion(None) == "" and _suggestion("x") == ""


def test_summaries_of_several_roots_merge() -> None:
    def summary(written: int, cancelled: bool) -> dict:
        return {"files": 1, "analysed": 1, "cached": 0, "written": written, "unchanged": 2, "removed": 0,
                "skipped": [], "conflicts": [{"path": "x"}], "errors": [], "stale": [],
                "writtenPages": ["p"] * written, "removedPages": [], "seconds": 0.25, "cancelled": cancelled}

    one = summary(1, False)
    assert _merge([one]) is one
    merged = _merge([one, summary(2, True)])
    assert merged["written"] == 3 and merged["writtenPages"] == ["p"] * 3 and merged["unchanged"] == 4
    assert merged["conflicts"] == [{"path": "x"}, {"path": "x"}] and merged["seconds"] == 0.5
    assert merged["cancelled"] is True and len(merged["roots"]) == 2


class _Root:
    """What `locations` reads of a server root: its workspace and file URIs."""

    closed = False

    def __init__(self, ws: Workspace) -> None:
        self.ws, self.path = ws, ws.root

    def uri(self, rel: str) -> str:
        return uri_of(self.path / rel)


def _thing_workspace(tmp_path: Path) -> tuple[Path, Workspace, _Root, PositionCodec]:
    """`lib.py` defining `Thing` and `use.py` naming it on lines 1 and 3, scanned; its server root
    and a UTF-16 codec."""
    root = tmp_path / "ws"
    root.mkdir()
    (root / "lib.py").write_text("class Thing:\n    pass\n")
    (root / "use.py").write_text("from lib import Thing\n\nThing()\n")
    ws = Workspace(root, Settings(), use_cache=False)
    ws.scan(jobs=1)
    return root, ws, _Root(ws), PositionCodec(types.PositionEncodingKind.Utf16)


def test_a_references_answer_is_kept_until_its_lines_or_files_change(tmp_path: Path) -> None:
    root, ws, server_root, codec = _thing_workspace(tmp_path)
    key = ("lib.py", "Thing")
    first = locations(server_root, ws.graph(), key, False, codec)
    assert [(loc.range.start.line, loc.range.start.character) for loc in first.locations()] == [(0, 16), (2, 0)]
    assert locations(server_root, ws.graph(), key, False, codec) is first  # kept, not built again
    # the JSON sent is what pygls's converter makes of the same Location objects
    assert json.loads(first.encoded()) == default_converter().unstructure(first.locations())
    assert first.encoded() is first.encoded()  # encoded once
    assert first.encoded().data is first.encoded().data == first.encoded().encode()  # its bytes made once
    assert len(locations(server_root, ws.graph(), key, True, codec)) == 3  # with its declaration: another answer
    (root / "use.py").write_text("from lib import  Thing\n\nThing()\n")  # same lines, another column
    ws.update_file("use.py")
    moved = locations(server_root, ws.graph(), key, False, codec)
    assert [(loc.range.start.line, loc.range.start.character) for loc in moved.locations()] == [(0, 17), (2, 0)]
    fresh = Workspace(root, Settings(), use_cache=False)  # the bytes sent are a fresh server's
    fresh.scan(jobs=1)
    assert moved.encoded().data == locations(_Root(fresh), fresh.graph(), key, False, codec).encoded().data
    (root / "use.py").write_text("from lib import Thing\n")  # a line fewer
    ws.update_file("use.py")
    assert len(locations(server_root, ws.graph(), key, False, codec)) == 1
    # a byte order mark is no text of the editor's (VS Code's document has none): no column before the name
    (root / "use.py").write_bytes(b"\xef\xbb\xbffrom lib import Thing\r\nThing()\n")
    ws.update_file("use.py")
    for kind in (types.PositionEncodingKind.Utf16, types.PositionEncodingKind.Utf8):
        bom = locations(server_root, ws.graph(), key, False, PositionCodec(kind))
        assert [(loc.range.start.line, loc.range.start.character) for loc in bom.locations()] == [(0, 16), (1, 0)]


def test_an_answer_built_again_reads_only_the_files_that_changed(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """After an edit, the next ask reads the files whose bytes or lines changed and takes the
    others' locations from the last answer; it is the answer a fresh server gives."""
    root = tmp_path / "ws"
    root.mkdir()
    (root / "lib.py").write_text("class Thing:\n    pass\n\n\nx: Thing\n")
    for n in range(4):
        (root / f"use{n}.py").write_text(f"from lib import Thing\n\nx ={' ' * n}Thing()\n")
    ws = Workspace(root, Settings(), use_cache=False)
    ws.scan(jobs=1)
    server_root, codec, key = _Root(ws), PositionCodec(types.PositionEncodingKind.Utf16), ("lib.py", "Thing")
    read: list[str] = []

    def counted(path: str, limit: int | None = None) -> bytes:
        read.append(Path(path).name)
        return read_regular(path, limit)

    monkeypatch.setattr(references, "read_regular", counted)
    for declaration in (False, True):
        assert len(locations(server_root, ws.graph(), key, declaration, codec)) == 9 + declaration
    read.clear()
    (root / "use2.py").write_text("from lib import Thing\n\nx = (Thing)\n")  # same lines, another column
    ws.update_file("use2.py")
    (root / "use3.py").write_text("from lib import Thing\n")  # a line fewer
    ws.update_file("use3.py")
    fresh = Workspace(root, Settings(), use_cache=False)
    fresh.scan(jobs=1)
    for declaration in (False, True):
        again = locations(server_root, ws.graph(), key, declaration, codec)
        assert sorted(read) == ["use2.py", "use3.py"]
        read.clear()
        expected = locations(_Root(fresh), fresh.graph(), key, declaration, codec)
        assert read and again.spans == expected.spans
        assert (2, 5) in [(line, start) for uri, line, start, _ in again.spans if uri.endswith("use2.py")]
        read.clear()


def test_answers_are_kept_up_to_a_budget_of_locations(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Small answers are kept beyond 8 (an editor going over 12 names and back builds none again);
    the oldest go when the locations kept pass `LOCATIONS_KEPT`, the last is kept whatever its size."""
    root = tmp_path / "ws"
    root.mkdir()
    names = [f"C{i}" for i in range(12)]
    (root / "lib.py").write_text("".join(f"class {n}:\n    pass\n\n\n" for n in names))
    (root / "use.py").write_text("".join(f"from lib import {n}\n{n}()\n" for n in names))
    ws = Workspace(root, Settings(), use_cache=False)
    ws.scan(jobs=1)
    server_root, graph, codec = _Root(ws), ws.graph(), PositionCodec(types.PositionEncodingKind.Utf16)
    built = [locations(server_root, graph, ("lib.py", n), False, codec) for n in names]
    assert all(len(answer) == 2 for answer in built)
    assert [kept(server_root, graph, ("lib.py", n), False, codec) for n in names] == built  # type: ignore[arg-type]
    monkeypatch.setattr(references, "LOCATIONS_KEPT", 3)
    again = locations(server_root, graph, ("lib.py", "C0"), True, codec)  # 3 locations: the others go
    assert kept(server_root, graph, ("lib.py", "C0"), True, codec) is again  # type: ignore[arg-type]
    assert all(kept(server_root, graph, ("lib.py", n), False, codec) is None for n in names)  # type: ignore[arg-type]


def test_an_answer_built_off_the_loop_is_kept_and_found_in_the_bytes_as_in_the_line(tmp_path: Path) -> None:
    """An answer built on its own thread (`building`) is kept (with and without the declaration);
    an answer found in the file's bytes is the one the decoded line gives (non-ASCII text before
    the name, a non-ASCII letter joined to it, a line without it)."""
    root = tmp_path / "ws"
    root.mkdir()
    (root / "lib.py").write_text("class Thing:\n    pass\n\n\nclass Rare:\n    pass\n")
    (root / "a.py").write_text("from lib import Thing, Rare\n"
                               "x = ('é', Thing)  # é\n"
                               "éThing = 1; y: Thing = Thing()\n"
                               "z = (Thing\n"
                               "     .mro)\n", encoding="utf-8")
    (root / "b.py").write_text("from lib import *\nThing\r\n", encoding="utf-8")
    ws = Workspace(root, Settings(), use_cache=False)
    ws.scan(jobs=1)
    server_root = _Root(ws)
    graph = ws.graph()
    thing, rare = ("lib.py", "Thing"), ("lib.py", "Rare")
    for kind in (types.PositionEncodingKind.Utf16, types.PositionEncodingKind.Utf8):
        codec = PositionCodec(kind)
        for declaration in (False, True):
            built = building(server_root, graph, thing, declaration, codec).result(10)  # type: ignore[arg-type]
            answer = kept(server_root, graph, thing, declaration, codec)  # type: ignore[arg-type]
            assert answer is built
            # as each line decoded and searched (`_columns`) gives it
            lines = {rel: (root / rel).read_bytes().split(b"\n") for rel in ("a.py", "b.py", "lib.py")}
            expected = []
            for uri, line, _, _ in answer.spans:
                rel = uri.rpartition("/")[2]
                expected.append((uri, line, *_columns(lines[rel][line].decode().rstrip("\r"), "Thing", codec)))
            assert answer.spans == expected
            assert len(answer) == 5 + declaration
        assert kept(server_root, graph, rare, False, codec) is None  # type: ignore[arg-type]
        built = building(server_root, graph, rare, False, codec).result(10)  # type: ignore[arg-type]
        assert kept(server_root, graph, rare, False, codec) is built  # type: ignore[arg-type]


def test_locations_are_formatted_as_json_dumps_writes_them() -> None:
    """A references answer is formatted as text (no dicts, a URI encoded once per file): byte for
    byte what `json.dumps` of the Location dicts writes, quotes, backslashes and non-ASCII URIs included."""
    spans = [("file:///ws/a.py", 0, 4, 9), ("file:///ws/a.py", 12, 0, 31), ('file:///ws/q"\\é.py', 3, 7, 8),
             ("file:///ws/a.py", 99, 1, 2)]
    expected = encode([{"uri": uri, "range": {"start": {"line": line, "character": start},
                                              "end": {"line": line, "character": end}}}
                       for uri, line, start, end in spans])
    assert locations_json(spans) == expected and locations_json([]) == "[]"


class _IndexRoot:
    """What `symbols` reads of a server root: settings, keyword index, readiness, file URIs."""

    def __init__(self, index: KeywordIndex, ready: bool) -> None:
        self.settings, self.index, self.ready = Settings(), index, threading.Event()
        if ready:
            self.ready.set()

    def uri(self, rel: str) -> str:
        return f"file:///ws/{rel}"


def test_workspace_symbols_are_the_json_of_their_symbol_informations() -> None:
    index = KeywordIndex()
    index.set_file("pkg/shapes.py", [Entry("Shape", SymbolKind.CLASS.value, "", "pkg/shapes.py", 3, 0, 9),
                                     Entry("shape_area", SymbolKind.METHOD.value, "Shape", "pkg/shapes.py", 5, 4, 5)])
    root = _IndexRoot(index, ready=True)
    expected = [types.SymbolInformation(name=e.name, kind=LSP_SYMBOL_KINDS[e.kind], container_name=e.container or None,
                                        location=types.Location(uri=root.uri(e.rel), range=entry_range(e)))
                for e in index.search("shape")]
    assert len(expected) == 2
    assert json.loads(symbols([root], "shape")) == default_converter().unstructure(expected)


def test_a_search_while_indexing_answers_from_the_last_snapshot_and_the_filler_takes_the_next() -> None:
    """The contract workspace/symbol relies on while a root is indexed: `search_latest` never
    takes a snapshot once one exists (the event loop or a request thread would wait up to a
    second on 17,000 files); `refresh`, on the indexing thread, takes it when a search asked."""
    index = KeywordIndex()
    index.set_file("a.py", [Entry("Alpha", SymbolKind.CLASS.value, "", "a.py", 1, 0, 2)])
    index.refresh(every=0)  # the first batch takes the first (small) snapshot
    index.set_file("b.py", [Entry("Alphabet", SymbolKind.CLASS.value, "", "b.py", 1, 0, 2)])
    assert [e.name for e in index.search_latest("alpha")] == ["Alpha"]  # stale, not waited for
    root = _IndexRoot(index, ready=False)
    assert [s["name"] for s in json.loads(symbols([root], "alpha"))] == ["Alpha"]
    time.sleep(2 * index._cost)  # a snapshot is taken at most a third of the time
    index.refresh(every=0)  # asked for: taken here
    assert [e.name for e in index.search_latest("alpha")] == ["Alpha", "Alphabet"]
    index.set_file("c.py", [Entry("Alpine", SymbolKind.CLASS.value, "", "c.py", 1, 0, 2)])
    assert len(index.search("alp")) == 3  # `search` (a root indexed) sees every change
    root.ready.set()
    assert len(json.loads(symbols([root], "alp"))) == 3


def test_an_ask_being_built_is_shared_while_its_state_holds_and_a_cancelled_asker_leaves_it(tmp_path: Path) -> None:
    """Two asks wait for one build: the editor cancelling one (pygls cancels the awaiting task,
    which cancels a wrapped concurrent future) leaves the build and the other asker alone; an ask
    after an edit does not wait for a build of the lines before it (that answer is stale)."""
    import asyncio

    from repodoc_lsp.server.references import _ask, _build_into, _claim, _state

    root, ws, server_root, codec = _thing_workspace(tmp_path)
    graph, key = ws.graph(), ("lib.py", "Thing")
    ask = _ask(key, False, codec)
    old, mine = _claim(server_root, ask, _state(server_root, graph, key, False))  # type: ignore[arg-type]
    assert mine  # a build under way, of the lines as they are now

    async def two_asks() -> list:
        first = asyncio.ensure_future(asyncio.wrap_future(
            building(server_root, graph, key, False, codec)))  # type: ignore[arg-type]
        second = asyncio.ensure_future(asyncio.wrap_future(
            building(server_root, graph, key, False, codec)))  # type: ignore[arg-type]
        await asyncio.sleep(0)
        first.cancel()  # $/cancelRequest
        await asyncio.sleep(0)
        builder.start()
        return await asyncio.gather(first, second, return_exceptions=True)

    builder = threading.Thread(target=_build_into, args=(old, server_root, graph, key, False, codec))
    cancelled, answer = asyncio.run(asyncio.wait_for(two_asks(), 10))
    builder.join(10)
    assert isinstance(cancelled, asyncio.CancelledError)
    assert [(line, start) for _, line, start, _ in answer.spans] == [(0, 16), (2, 0)]
    assert old.result(0) is answer
    # a build claimed before an edit is not the answer to an ask after it
    stale, mine = _claim(server_root, ask, _state(server_root, graph, key, False))  # type: ignore[arg-type]
    assert mine
    (root / "use.py").write_text("from lib import Thing\nThing()\n\n\nThing.mro\n")
    ws.update_file("use.py")
    graph = ws.graph()
    fresh = building(server_root, graph, key, False, codec)  # type: ignore[arg-type]
    assert fresh is not stale
    assert [(line, start) for _, line, start, _ in fresh.result(10).spans] == [(0, 16), (1, 0), (4, 0)]
    _build_into(stale, server_root, graph, key, False, codec)  # type: ignore[arg-type]  # the old builder ends
    assert kept(server_root, graph, key, False, codec) is fresh.result(0)  # type: ignore[arg-type]


def test_a_root_indexes_a_cold_scan_in_one_read_and_answers_as_a_warm_start(tmp_path: Path) -> None:
    """After a cold scan the index and the symbol graph take every file without reading its facts
    back from the cache (the scan indexed them and sketched their graph views as they arrived; only
    the module entries, known at the end, are added); a warm start reads each cached file's facts
    once for both. Either way the index holds each file's entries with its module's, as the files'
    facts give them, and the graph answers the same."""
    from repodoc_lsp.knowledge.index import entries_of
    from repodoc_lsp.pipeline.runtime import LIBRARY
    from repodoc_lsp.server.state import Root

    files = {"pkg/__init__.py": "from pkg.a import A\n", "pkg/a.py": "class A:\n    def run(self):\n        pass\n",
             "pkg/b.py": "from pkg.a import A\n\n\nclass B(A):\n    pass\n", "notes.md": "# Notes\n\n## Run\n",
             **{f"pkg/m{i}.py": f"from pkg.b import B\n\n\ndef f{i}():\n    return B()\n" for i in range(60)}}
    for rel, text in files.items():
        (tmp_path / "ws" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "ws" / rel).write_text(text)
    settings = Settings(cache_dir=str(tmp_path / "cache"), jobs=2)
    roots = []
    for _ in ("cold", "warm"):
        root = Root(tmp_path / "ws", settings, LIBRARY)
        reads: list[int] = []
        scanned = root.ws.scan

        def scan(*args, root=root, reads=reads, scanned=scanned, **kwargs):  # type: ignore[no-untyped-def]
            done = scanned(*args, **kwargs)
            get_many = root.ws.cache.get_many  # what the index and the graph read after the scan
            root.ws.cache.get_many = lambda keys: reads.append(len(keys)) or get_many(keys)  # type: ignore
            return done

        root.ws.scan = scan  # type: ignore[method-assign]
        root.submit(root.scan).result(60)
        roots.append((root, reads))
    (cold, cold_reads), (warm, warm_reads) = roots
    try:
        assert cold.ws.analysed == len(files) and cold_reads == []
        assert warm.ws.cached == len(files) and sum(warm_reads) == len(files)  # each file's facts once
        for root in (cold, warm):
            assert not any(root.ws.facts.loaded(rel) for rel in files)  # forgotten: the cache holds them
            module_of = root.ws.relations.module_of
            for rel in files:
                assert root.index.file_entries(rel) == entries_of(rel, root.ws.facts.one(rel), module_of.get(rel, ""))
            assert [e.rel for e in root.index.lookup("m7")] == ["pkg/m7.py"]  # its module entry
        sub = cold.ws.graph().subclasses(("pkg/a.py", "A"))
        assert sub == warm.ws.graph().subclasses(("pkg/a.py", "A")) == [("pkg/b.py", "B")]
        assert cold.ws.graph().users(("pkg/b.py", "B")) == warm.ws.graph().users(("pkg/b.py", "B"))
    finally:
        cold.close()
        warm.close()


_PIECES = st.sampled_from(["a", "b = 2", "é", "😋", "\t", "\n", "\r\n", "\r", "\x0c", "\u2028", "\x85", " "])


@given(st.text(alphabet=st.sampled_from(["a", "é", "\n", "\r", "\x0c", "\u2028", "\x85"]), max_size=30))
def test_a_text_without_carriage_returns_is_split_as_the_line_pattern_splits_it(text: str) -> None:
    """`split_lines` splits at `\n` when the text has no `\r` (`_LINE.findall` took 150-190 ms
    for a 1.37 MB file not open in the editor, split at each request): the same lines either way."""
    assert split_lines(text) == tuple(_LINE.findall(text))
    assert split_lines(text.replace("\r", "")) == tuple(_LINE.findall(text.replace("\r", "")))


@given(st.lists(_PIECES, max_size=30), st.data(), st.sampled_from(["", "X", "\n", "é\x0c"]))
def test_an_incremental_change_lands_where_the_editor_made_it(parts: list[str], data: st.DataObject,
                                                             new: str) -> None:
    """An open document edited by range (UTF-16 columns) is the editor's text edited there: lines
    broken at \\n, \\r\\n and \\r only (a form feed, \\x85 or \\u2028 is text), against
    the text spliced at the range's offsets."""
    import re

    src = "".join(parts)
    lines = re.split(r"\r\n|\r|\n", src)  # the editor's lines, without their ends
    first = data.draw(st.integers(0, len(lines) - 1))
    last = data.draw(st.integers(first, len(lines) - 1))
    start = data.draw(st.integers(0, len(lines[first])))
    end = data.draw(st.integers(0 if last > first else start, len(lines[last])))

    def units(text: str) -> int:
        return len(text.encode("utf-16-le")) // 2

    doc = EditorDocument("file:///x.py", src, position_codec=PositionCodec(types.PositionEncodingKind.Utf16))
    doc.apply_change(types.TextDocumentContentChangePartial(range=types.Range(
        start=types.Position(line=first, character=units(lines[first][:start])),
        end=types.Position(line=last, character=units(lines[last][:end]))), text=new))
    offsets = [0, *(m.end() for m in re.finditer(r"\r\n|\r|\n", src))]
    assert doc.source == src[:offsets[first] + start] + new + src[offsets[last] + end:]
    assert "".join(doc.lines) == doc.source  # split again after the change (each request reads them)
    assert doc.lines is doc.lines  # and once: a hover does not split a large file again
