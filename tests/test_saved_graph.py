"""`repodoc generate` after a one-file edit takes the last saved run's symbol graph whole (`store/sketches.py`,
`knowledge.linking.Taken`): the users' tables by defined file and each link's `out` kept as their own JSON
texts, checked up front (counts, a digest of each text) and decoded when first read; the files whose links no
longer hold are linked again as an update. A damaged part of any kind means every link decoded before the graph
is built (the path of before), and the tree stays equal to a fresh run's."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from edits import differences, tree
from helpers import make_workspace, read_saved, recorded, write_saved
from test_since_last_run import FILES, _generate, _state

from repodoc_lsp.analysis import analyse_source
from repodoc_lsp.analysis.relations import Relations
from repodoc_lsp.knowledge.graph import Graph
from repodoc_lsp.knowledge.linking import Link, Taken
from repodoc_lsp.knowledge.views import no_parts
from repodoc_lsp.store import sketches

BEFORE = {
    "lib/__init__.py": "from lib.base import Base\n",
    "lib/base.py": '"""See `lib.util.helper`."""\n\n\nclass Base:\n    def run(self):\n        pass\n',
    "lib/util.py": "def helper():\n    return 1\n\n\ndef other():\n    return 2\n",
    "app/a.py": "from lib import Base\nfrom lib.util import helper\n\n\nclass A(Base):\n    def go(self):\n"
                "        return helper()\n",
    "app/b.py": "from app.a import A\nfrom lib.util import other\n\n\ndef make():\n    return A(), other()\n",
    "app/c.py": "from lib.util import helper, other\n\n\ndef both():\n    return helper(), other()\n",
    "app/d.py": "from lib.base import Base\n\n\nclass D(Base):\n    pass\n",
    "notes.md": "# Notes\n",
}
AFTER = {  # util.helper gone (consulted by a.py's and c.py's links and base.py's mention), b.py names other no more
    **BEFORE,
    "lib/util.py": "def other():\n    return 2\n\n\ndef third():\n    return 3\n",
    "app/b.py": "from app.a import A\n\n\ndef make():\n    return A()\n",
}


def _state_of(files: dict[str, str]) -> tuple[Relations, dict[str, Any], dict[str, str]]:
    facts = {rel: analyse_source(rel, text.encode()) for rel, text in files.items()}
    return (Relations({rel: f.imports for rel, f in facts.items()}), facts,
            {rel: f"d{hash(text)}" for rel, text in files.items()})


def _graph(files: dict[str, str], linked: Any = None) -> Graph:
    relations, facts, _ = _state_of(files)
    return Graph(relations, facts.items(), parts=no_parts, linked=linked)


def _saved(graph: Graph, digests: dict[str, str]) -> sketches.Saved:
    """What a run's saved file holds of `graph`, as read back."""
    entries = sketches.OfGraph(graph, digests)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "s.json.gz"
        sketches.write_aside(path, "stamp", entries, users=sketches.users_of(graph), deps=entries.table()).keep()
        return sketches.load(path, "stamp")


def _answers(graph: Graph, files: dict[str, str]) -> list[Any]:
    keys = [d.key for rel in sorted(files) for d in graph.definitions(rel)]
    assert len(keys) > 10
    return [(key, graph.uses(key), graph.users(key, own=True), graph.subclasses(key), graph.bases(key))
            for key in keys] + [graph.mentioned(rel) for rel in sorted(files)]


def _by_file(graph: Graph) -> dict[str, dict[str, dict[str, tuple[int, ...]]]]:
    return {rel: {qual: dict(table) for qual, table in tables.items()} for rel, tables in graph.users_by_file().items()}


def test_the_saved_links_and_users_tables_are_the_graph_s_own_values(monkeypatch: pytest.MonkeyPatch) -> None:
    """The saved file takes each link's bases, mentions and deps and the graph's users' tables as they are (JSON
    writes their tuples as arrays), not copied into lists first: the same text, made with fewer objects."""
    link = Link({("a.py", "C"): (3, 5), ("b.py", ""): (1,)}, {"D": (("a.py", "C"),)}, {"a.C": ("a.py", "C")},
                ("b.py", "a.py"))
    raw = sketches.encode_link(link)
    assert raw[1] is link.bases and raw[2] is link.mentioned and raw[3] is link.deps
    as_lists = [raw[0], {q: [list(k) for k in keys] for q, keys in link.bases.items()},
                {name: list(key) for name, key in link.mentioned.items()}, list(link.deps)]
    assert json.dumps(raw) == json.dumps(as_lists)
    encoded = recorded(monkeypatch, sketches, "_json")
    graph = _graph(BEFORE)
    tables = graph.users_by_file()
    parts = dict(sketches.users_of(graph))
    assert parts.keys() == tables.keys()
    for rel, part in parts.items():
        # the graph's own tables (qualname -> users), not copies
        assert any(isinstance(value, dict) and value.keys() == tables[rel].keys()
                   and all(value[q] is t for q, t in tables[rel].items()) for value in encoded)
        assert json.loads(part[0].data) == {q: {u: list(lines) for u, lines in t.items()}
                                            for q, t in tables[rel].items()}


