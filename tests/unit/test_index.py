"""The keyword index is updated in place, file by file: after any sequence of changes it must
answer as the documented ranking says, computed here by brute force over every entry."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from repodoc_lsp.knowledge.index import Entry, KeywordIndex, word_starts

NAMES = ["Module", "module", "MODULE", "DataLoader", "dataloader", "data_loader", "FullyShardedDataParallel",
         "fsdp", "relu", "ReLU", "relu_", "conv_transpose2d", "ConvTranspose2d", "Adam", "adam", "_adam",
         "Tensor", "tensor", "as_tensor", "x", "Setup", "setUp"]
QUERIES = ["extra1", "module", "Module", "dl", "fsdp", "relu", "ReLU", "convt", "adam", "tensor", "t", "x", "",
           "zz", "set"]


def _entries(rng: random.Random, rel: str) -> list[Entry]:
    kinds = ["class", "function", "method", "module"]
    return [Entry(rng.choice(NAMES), rng.choice(kinds), "", rel, line, 0, line)
            for line in sorted(rng.sample(range(1, 400), rng.randint(0, 12)))]


def _answers(index: KeywordIndex) -> dict[str, list[Entry]]:
    return {q: index.search(q, 25) for q in QUERIES} | {f"={n}": index.lookup(n) for n in NAMES}


def _reference(files: dict[str, list[Entry]], queries: list[str] = QUERIES, limit: int = 25,
               names: list[str] = NAMES) -> dict[str, list[Entry]]:
    """The documented ranking, by brute force over every entry."""
    order = {"class": 0, "function": 1, "module": 2, "method": 3, "heading": 4}
    groups: dict[str, list[Entry]] = {}
    for entries in files.values():
        for e in entries:
            groups.setdefault(e.name.lower(), []).append(e)
    for group in groups.values():
        group.sort(key=lambda e: (order[e.kind], e.rel, e.line))

    def starts(lower: str) -> set[int]:
        return {i for e in groups[lower] for i in word_starts(e.name)}

    def initials(lower: str) -> set[str]:
        return {"".join(e.name[i] for i in word_starts(e.name)).lower() for e in groups[lower]}

    def subsequence(q: str, name: str) -> bool:
        it = iter(name)
        return all(c in it for c in q)

    def rank(q: str, name: str) -> int:
        if name == q:
            return 0
        if name.startswith(q):
            return 1
        inner = {i for i in range(1, len(name)) if name.startswith(q, i)}
        if inner & starts(name) or any(ini.startswith(q) for ini in initials(name)):
            return 2
        return 3 if inner else 4 if subsequence(q.replace("\n", ""), name) else 5

    out: dict[str, list[Entry]] = {}
    for query in queries:
        query = query.strip()
        q = query.lower()
        ranked = sorted((rank(q, n), len(n), n) for n in groups if not q or rank(q, n) < 5)
        found: list[Entry] = []
        for _, _, name in ranked:
            found.extend(sorted(groups[name], key=lambda e: bool(query) and e.name != query))
        out[query] = found[:limit]
    for n in names:
        out[f"={n}"] = [e for e in groups.get(n.lower(), ()) if e.name == n]
    return out


def test_updates_in_place_answer_as_a_fresh_index() -> None:
    rng = random.Random(7)
    live = KeywordIndex()
    # a first batch of many new names (sorted afresh), then small changes (kept sorted in place)
    files = {"bulk.py": [Entry(f"Extra{i}Name", "function", "", "bulk.py", i + 1, 0, i + 1) for i in range(100)]}
    live.set_many(files.items())
    for step in range(300):
        rel = f"f{rng.randint(0, 15)}.py"
        action = rng.random()
        if action < 0.15:
            live.remove_file(rel)
            files.pop(rel, None)
        elif action < 0.25:
            keep = set(rng.sample(sorted(files), len(files) // 2)) if files else set()
            live.retain(keep)
            files = {r: e for r, e in files.items() if r in keep}
        elif action < 0.4:  # several files at once, some of them new
            batch = {f"f{rng.randint(0, 15)}.py" for _ in range(4)}
            update = {r: _entries(rng, r) for r in sorted(batch)}
            files.update(update)
            live.set_many(update.items())
        else:
            files[rel] = _entries(rng, rel)
            live.set_file(rel, files[rel])
        if step % 3 == 0:  # snapshots between some changes, not all
            assert _answers(live) == _reference(files), f"step {step}"
    assert len(live) == sum(len(e) for e in files.values())


def test_a_search_keeps_its_snapshot_while_the_index_changes() -> None:
    index = KeywordIndex()
    index.set_file("a.py", [Entry("Alpha", "class", "", "a.py", 1, 0, 9)])
    before = index.search("alpha")
    index.remove_file("a.py")
    assert [e.name for e in before] == ["Alpha"]
    assert index.search("alpha") == [] and index.lookup("Alpha") == []
    index.set_file("b.py", [Entry("AlphaBeta", "function", "", "b.py", 3, 0, 4)])
    assert [e.name for e in index.search("ab")] == ["AlphaBeta"]  # initials


def test_a_lookup_after_a_change_reads_the_live_index() -> None:
    """Hovers look a name up after every save: they read the live groups, because the snapshot
    a search needs costs about 20 ms on PyTorch after each change."""
    index = KeywordIndex()
    index.set_file("a.py", [Entry("Alpha", "class", "", "a.py", 1, 0, 9)])
    index.search("alpha")  # takes a snapshot
    index.set_file("b.py", [Entry("Alpha", "function", "", "b.py", 2, 0, 3)])
    assert [e.rel for e in index.lookup("Alpha")] == ["a.py", "b.py"]
    assert index.lookup("alpha") == []  # the exact spelling
    assert index._snapshot is None  # left for the next search to take
    assert [e.rel for e in index.search("Alpha")] == ["a.py", "b.py"]


# few letters, cases, digits and word separators: names that share characters, humps and initials
_NAME = st.text(st.sampled_from("aAbBcC1_. "), min_size=1, max_size=9).filter(lambda n: n.strip() == n)
_QUERY = st.text(st.sampled_from("aAbBcC1_. \n"), min_size=0, max_size=5)
_FILE = st.lists(st.tuples(_NAME, st.sampled_from(["class", "function", "method", "module", "heading"])),
                 max_size=8)


@settings(max_examples=200, deadline=None)
@given(first=st.dictionaries(st.sampled_from(["a.py", "b.py", "c.md", "d.py"]), _FILE, max_size=4),
       second=st.dictionaries(st.sampled_from(["a.py", "b.py", "c.md", "e.py"]), st.none() | _FILE, max_size=3),
       queries=st.lists(_QUERY, min_size=1, max_size=6), limit=st.integers(1, 12))
def test_search_ranks_as_the_reference_over_random_names(first: dict, second: dict, queries: list[str],
                                                          limit: int) -> None:
    """Every rank, the subsequence rank's prefilter and its stop once enough names are shown
    included: the same entries in the same order as the brute-force reference, after indexing
    and after files change (names removed, added, slots reused)."""
    def entries(rel: str, pairs: list[tuple[str, str]]) -> list[Entry]:
        return [Entry(name, kind, "", rel, line, 0, line) for line, (name, kind) in enumerate(pairs, 1)]

    index = KeywordIndex()
    files = {rel: entries(rel, pairs) for rel, pairs in first.items()}
    index.set_many(files.items())
    for step in (1, 2):
        answers = {q.strip(): index.search(q, limit) for q in queries}
        assert answers == _reference(files, queries, limit, []), f"step {step}"
        for rel, pairs in second.items():
            if pairs is None:
                index.remove_file(rel)
                files.pop(rel, None)
            else:
                files[rel] = entries(rel, pairs)
                index.set_file(rel, files[rel])


def test_the_subsequence_prefilter_counts_repeated_characters_and_picks_few_candidates_sparsely() -> None:
    """The subsequence rank's prefilter keeps only names holding each character of the query as
    many times as the query does (up to three), and takes few candidates out of a length's table
    by its nonzero bytes (`selected`): `dataload` kept 30,000 of the scale corpus's 206,000
    names without the counts, 4,500 with them (the rank took 28 ms, now 8 ms). Both paths
    answer as the brute-force reference over 3,000 names."""
    from repodoc_lsp.knowledge.subsequences import keys_of as _keys
    from repodoc_lsp.knowledge.subsequences import selected as _selected

    assert _keys("dataload") == {"d", "a", "t", "l", "o", "dd", "aa", "aaa"}
    assert _keys("aaaaa") == {"a", "aa", "aaa"} and _keys("abc") == {"a", "b", "c"}
    slots = tuple(f"n{i}" for i in range(100))
    assert _selected(slots, (1 << 3) | (1 << 64) | (1 << 99)) == ["n3", "n64", "n99"]  # few: by bytes
    assert _selected(slots, (1 << 100) - 1) == list(slots)  # many: every slot's bit
    rng = random.Random(14)
    files = {f"f{i}.py": [Entry("".join(rng.choice("aabcdd_xyz") for _ in range(rng.randint(1, 14))),
                                "function", "", f"f{i}.py", line, 0, line) for line in range(1, 101)]
             for i in range(30)}
    index = KeywordIndex()
    index.set_many(files.items())
    queries = ["dad", "aad", "aaad", "dd", "ddd", "zyx", "a_d", "bcd", "xyzzy", "aaaa", "dada"]
    for limit in (5, 200, 5000):
        assert {q: index.search(q, limit) for q in queries} == _reference(files, queries, limit, []), limit


def test_the_tables_per_name_are_compact() -> None:
    """Per lower-case name the index keeps its word starts as a sorted tuple, and per initials the
    names as a tuple, not frozensets; no cache of each spelling's shape, no table of spellings nor
    of each name's initials (what the groups' entries say: on the 17,150-file corpus the index's
    tables took 468 MB, then 312 MB, now 245 MB). Answers as before (the reference tests above)."""
    index = KeywordIndex()
    index.set_file("a.py", [Entry("FullyShardedDataParallel", "class", "", "a.py", 1, 0, 2),
                            Entry("fully_sharded_data_parallel", "function", "", "a.py", 3, 0, 4)])
    assert not any(hasattr(index, name) for name in ("_shapes", "_spellings", "_initials_of"))
    assert index._word_starts["fullyshardeddataparallel"] == (0, 5, 12, 16)
    assert index._word_starts["fully_sharded_data_parallel"] == (0, 6, 14, 19)
    assert sorted(index._by_initials["fsdp"]) == ["fully_sharded_data_parallel", "fullyshardeddataparallel"]
    assert [e.name for e in index.search("fsdp")] == ["FullyShardedDataParallel", "fully_sharded_data_parallel"]
    index.set_file("a.py", [Entry("fullySharded", "function", "", "a.py", 1, 0, 2)])
    assert "fullyshardeddataparallel" not in index._word_starts and index._by_initials == {"fs": ("fullysharded",)}
    index.set_file("b.py", [Entry("FullySharded", "class", "", "b.py", 1, 0, 2)])  # a second spelling
    assert index._by_initials == {"fs": ("fullysharded",)}
    index.remove_file("a.py")
    assert index._by_initials == {"fs": ("fullysharded",)} and [e.rel for e in index.search("fs")] == ["b.py"]
    index.remove_file("b.py")
    assert index._by_initials == {} and index._word_starts == {} and index.search("fs") == []


def test_a_snapshot_reads_the_tables_until_a_change_copies_them() -> None:
    """A search snapshot reads the index's tables per name themselves, not copies (25 MB on the
    17,150-file corpus); the next change copies them before changing them, so a search on the
    snapshot answers as it was taken. Where names start in the blob is an array, not ints."""
    from array import array

    index = KeywordIndex()
    index.set_file("a.py", [Entry("Alpha", "class", "", "a.py", 1, 0, 2)])
    snap = index._current()
    assert snap.by_lower is index._groups and snap.word_starts is index._word_starts
    assert snap.by_initials is index._by_initials and type(snap.starts) is array
    index.set_file("b.py", [Entry("Beta", "class", "", "b.py", 1, 0, 2)])
    assert snap.by_lower is not index._groups and "beta" in index._groups
    assert "beta" not in snap.by_lower and "beta" not in snap.word_starts and "b" not in snap.by_initials
    assert snap.search("beta", 10) == [] and [e.name for e in index.search("beta")] == ["Beta"]
    assert [e.name for e in snap.search("a", 10)] == ["Alpha"]
    index.set_file("b.py", [Entry("Gamma", "class", "", "b.py", 1, 0, 2)])  # no snapshot between: in place
    assert [e.name for e in index.search("", 10)] == ["Alpha", "Gamma"]


def test_entries_share_their_names_and_containers() -> None:
    """Names and containers are interned (the 17,150-file corpus: the index's entries 117.6 ->
    96.3 MB, RSS after indexing 573 -> 556 MB): two files' `forward` are one string."""
    from repodoc_lsp.analysis import analyse_source
    from repodoc_lsp.knowledge.index import entries_of

    def source(cls: str) -> bytes:
        return f"class {cls}:\n    def for{'ward'}(self):\n        pass\n".encode()

    a = entries_of("a.py", analyse_source("a.py", source("".join(["Mod", "el"]))))
    b = entries_of("b.py", analyse_source("b.py", source("".join(["Mo", "del"]))))
    (ma,) = [e for e in a if e.name == "forward"]
    (mb,) = [e for e in b if e.name == "forward"]
    assert ma.name is mb.name and ma.container is mb.container and ma.container == "Model"


