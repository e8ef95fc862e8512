"""textDocument/references for workspace definitions, answered from the symbol graph
(no jedi: every file that names the definition, through imports and re-exports)."""

from __future__ import annotations

import asyncio
import codecs
import functools
import json
import os
import re
import threading
import weakref
from collections import OrderedDict
from concurrent.futures import Future
from typing import TYPE_CHECKING, cast

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from repodoc_lsp.knowledge.graph import Def, Graph, Key
from repodoc_lsp.server.protocol import Encoded
from repodoc_lsp.server.server import RepodocServer
from repodoc_lsp.server.xref import graph_of, target
from repodoc_lsp.store.regular import read_regular

if TYPE_CHECKING:
    from repodoc_lsp.server.state import Root


def register(server: RepodocServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_REFERENCES)
    async def references(ls: RepodocServer, params: types.ReferenceParams) -> Encoded | None:
        with ls.requests:  # regeneration waits meanwhile
            return await _references(ls, params)


async def _references(ls: RepodocServer, params: types.ReferenceParams) -> Encoded | None:
    found = graph_of(ls, params.text_document.uri)
    if found is None:
        return None
    root, graph, rel = found
    lines = ls.document(params.text_document.uri).lines  # as LSP counts them (EditorDocument)
    try:
        pos = ls.position_codec.position_from_client_units(lines, params.position)
        line_text = lines[pos.line] if pos.line < len(lines) else ""
    except (IndexError, ValueError):
        return None
    key = target(graph, rel, line_text, pos.line + 1, pos.character)
    if key is None:
        return None
    declaration, codec = params.context.include_declaration, ls.position_codec
    answer = kept(root, graph, key, declaration, codec)
    if answer is None:  # built off the event loop: hovers go on meanwhile (a heavy class: hundreds of files read)
        answer = await asyncio.wrap_future(building(root, graph, key, declaration, codec))
    return answer.encoded()


ANSWERS_KEPT = 64  # answers kept per root at most,
LOCATIONS_KEPT = 40_000  # and their locations (a few MB with their JSON: bench/README.md, bench_references.py);
# the last answer is kept whatever its size. (8 answers kept before: an editor's 9th name asked
# again was built again, however small.)


class Answer:
    """The locations of one answer, as (uri, line from 0, start, end), and the same encoded
    as JSON once asked: an answer kept is sent again as it was (building 10,000 Location
    objects and unstructuring them with cattrs took most of a heavy class's answer)."""

    def __init__(self, spans: list[tuple[str, int, int, int]]) -> None:
        self.spans = spans
        self._encoded: Encoded | None = None

    def __len__(self) -> int:
        return len(self.spans)

    def encoded(self) -> Encoded:
        if self._encoded is None:
            self._encoded = locations_json(self.spans)
        return self._encoded

    def locations(self) -> list[types.Location]:
        return [types.Location(uri=uri, range=types.Range(start=types.Position(line=line, character=start),
                                                          end=types.Position(line=line, character=end)))
                for uri, line, start, end in self.spans]


def locations_json(spans: list[tuple[str, int, int, int]]) -> Encoded:
    """The Locations as `encode` writes them, formatted as text: each URI is encoded once per
    file, and no dict is built (a few times faster than building the dicts and `json.dumps`:
    bench/README.md, bench_references.py)."""
    parts = []
    last = None
    head = ""
    for uri, line, start, end in spans:
        if uri is not last:
            last = uri
            head = '{"uri":' + json.dumps(uri) + ',"range":{"start":{"line":'
        parts.append(f'{head}{line},"character":{start}}},"end":{{"line":{line},"character":{end}}}}}}}')
    return Encoded("[" + ",".join(parts) + "]")


_answers: weakref.WeakKeyDictionary[Root, OrderedDict[tuple, tuple[object, Answer]]] = weakref.WeakKeyDictionary()
_building: weakref.WeakKeyDictionary[Root, dict[tuple, tuple[tuple, Future[Answer]]]] = weakref.WeakKeyDictionary()
_answers_lock = threading.Lock()


def _ask(key: Key, declaration: bool, codec: PositionCodec) -> tuple:
    return (key, declaration, codec.encoding)


def _state(root: Root, graph: Graph, key: Key, declaration: bool) -> tuple:
    """What a kept answer was built from: the lines the graph gives and their files' digests."""
    users = graph.users(key, own=True)
    d = graph.definition(*key) if declaration else None
    digests = root.ws.digests
    return (users, d, [digests.get(rel) for rel in users], digests.get(key[0]) if d is not None else None)


