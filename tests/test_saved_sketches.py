"""`repodoc generate` after a one-file edit builds the symbol graph from the sketches the last complete
run saved (`store/sketches.py`) instead of loading every file's facts; a damaged, foreign or forged
sketches file is ignored (the facts are loaded) and the tree stays equal to a fresh run's."""

from __future__ import annotations

import contextlib
import gzip
import json
import sqlite3
import sys
from pathlib import Path

import pytest
from edits import differences, tree
from helpers import make_workspace, read_saved, write_saved
from test_since_last_run import FILES, _fresh, _generate, _state

from repodoc_lsp.analysis import analyse_source
from repodoc_lsp.knowledge.views import sketch_of
from repodoc_lsp.render import llms
from repodoc_lsp.store import kept, sketches
from repodoc_lsp.store.cache import FactsCache


@pytest.fixture
def loaded(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The content digests whose whole facts a run read from the cache up to its graph's build
    (`since_last_run`), the pages' own aside."""
    from repodoc_lsp.pipeline import generate as pipeline

    seen: list[str] = []
    until: list[str] = []
    real, since = FactsCache.get_many, pipeline.since_last_run

    def counted(self: FactsCache, keys: object) -> object:
        keys = set(keys)  # type: ignore[call-overload]
        seen.extend(keys)
        return real(self, keys)

    def graph_built(*args: object) -> object:
        seen.clear()
        held = since(*args)  # type: ignore[arg-type]
        until[:] = seen
        return held
    monkeypatch.setattr(FactsCache, "get_many", counted)
    monkeypatch.setattr(pipeline, "since_last_run", graph_built)
    return until


def _digest_of(root: Path, cache: Path, rel: str) -> str:
    return json.loads(gzip.decompress(_state(root, cache).read_bytes()))["files"][rel]


def test_an_edit_builds_the_graph_from_the_saved_sketches(tmp_path: Path, loaded: list[str]) -> None:
    root, cache = make_workspace(tmp_path / "ws", FILES), tmp_path / "cache"
    _generate(root, cache)
    assert sketches.sketches_path(_state(root, cache)).is_file()
    unrelated = _digest_of(root, cache, "other/d.py")
    (root / "pkg/leaf.py").write_text("def alone():\n    return 2\n")
    assert _generate(root, cache)["writtenPages"] == ["pkg/leaf.py_docs.md"]
    assert unrelated not in loaded and len(loaded) == 1  # the edited file's: the others' sketches stood for them
    assert differences(tree(root / "docs"), _fresh(root, tmp_path)) == []


def test_a_run_with_nothing_changed_never_reads_the_saved_file(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The saved file is for a run after an edit: a run with nothing changed, or with files touched but not
    changed, or with a page deleted (every page planned again), does not read it; an edit does, once."""
    root, cache = make_workspace(tmp_path / "ws", FILES), tmp_path / "cache"
    _generate(root, cache)
    reads: list[Path] = []
    real = sketches.load

    def counted(path: Path, stamp: str) -> sketches.Saved:
        reads.append(path)
        return real(path, stamp)
    monkeypatch.setattr(sketches, "load", counted)
    assert _generate(root, cache)["written"] == 0 and reads == []
    (root / "pkg/leaf.py").write_text((root / "pkg/leaf.py").read_text())  # touched, the same content
    (root / "docs/pkg/a.py_docs.md").unlink()
    assert _generate(root, cache)["writtenPages"] == ["pkg/a.py_docs.md"] and reads == []
    (root / "pkg/leaf.py").write_text("def alone():\n    return 2\n")
    assert _generate(root, cache)["writtenPages"] == ["pkg/leaf.py_docs.md"]
    assert reads == [sketches.sketches_path(_state(root, cache))]
    assert differences(tree(root / "docs"), _fresh(root, tmp_path)) == []


def test_damaged_foreign_or_forged_sketches_are_ignored(tmp_path: Path, loaded: list[str]) -> None:
    root, cache = make_workspace(tmp_path / "ws", FILES), tmp_path / "cache"
    _generate(root, cache)
    path = sketches.sketches_path(_state(root, cache))
    saved = read_saved(path)
    forged = json.loads(json.dumps(saved))
    forged["sketches"]["other/d.py"][1:] = ['[{"D": "not a number"}]',  # linked again: its view read
                                            [{"other/c.py": {"C": ["not a number"]}}, {}, {}, ["other/d.py"]]]
    swapped = json.loads(json.dumps(saved))  # each file given the other's digest and sketch
    swapped["sketches"]["other/d.py"], swapped["sketches"]["other/c.py"] = (
        swapped["sketches"]["other/c.py"], swapped["sketches"]["other/d.py"])
    for n, damaged in enumerate([b"\x1f\x8b not gzip", gzip.compress(b"[]"), {**saved, "version": 0},
                                 {**saved, "stamp": "another analysis"}, forged, swapped,
                                 gzip.compress(json.dumps({**saved, "version": 7}).encode()),  # version 7's form
                                 path.read_bytes()[:-9]]):  # cut short
        if isinstance(damaged, bytes):
            path.write_bytes(damaged)
        else:
            write_saved(path, damaged)
        unrelated = _digest_of(root, cache, "other/d.py")
        (root / "pkg/leaf.py").write_text(f"def alone():\n    return {n + 2}\n")
        _generate(root, cache)
        assert unrelated in loaded, n  # its facts were read: no sketch of it was taken
    assert differences(tree(root / "docs"), _fresh(root, tmp_path)) == []


def test_a_sketch_is_decoded_when_its_view_is_read_and_never_taken_damaged(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run after an edit decodes the saved sketches of the files whose views it reads, not every file's;
    a sketch that does not decode then stands for nothing: the file's facts are read instead."""
    decoded: list[object] = []
    real = sketches.decode
    monkeypatch.setattr(sketches, "decode", lambda raw: decoded.append(raw) or real(raw))
    many = {f"many/m{n}.py": f"def f{n}():\n    return {n}\n" for n in range(30)}
    root, cache = make_workspace(tmp_path / "ws", {**FILES, **many}), tmp_path / "cache"
    _generate(root, cache)
    decoded.clear()
    (root / "pkg/leaf.py").write_text("def alone():\n    return 2\n")
    assert _generate(root, cache)["writtenPages"] == ["pkg/leaf.py_docs.md"]
    assert 0 < len(decoded) < len(many)
    facts = analyse_source("m.py", b"class C:\n    pass\n")
    made = sketch_of(facts, {})
    def saved(text: str) -> sketches.Saved:
        return sketches.Saved({"m.py": ["d1", [0, len(text)], None]}, body=memoryview(text.encode()))
    for text in ('[{"C": "not a number"}]', "[" * 100_000, '{"a": 1}'):
        later = sketches.held(saved(text), {"m.py": "d1"}, {"m.py": ()}, lambda rel: made)
        assert later["m.py"][1] is not None and later["m.py"][1].make() is made
    good = sketches.held(saved(json.dumps(sketches.encode(made))), {"m.py": "d1"},
                         {"m.py": facts.imports}, lambda rel: pytest.fail("decodes"))["m.py"][1]
    assert good is not None and good.make() == made


def test_a_sketch_is_kept_as_checked_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    facts = analyse_source("m.py", b'"""See `m.C`."""\nimport os\n\n\nclass C(os.PathLike):\n    x: int = 1\n\n'
                                    b"    def f(self) -> C:\n        return os.sep\n")
    sketch = sketch_of(facts, {("method", "C.f"): 2})
    back = sketches.decode(json.loads(json.dumps(sketches.encode(sketch))))
    assert back.own == sketch.own and back.all_names == sketch.all_names and back.refs == sketch.refs
    raw = sketches.encode(sketch)
    for bad in ([*raw[:8]], [*raw[:1], [1 << 40], *raw[2:]], [*raw[:6], [["method", "C.f", "2"]], *raw[7:]],
                [*raw[:8], 3], "sketch"):
        with pytest.raises(ValueError):
            sketches.decode(json.loads(json.dumps(bad)))
    path = tmp_path / "s.json.gz"
    sketches.write_aside(path, "stamp", {"m.py": ["d1", raw]}).keep()
    assert sketches.load(path, "stamp").sketches == {"m.py": ["d1", json.loads(json.dumps(raw))]}
    assert sketches.load(path, "another") == sketches.Saved()
    monkeypatch.setattr(sketches, "MAX_BYTES", 1 << 16)
    path.write_bytes(gzip.compress(b" " * (sketches.MAX_BYTES + 1)))  # inflates past the bound
    assert sketches.load(path, "stamp") == sketches.Saved()


def test_a_file_past_the_read_bound_is_not_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The saved file is written as it is made; one that grows past what `load` reads is not kept (it would
    be ignored), and the last run's file at its path goes with it: the next run builds its graph from facts."""
    path = tmp_path / "s.json.gz"
    small = {f"m{i}.py": [f"d{i}", None, None] for i in range(3)}
    sketches.write_aside(path, "stamp", small).keep()
    assert sketches.load(path, "stamp").sketches == small
    monkeypatch.setattr(sketches, "MAX_BYTES", 1 << 16)
    sketches.write_aside(path, "stamp", ((f"m{i}.py", [f"d{i}", "x" * 100, None]) for i in range(1000))).keep()
    assert not path.exists() and not list(tmp_path.iterdir())  # nor a temporary file
    assert sketches.load(path, "stamp") == sketches.Saved()


def test_imports_are_kept_as_checked_data(tmp_path: Path) -> None:
    """Every file's imports are saved beside the sketches, by content digest, as one text with its digest, and
    read back exactly, strings interned; a text not of its digest, or a part of another form, is left out (its
    imports come from the facts cache)."""
    facts = analyse_source("m.py", b"import os.path as p\nfrom .. import a, b as c\nfrom x import *\n")
    path = tmp_path / "s.json.gz"
    good = sketches.encode_imports(facts.imports)
    damaged = [kept.Text(bytes(good[0].data).replace(b"1", b"2")), good[1]]
    sketches.write_aside(path, "stamp", {}, {"d1": good, "d2": damaged, "d3": [*good, "more"], "d4": good[0],
                                             "d5": json.loads(good[0].data)}).keep()
    saved = sketches.load(path, "stamp")
    found = sketches.imports_of(saved)
    assert list(found) == ["d1"] and found["d1"].made() == facts.imports
    module = found["d1"].made()[0].module
    assert module is sys.intern(module)


def test_an_edit_reads_the_imports_of_the_changed_files_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run after an edit takes the unchanged files' imports from the saved file, not from the facts cache
    (a row and a JSON text each); the tree stays equal to a fresh run's."""
    root, cache = make_workspace(tmp_path / "ws", FILES), tmp_path / "cache"
    _generate(root, cache)
    asked: list[str] = []
    real = FactsCache.get_imports_many

    def counted(self: FactsCache, keys: object) -> object:
        keys = set(keys)  # type: ignore[call-overload]
        asked.extend(keys)
        return real(self, keys)
    monkeypatch.setattr(FactsCache, "get_imports_many", counted)
    before = _digest_of(root, cache, "pkg/leaf.py")
    (root / "pkg/leaf.py").write_text("def alone():\n    return 2\n")
    assert _generate(root, cache)["writtenPages"] == ["pkg/leaf.py_docs.md"]
    assert set(asked) <= {before, _digest_of(root, cache, "pkg/leaf.py")}
    assert differences(tree(root / "docs"), _fresh(root, tmp_path)) == []



def test_an_edit_run_loads_the_facts_of_its_pages_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Which files have pages comes from the last run's manifest for an unchanged file: asking its facts
    loaded every file's in a run after an edit."""
    many = {f"many/m{n}.py": f"def f{n}():\n    return {n}\n" for n in range(8)}
    monkeypatch.setattr(llms, "MAIN_FILES", 2)  # llms.txt's main files: pkg/b.py and other/c.py, the most imported
    root, cache = make_workspace(tmp_path / "ws", {**FILES, **many}), tmp_path / "cache"
    _generate(root, cache)
    seen: list[str] = []
    real = FactsCache.get_many
    monkeypatch.setattr(FactsCache, "get_many", lambda self, keys: seen.extend(keys) or real(self, keys))
    unrelated = {_digest_of(root, cache, rel) for rel in many}
    (root / "pkg/leaf.py").write_text("def alone():\n    return 2\n")
    assert _generate(root, cache)["writtenPages"] == ["pkg/leaf.py_docs.md"]
    assert not unrelated & set(seen)  # no page of this run names them: their facts stay in the cache
    monkeypatch.setattr(FactsCache, "get_many", real)
    assert differences(tree(root / "docs"), _fresh_of(root, [*FILES, *many], tmp_path)) == []


def test_an_edit_run_leaves_the_sketches_file_as_it_is(tmp_path: Path, loaded: list[str]) -> None:
    """One sketch in twenty stale is read from the facts next time rather than every sketch written again."""
    many = {f"many/m{n}.py": f"def f{n}():\n    return {n}\n" for n in range(24)}
    root, cache = make_workspace(tmp_path / "ws", {**FILES, **many}), tmp_path / "cache"
    _generate(root, cache)
    path = sketches.sketches_path(_state(root, cache))
    saved = path.read_bytes()
    (root / "pkg/leaf.py").write_text("def alone():\n    return 2\n")
    assert _generate(root, cache)["writtenPages"] == ["pkg/leaf.py_docs.md"]
    assert path.read_bytes() == saved
    (root / "other/d.py").write_text("from other.c import C\n\n\nclass D(C):\n    y = 1\n")
    _generate(root, cache)
    assert len(loaded) == 2  # d.py's content before the edit and leaf.py's, whose saved sketch is stale
    assert differences(tree(root / "docs"), _fresh_of(root, [*FILES, *many], tmp_path)) == []


def _fresh_of(root: Path, rels: list[str], tmp_path: Path) -> dict[str, bytes]:
    fresh = make_workspace(tmp_path / "fresh" / root.name, {rel: (root / rel).read_text() for rel in rels})
    _generate(fresh, tmp_path / "fresh-cache")
    return tree(fresh / "docs")


def test_an_edit_run_links_only_the_files_whose_links_consulted_a_changed_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The saved file keeps each file's link (what it names, its bases, its mentions, the files it
    consulted): a run after an edit takes the others' as they are instead of linking every file, and the
    tree stays equal to a fresh run's."""
    from repodoc_lsp.knowledge.resolution import Resolver

    linked: list[str] = []
    real = Resolver._link
    monkeypatch.setattr(Resolver, "_link", lambda self, rel: linked.append(rel) or real(self, rel))
    root, cache = make_workspace(tmp_path / "ws", FILES), tmp_path / "cache"
    _generate(root, cache)
    linked.clear()
    (root / "other/c.py").write_text("import os\n\n\nclass C:\n    size = 1\n")  # d.py's link consulted it
    _generate(root, cache)
    assert set(linked) == {"other/c.py", "other/d.py"}, linked
    linked.clear()
    (root / "pkg/leaf.py").write_text("def alone():\n    return 3\n")  # none consulted it
    _generate(root, cache)
    assert set(linked) == {"pkg/leaf.py"}, linked  # the run before saved the file again (2 of 7 files stale)
    monkeypatch.setattr(Resolver, "_link", real)
    assert differences(tree(root / "docs"), _fresh(root, tmp_path)) == []


def test_a_link_is_kept_as_checked_data() -> None:
    from repodoc_lsp.knowledge.linking import Link

    link = Link({("a.py", "C"): (3, 5), ("b.py", ""): (1,)}, {"D": (("a.py", "C"),)}, {"a.C": ("a.py", "C")},
                ("b.py", "a.py", "\x00a"))
    assert sketches.decode_link(json.loads(json.dumps(sketches.encode_link(link)))) == link
    raw = sketches.encode_link(link)
    for bad in (raw[:3], [{"a.py": {"C": ["3"]}}, *raw[1:]], [*raw[:1], {"D": [["a.py"]]}, *raw[2:]],
                [*raw[:2], {"a.C": "a.py"}, raw[3]], [*raw[:3], [1]]):
        with pytest.raises(ValueError):
            sketches.decode_link(json.loads(json.dumps(bad)))


def test_a_run_of_a_tree_already_of_its_inputs_saves_the_sketches_with_its_state(
        tmp_path: Path, loaded: list[str]) -> None:
    """The state and the sketches lost (a cleared cache folder), the tree intact: the run writes nothing
    (the manifest vouches for the tree) but keeps the state and the sketches, so the next run after an
    edit still builds its graph from them."""
    root, cache = make_workspace(tmp_path / "ws", FILES), tmp_path / "cache"
    _generate(root, cache)
    state = _state(root, cache)
    state.unlink()
    sketches.sketches_path(state).unlink()
    assert _generate(root, cache)["written"] == 0
    assert state.is_file() and sketches.sketches_path(state).is_file()
    unrelated = _digest_of(root, cache, "other/d.py")
    (root / "pkg/leaf.py").write_text("def alone():\n    return 2\n")
    assert _generate(root, cache)["writtenPages"] == ["pkg/leaf.py_docs.md"]
    assert unrelated not in loaded


def test_a_site_takes_which_files_have_pages_from_its_maker() -> None:
    """A run after an edit knows which files have pages from the last run's manifest: the site is made
    with that answer, without asking any file's facts."""
    from repodoc_lsp.analysis.relations import Relations
    from repodoc_lsp.render.site import Site

    class NoFacts(dict):  # type: ignore[type-arg]
        def __getitem__(self, rel: str) -> object:
            raise AssertionError(f"facts of {rel} asked")

    site = Site.build(project="p", root="/r", out="/r/docs", embed_max=0, relations=Relations({}),
                      facts=NoFacts.fromkeys(["a.py", "b.md"]), sizes={}, folders=[""], paged=frozenset({"a.py"}))
    assert site.paged == {"a.py"} and site.paged_files("") == ["a.py"]


def test_rows_whose_imports_came_from_the_saved_file_stay_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cache deletes rows unused for 30 days: a run after an edit, which takes the unchanged files' imports
    from the saved file, marks their rows used (on its first run of a day), else the pages' facts would be
    analysed again once the rows are gone."""
    from repodoc_lsp.pipeline import generate as pipeline
    from repodoc_lsp.store import cache as facts_cache

    many = {f"many/m{n}.py": f"def f{n}():\n    return {n}\n" for n in range(30)}  # more than the pages read
    root, cache = make_workspace(tmp_path / "ws", {**FILES, **many}), tmp_path / "cache"
    _generate(root, cache)
    tomorrow = facts_cache.day() + 1
    monkeypatch.setattr(facts_cache, "day", lambda: tomorrow)
    monkeypatch.setattr(pipeline, "day", lambda: tomorrow)
    (root / "pkg/leaf.py").write_text("def alone():\n    return 2\n")
    _generate(root, cache)
    with contextlib.closing(sqlite3.connect(next(cache.glob("facts-*.sqlite")))) as db:
        used = dict(db.execute("SELECT key, used FROM facts"))
    assert {used[key] for key in json.loads(gzip.decompress(_state(root, cache).read_bytes()))["files"].values()} \
        == {tomorrow}