def test_a_restored_index_answers_as_the_index_it_was_kept_from() -> None:
    """`state()` through JSON, then `restore` into an empty index (what `repodoc mcp` keeps between
    sessions): the same answers as the index it was taken from (every rank, lookups, each file's
    entries in their order), also after both take the same changes (slots of removed names reused,
    the restored tables copied before a change, not changed under the snapshot of a search)."""
    import json

    rng = random.Random(11)
    live = KeywordIndex()
    files = {f"f{i}.py": _entries(rng, f"f{i}.py") for i in range(16)}
    files["w.py"] = [Entry("Widget", "class", "", "w.py", 1, 0, 9, "class-Widget"),
                     Entry("spin", "method", "Widget", "w.py", 3, 4, 5, "method-Widget.spin")]
    live.set_many(files.items())
    live.remove_file("f3.py")  # free slots in the subsequences' tables
    live.set_file("f4.py", _entries(rng, "f4.py"))
    queries = [*QUERIES, "xtr", "dtl", "sd", "wdg", "spin"]

    def answers(index: KeywordIndex) -> dict:
        found: dict = {f"{q}/{limit}": index.search(q, limit) for q in queries for limit in (1, 5, 300)}
        return found | _answers(index) | {rel: index.file_entries(rel) for rel in files} | {"len": len(index)}

    state = json.loads(json.dumps(live.state()))
    restored = KeywordIndex()
    restored.restore(state)
    assert answers(restored) == answers(live)
    snap, before = restored._current(), restored.search("module", 300)
    for step in range(60):  # the same changes to both
        rel = f"f{rng.randint(0, 17)}.py"
        if rng.random() < 0.3:
            live.remove_file(rel)
            restored.remove_file(rel)
        else:
            new = _entries(rng, rel)
            live.set_file(rel, new)
            restored.set_file(rel, new)
        if step % 6 == 0:
            assert answers(restored) == answers(live), f"step {step}"
    assert answers(restored) == answers(live)
    assert snap.search("module", 300) == before
    # a second round trip, from the restored index after its changes
    again = KeywordIndex()
    again.restore(json.loads(json.dumps(restored.state())))
    assert answers(again) == answers(live)


def test_a_state_that_does_not_hold_together_is_refused() -> None:
    """`restore` refuses a state whose parts disagree (an entry in no group, names out of order,
    a name without its slot), and an index that already holds entries; the index stays empty."""
    import copy

    index = KeywordIndex()
    index.set_many([("a.py", [Entry("Alpha", "class", "", "a.py", 1, 0, 2),
                              Entry("beta", "function", "", "a.py", 4, 0, 5)]),
                    ("b.py", [Entry("Gamma", "class", "", "b.py", 1, 0, 2)])])
    state = index.state()
    broken = []
    for change in ("group", "order", "slot", "short"):
        bad = copy.deepcopy(state)
        if change == "group":
            bad["groups"][0] = []
        elif change == "order":
            bad["names"] = bad["names"][::-1]
        elif change == "slot":
            bad["subsequences"] = {}
        else:
            bad["word_starts"] = bad["word_starts"][1:]
        broken.append(bad)
    for bad in broken:
        target = KeywordIndex()
        with pytest.raises(ValueError):
            target.restore(bad)
        assert len(target) == 0 and target.search("a") == []
    with pytest.raises(ValueError, match="empty"):
        index.restore(state)