def kept(root: Root, graph: Graph, key: Key, declaration: bool, codec: PositionCodec) -> Answer | None:
    """The answer kept for this ask while what it was built from is the same, else None."""
    ask = _ask(key, declaration, codec)
    with _answers_lock:
        table = _answers.get(root)
        hit = table.get(ask) if table is not None else None
    if hit is None or hit[0] != _state(root, graph, key, declaration):
        return None
    with _answers_lock:
        table = _answers.get(root)
        if table is not None and ask in table:
            table.move_to_end(ask)
    return hit[1]


def building(root: Root, graph: Graph, key: Key, declaration: bool, codec: PositionCodec) -> Future[Answer]:
    """The answer, built on a thread of its own (encoded there too); an ask already being
    built from the same lines and files (the editor asks again) is waited for."""
    future, mine = _claim(root, _ask(key, declaration, codec), _state(root, graph, key, declaration))
    if mine:
        threading.Thread(target=_build_into, args=(future, root, graph, key, declaration, codec),
                         name="repodoc-references", daemon=True).start()
    return future


def _claim(root: Root, ask: tuple, state: tuple) -> tuple[Future[Answer], bool]:
    """The future of an ask being built from `state`, and whether the caller is to build it
    (a build from another state, begun before an edit, is not waited for). The future is
    running: an asker cancelled (`asyncio.wrap_future` cancels the future it wraps) leaves it
    to the others who wait for it."""
    with _answers_lock:
        table = _building.setdefault(root, {})
        under_way = table.get(ask)
        if under_way is not None and under_way[0] == state:
            return under_way[1], False
        future: Future[Answer] = Future()
        future.set_running_or_notify_cancel()
        table[ask] = (state, future)
        return future, True


def _build_into(future: Future[Answer], root: Root, graph: Graph, key: Key, declaration: bool,
                codec: PositionCodec) -> None:
    try:
        answer = locations(root, graph, key, declaration, codec)
        answer.encoded()
        future.set_result(answer)
    except BaseException as exc:  # whoever waits gets the error
        future.set_exception(exc)
    finally:
        with _answers_lock:
            table = _building.get(root, {})
            ask = _ask(key, declaration, codec)
            if ask in table and table[ask][1] is future:  # not a later build's
                del table[ask]


def locations(root: Root, graph: Graph, key: Key, declaration: bool, codec: PositionCodec) -> Answer:
    """Each line that names `key` (the name's columns found in the line; the whole line when
    it is not spelt there, as in a star import), and its definition if asked. Only the lines
    wanted are decoded (a heavy class is named on thousands of lines of hundreds of files). The last
    answers are kept while the lines the graph gives and the digests of their files stay the
    same (an editor asks again for a peek, then for the list; a heavy class's answer takes
    hundreds of milliseconds to build)."""
    found = kept(root, graph, key, declaration, codec)
    if found is not None:
        return found
    state = _state(root, graph, key, declaration)
    users, d = state[0], state[1]
    ask = _ask(key, declaration, codec)
    with _answers_lock:
        table = _answers.get(root)
        before = table.get(ask) if table is not None else None
    found = Answer(_build(root, key, users, d, codec, _unchanged(root, key, before, state)))
    with _answers_lock:
        table = _answers.setdefault(root, OrderedDict())
        table[ask] = (state, found)
        table.move_to_end(ask)
        while len(table) > 1 and (len(table) > ANSWERS_KEPT
                                  or sum(len(answer) for _, answer in table.values()) > LOCATIONS_KEPT):
            table.popitem(last=False)
    return found


def _wanted(key: Key, users: dict[str, tuple[int, ...]], d: Def | None) -> dict[str, list[int]]:
    """The lines of each file the answer gives: its users' lines, and its definition's when asked (`d`)."""
    wanted: dict[str, list[int]] = {rel: list(lines) for rel, lines in users.items()}
    if d is not None:
        wanted.setdefault(key[0], []).append(d.line)
    return wanted


def _files(key: Key, state: tuple) -> dict[str, tuple[str | None, tuple[int, ...]]]:
    """Each file of an answer built from `state`: its digest and its lines (`_wanted`, sorted, once)."""
    users, d, digests, own = state
    digest_of = dict(zip(users, digests, strict=True))
    if d is not None:  # the definition's file: its own digest
        digest_of[key[0]] = own
    return {rel: (digest_of[rel], tuple(sorted(set(lines)))) for rel, lines in _wanted(key, users, d).items()}