def test_the_saved_users_tables_are_those_made_from_every_link() -> None:
    graph = _graph(BEFORE)
    inverted: dict[str, dict[str, dict[str, tuple[int, ...]]]] = {}
    for user, link in graph.links().items():
        for (rel, qual), lines in link.out.items():
            inverted.setdefault(rel, {}).setdefault(qual, {})[user] = lines
    assert inverted and _by_file(graph) == inverted
    whole = sketches.taken(_saved(graph, _state_of(BEFORE)[2]), _state_of(BEFORE)[2])
    assert whole is not None and whole.stale == frozenset()
    assert {rel: {qual: dict(table) for qual, table in tables.items()} for rel, tables in whole.users.items()} \
        == inverted
    assert {rel: dict(link.out) for rel, link in whole.links.items()} == {
        rel: dict(link.out) for rel, link in graph.links().items()}


def test_a_graph_taken_whole_answers_as_one_built_from_the_facts(monkeypatch: pytest.MonkeyPatch) -> None:
    """The saved graph of BEFORE taken by a graph of AFTER: the files whose links consulted a changed file are
    linked again against the saved tables, and every answer (and the tables a later save writes) is a fresh
    graph's; a file's saved tables and out are decoded only when read."""
    decoded: list[object] = []
    for name in ("_out", "_users_table"):
        real = getattr(sketches, name)
        monkeypatch.setattr(sketches, name, lambda raw, real=real: decoded.append(raw) or real(raw))
    saved = _saved(_graph(BEFORE), _state_of(BEFORE)[2])
    whole = sketches.taken(saved, _state_of(AFTER)[2])
    assert whole is not None and whole.stale == {"lib/util.py", "lib/base.py", "app/a.py", "app/b.py", "app/c.py"}
    assert decoded == []
    taken = _graph(AFTER, whole)
    fresh = _graph(AFTER)
    assert taken.links_taken == {"lib/__init__.py", "app/d.py"}
    assert 0 < len(decoded) < len(whole.links) + len(whole.users)  # the stale files' outs, tables they changed
    assert _answers(taken, AFTER) == _answers(fresh, AFTER)
    assert _by_file(taken) == _by_file(fresh)
    edited = {**AFTER, "lib/base.py": "class Base:\n    def run(self):\n        pass\n\n\nclass Two(Base):\n    pass\n"}
    facts = analyse_source("lib/base.py", edited["lib/base.py"].encode())
    assert taken.update("lib/base.py", facts) == fresh.update("lib/base.py", facts)
    assert _answers(taken, edited) == _answers(fresh, edited) and _by_file(taken) == _by_file(fresh)
    digests = _state_of(edited)[2]
    again = sketches.taken(_saved(taken, digests), digests)  # the parts never read passed on as they came
    assert again is not None and again.stale == frozenset()
    assert _answers(_graph(edited, again), edited) == _answers(fresh, edited)


