"""textDocument/references for workspace definitions, answered from the symbol graph
(no jedi: every file that names the definition, through imports and re-exports)."""

from __future__ import annotations

import json
import threading
import weakref
from collections import OrderedDict
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from repodoc_lsp.graph import Def, Graph, Key
from repodoc_lsp.regular import read_regular
from repodoc_lsp.server.protocol import Encoded
from repodoc_lsp.server.server import RepodocServer
from repodoc_lsp.server.xref import graph_of, target

if TYPE_CHECKING:
    from repodoc_lsp.server.state import Root


def register(server: RepodocServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_REFERENCES)
    def references(ls: RepodocServer, params: types.ReferenceParams) -> Encoded | None:
        with ls.requests:  # regeneration waits meanwhile
            return _references(ls, params)


def _references(ls: RepodocServer, params: types.ReferenceParams) -> Encoded | None:
    found = graph_of(ls, params.text_document.uri)
    if found is None:
        return None
    root, graph, rel = found
    doc = ls.document(params.text_document.uri)
    try:
        pos = doc.position_from_client_units(params.position)
        line_text = doc.lines[pos.line] if pos.line < len(doc.lines) else ""
    except (IndexError, ValueError):
        return None
    key = target(graph, rel, line_text, pos.line + 1, pos.character)
    if key is None:
        return None
    return locations(root, graph, key, params.context.include_declaration, ls.position_codec).encoded()


ANSWERS_KEPT = 8  # answers kept per root (`torch.Tensor`'s 10,000 locations take about 3 MB)


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
    file, and no dict is built (`torch.Tensor`'s 9,946 locations: 15 ms against 55-61 ms for
    building the dicts and `json.dumps`, in-process, load 4)."""
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
_answers_lock = threading.Lock()


def locations(root: Root, graph: Graph, key: Key, declaration: bool, codec: PositionCodec) -> Answer:
    """Each line that names `key` (the name's columns found in the line; the whole line when
    it is not spelt there, as in a star import), and its definition if asked. Only the lines
    wanted are decoded (`torch.Tensor` is named on about 10,000 lines of 750 files). The last
    answers are kept while the lines the graph gives and the digests of their files stay the
    same (an editor asks again for a peek, then for the list; a heavy class's answer takes
    hundreds of milliseconds to build)."""
    users = graph.users(key, own=True)
    d = graph.definition(*key) if declaration else None
    state = (users, d, {rel: root.ws.digests.get(rel) for rel in users} | ({key[0]: root.ws.digests.get(key[0])}
                                                                           if d is not None else {}))
    ask = (key, declaration, codec.encoding)
    with _answers_lock:
        kept = _answers.setdefault(root, OrderedDict())
        hit = kept.get(ask)
        if hit is not None and hit[0] == state:
            kept.move_to_end(ask)
            return hit[1]
    found = Answer(_build(root, key, users, d, codec))
    with _answers_lock:
        kept[ask] = (state, found)
        kept.move_to_end(ask)
        while len(kept) > ANSWERS_KEPT:
            kept.popitem(last=False)
    return found


def _build(root: Root, key: Key, users: dict[str, tuple[int, ...]], d: Def | None,
           codec: PositionCodec) -> list[tuple[str, int, int, int]]:
    name = key[1].rpartition(".")[2] or root.ws.relations.module_of.get(key[0], "").rpartition(".")[2]
    wanted: dict[str, list[int]] = {rel: list(lines) for rel, lines in users.items()}
    if d is not None:
        wanted.setdefault(key[0], []).append(d.line)
    found = []
    for rel in sorted(wanted):
        lines = sorted(set(wanted[rel]))
        texts = _lines(root, rel, lines[-1])
        uri = root.uri(rel)
        for line in lines:
            text = texts[line - 1].decode("utf-8", "replace").rstrip("\r") if line <= len(texts) else ""
            found.append((uri, line - 1, *_columns(text, name, codec)))
    return found


def _lines(root: Root, rel: str, last: int) -> list[bytes]:
    """The file's first `last` lines, as bytes."""
    try:
        data = read_regular(root.path / rel)
    except OSError:
        return []
    return data.split(b"\n", last)[:last]


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