def _unchanged(root: Root, key: Key, before: tuple[object, Answer] | None,
               state: tuple) -> dict[str, list[tuple[str, int, int, int]]]:
    """The locations of the last answer to the same ask, by file, for the files whose bytes
    (digest) and lines are the same now: they are not read again (an edit of one of the hundreds of
    files naming a heavy class made the next ask read all of them)."""
    if before is None:
        return {}
    old, new = _files(key, cast(tuple, before[0])), _files(key, state)
    same = {rel for rel, (digest, lines) in new.items() if digest is not None and old.get(rel) == (digest, lines)}
    if not same:
        return {}
    uris = {root.uri(rel): rel for rel in same}
    found: dict[str, list[tuple[str, int, int, int]]] = {}
    for span in before[1].spans:
        rel = uris.get(span[0])
        if rel is not None:
            found.setdefault(rel, []).append(span)
    return found


def _build(root: Root, key: Key, users: dict[str, tuple[int, ...]], d: Def | None, codec: PositionCodec,
           unchanged: dict[str, list[tuple[str, int, int, int]]] | None = None) -> list[tuple[str, int, int, int]]:
    """The locations, file by file in path order; a file in `unchanged` gives its locations
    from there (the last answer's, its bytes and lines the same) and is not read."""
    name = key[1].rpartition(".")[2] or root.ws.relations.module_of.get(key[0], "").rpartition(".")[2]
    wanted = _wanted(key, users, d)
    found = []
    word = _pattern(name) if name.isidentifier() and name.isascii() else None
    base = os.path.join(root.path, "")  # joined as strings: no `Path` made per file read
    for rel in sorted(wanted):
        kept_spans = unchanged.get(rel) if unchanged else None
        if kept_spans is not None:
            found.extend(kept_spans)
            continue
        lines = sorted(set(wanted[rel]))
        try:
            data = read_regular(base + rel)
        except OSError:
            data = b""
        data = data.removeprefix(codecs.BOM_UTF8)  # not in the editor's text: no column of line 1
        if b"\r" in data:  # lines end at \r\n and at a lone \r too, for Python and the editor
            data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        uri = root.uri(rel)
        spans = _spans(data, lines, word, name, codec) if word is not None else {}
        texts: list[bytes] | None = None
        for line in lines:
            span = spans.get(line)
            if span is None:  # not spelt on the line (or next to non-ASCII text): the line is read
                if texts is None:
                    texts = data.split(b"\n", lines[-1])[:lines[-1]]
                text = texts[line - 1].decode("utf-8", "replace") if line <= len(texts) else ""
                span = _columns(text, name, codec)
            found.append((uri, line - 1, *span))
    return found


_WORD = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


@functools.lru_cache(maxsize=64)
def _pattern(name: str) -> re.Pattern[bytes]:
    """The name not followed by a word character, in a file's bytes (ASCII names only; the
    character before is checked by `_spans`: a look-behind here made `re` try every position)."""
    return re.compile(re.escape(name.encode()) + rb"(?![A-Za-z0-9_])")


def _spans(data: bytes, lines: list[int], word: re.Pattern[bytes], name: str,
           codec: PositionCodec) -> dict[int, tuple[int, int]]:
    """The columns of the name's first whole-word occurrence on each of `lines` (sorted, from 1)
    where it is spelt, found in the file's bytes: no line is split off or decoded unless text
    before the name is not ASCII (for a heavy class, splitting its files' lines up to the
    last use took most of the first answer). A match next to a non-ASCII byte is left to
    `_columns` (a letter there joins the word)."""
    wanted = set(lines)
    last = lines[-1]
    found: dict[int, tuple[int, int]] = {}
    line, pos = 1, 0
    for m in word.finditer(data):
        at = m.start()
        line += data.count(b"\n", pos, at)
        pos = at
        if line > last:
            break
        if line not in wanted or line in found or (at and data[at - 1] in _WORD):
            continue
        if (at and data[at - 1] >= 0x80) or (m.end() < len(data) and data[m.end()] >= 0x80):
            wanted.discard(line)  # `_columns` reads this line
            continue
        head = data[data.rfind(b"\n", 0, at) + 1 : at]
        start = len(head) if head.isascii() else codec.client_num_units(head.decode("utf-8", "replace"))
        found[line] = (start, start + len(name))
    return found


def _columns(text: str, name: str, codec: PositionCodec) -> tuple[int, int]:
    """The name's first whole-word occurrence in the line (in the client's units), else the line."""
    at = _word(text, name) if name else -1
    start, end = (0, len(text)) if at < 0 else (at, at + len(name))
    if not text.isascii():  # columns differ between encodings only after non-ASCII text
        start, end = codec.client_num_units(text[:start]), codec.client_num_units(text[:end])
    return start, end


def _word(text: str, name: str) -> int:
    at = text.find(name)
    while at >= 0:
        before = text[at - 1] if at else " "
        after = text[at + len(name)] if at + len(name) < len(text) else " "
        if not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_"):
            return at
        at = text.find(name, at + 1)
    return -1