def _damaged(saved: dict[str, Any]) -> list[dict[str, Any]]:
    """`saved` (a saved file as read) damaged in each kind of part: each is refused whole."""
    def copy() -> dict[str, Any]:
        return json.loads(json.dumps(saved))
    linked = next(rel for rel, entry in saved["sketches"].items() if entry[2] is not None and entry[2][0][1])
    named = next(iter(saved["users"]))
    found = []
    for change in (lambda s: s["sketches"][linked][2][0].__setitem__(0, s["sketches"][linked][2][0][0] + " "),
                   lambda s: s["users"][named].__setitem__(0, s["users"][named][0] + " "),  # texts not of their digest
                   lambda s: s["users"][named].__setitem__(1, s["users"][named][1] + 1),  # counts
                   lambda s: s["users"].pop(named),
                   lambda s: s["users"].__setitem__("gone.py", s["users"][named]),  # a file it is not of
                   lambda s: s["sketches"][linked][2].__setitem__(1, {"D": "other/c.py"}),  # a link's bases
                   lambda s: s["sketches"][linked][2].__setitem__(0, "[]"),  # a part of another form
                   lambda s: s.__setitem__("users", []),
                   lambda s: s["sketches"][linked][2][3].append(s["deps"]["table"][1]),  # deps past their table
                   lambda s: s["sketches"][linked][2][3].append(-1),  # an index from the end
                   lambda s: s["deps"]["table"].__setitem__(0, s["deps"]["table"][0].replace("pkg/", "pkh/")),
                   # (above: a table not of its digest; below: not of its count)
                   lambda s: s["deps"]["table"].__setitem__(1, s["deps"]["table"][1] - 1)):
        damaged = copy()
        change(damaged)
        found.append(damaged)
    return found


def test_a_damaged_part_of_any_kind_means_every_link_decoded_before_the_graph(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    taken: list[Taken | None] = []
    real = sketches.taken
    monkeypatch.setattr(sketches, "taken", lambda saved, digests: taken.append(real(saved, digests)) or taken[-1])
    root, cache = make_workspace(tmp_path / "ws", FILES), tmp_path / "cache"
    _generate(root, cache)
    edits = ["def alone():\n    return 2\n", "def alone():\n    return 1\n"]
    fresh = []
    for text in edits:
        copy = make_workspace(tmp_path / f"fresh{len(fresh)}" / "ws", {**FILES, "pkg/leaf.py": text})
        _generate(copy, tmp_path / f"fresh-cache{len(fresh)}")
        fresh.append(tree(copy / "docs"))
    path = sketches.sketches_path(_state(root, cache))
    (root / "pkg/leaf.py").write_text(edits[0])
    _generate(root, cache)
    assert isinstance(taken[-1], Taken)  # the saved graph taken whole
    saved = read_saved(path)
    for n, damaged in enumerate([*_damaged(saved), {**saved, "version": 5}]):
        write_saved(path, damaged)
        taken.clear()
        (root / "pkg/leaf.py").write_text(edits[(n + 1) % 2])
        assert _generate(root, cache)["writtenPages"] == ["pkg/leaf.py_docs.md"], n
        assert taken == [None], n  # refused whole: every link decoded then, or none taken (version 5)
        assert differences(tree(root / "docs"), fresh[(n + 1) % 2]) == [], n
        assert read_saved(path)["version"] == sketches.VERSION  # saved again
    saved = read_saved(path)
    some = next(iter(saved["imports"]))  # a file's imports, not of their digest: read from the facts cache
    saved["imports"][some][0] += " "
    write_saved(path, saved)
    taken.clear()
    (root / "pkg/leaf.py").write_text(edits[0])
    assert _generate(root, cache)["writtenPages"] == ["pkg/leaf.py_docs.md"]
    assert isinstance(taken[-1], Taken) and differences(tree(root / "docs"), fresh[0]) == []


def test_an_edit_run_decodes_the_links_and_tables_of_few_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    many = {f"many/m{n}.py": f"from pkg.b import f\n\n\ndef f{n}():\n    return f()\n" for n in range(24)}
    root, cache = make_workspace(tmp_path / "ws", {**FILES, **many}), tmp_path / "cache"
    _generate(root, cache)
    outs: list[object] = []
    tables: list[object] = []
    for name, seen in (("_out", outs), ("_users_table", tables)):
        real = getattr(sketches, name)
        monkeypatch.setattr(sketches, name, lambda raw, real=real, seen=seen: seen.append(raw) or real(raw))
    (root / "pkg/leaf.py").write_text("def alone():\n    return 2\n")
    assert _generate(root, cache)["writtenPages"] == ["pkg/leaf.py_docs.md"]
    assert len(outs) == 1 and len(tables) <= 2, (outs, tables)  # leaf.py's own out; the tables its page reads
    (root / "pkg/b.py").write_text('"""B."""\n\n\ndef f():\n    """Eff, again."""\n')  # every many/ file names f
    _generate(root, cache)
    monkeypatch.undo()
    fresh = make_workspace(tmp_path / "fresh" / "ws", {rel: (root / rel).read_text() for rel in {**FILES, **many}})
    _generate(fresh, tmp_path / "fresh-cache")
    assert differences(tree(root / "docs"), tree(fresh / "docs")) == []
