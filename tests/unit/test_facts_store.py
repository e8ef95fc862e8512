"""The facts store: loads from the cache by the worker thread and by requests at once, and
facts kept across a rescan of unchanged files."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from repodoc_lsp.analysis import analyse_source
from repodoc_lsp.config import Settings
from repodoc_lsp.store.cache import FactsCache, digest
from repodoc_lsp.store.facts import FactsStore
from repodoc_lsp.store.scan import STORE_BATCH
from repodoc_lsp.store.workspace import Workspace


def _source(i: int) -> bytes:
    return f'"""Module {i}."""\nimport os\n\ndef f{i}(x):\n    return x\n'.encode()


def _load_at_once(store: FactsStore) -> list[BaseException]:
    """The worker's load of everything, a request's one file and a page's `facts[...]` at once."""
    errors: list[BaseException] = []

    def run(fn: Callable[[], object]) -> None:
        try:
            fn()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(store.load_all,)),
               threading.Thread(target=run, args=(lambda: store.one("m2999.py"),)),
               threading.Thread(target=run, args=(lambda: store["m1500.py"],))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def test_loads_from_two_threads_at_once_load_everything_once(tmp_path: Path) -> None:
    cache = FactsCache(tmp_path / "cache")
    sources = {f"m{i}.py": _source(i) for i in range(3000)}
    cache.put_many((digest(data, rel), analyse_source(rel, data)) for rel, data in sources.items())
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # hand the interpreter over as often as it can: races show
    try:
        for _ in range(5):
            store = FactsStore(tmp_path, cache)
            for rel, data in sources.items():
                store.add_cached(rel, digest(data, rel), ())
            assert _load_at_once(store) == []
            assert all(store.loaded(rel) is not None for rel in sources)
            assert store["m7.py"].symbols[0].name == "f7"
    finally:
        sys.setswitchinterval(interval)
        cache.close()


def test_one_loads_only_that_file(tmp_path: Path) -> None:
    cache = FactsCache(tmp_path / "cache")
    sources = {f"m{i}.py": _source(i) for i in range(10)}
    cache.put_many((digest(data, rel), analyse_source(rel, data)) for rel, data in sources.items())
    store = FactsStore(tmp_path, cache)
    for rel, data in sources.items():
        store.add_cached(rel, digest(data, rel), ())
    facts = store.one("m3.py")
    assert facts is not None and facts.symbols[0].name == "f3"
    assert [rel for rel in sources if store.loaded(rel) is not None] == ["m3.py"]
    assert store.one("missing.py") is None
    cache.close()


def test_a_rescan_keeps_loaded_facts_of_unchanged_files_and_a_cancelled_one_changes_nothing(
        tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    for i in range(40):
        (root / f"m{i}.py").write_bytes(_source(i))
    ws = Workspace(root, Settings().replace(cache_dir=str(tmp_path / "cache")))
    assert ws.scan(jobs=1)
    unchanged = ws.facts["m1.py"]
    (root / "m2.py").write_bytes(_source(2) + b"\ndef added():\n    pass\n")
    assert ws.scan(jobs=1)
    assert ws.facts.loaded("m1.py") is unchanged  # kept, not loaded again
    assert ws.cached == 39 and ws.analysed == 1
    assert [s.name for s in ws.facts["m2.py"].symbols] == ["f2", "added"]

    class Cancelled:
        def is_set(self) -> bool:
            return True

    (root / "m3.py").write_bytes(b"def changed():\n    pass\n")
    (root / "new.py").write_bytes(b"def new():\n    pass\n")
    before = (dict(ws.digests), ws.facts, ws.cached, ws.analysed)
    assert ws.scan(jobs=1, cancel=Cancelled()) is False
    assert (dict(ws.digests), ws.facts, ws.cached, ws.analysed) == before
    ws.cache.close()


def test_a_parallel_scan_stores_its_rows_in_batches_and_a_rescan_reads_them(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    sources = {f"m{i}.py": _source(i) for i in range(STORE_BATCH + 44)}  # more than one batch of rows
    for rel, data in sources.items():
        (root / rel).write_bytes(data)
    settings = Settings().replace(cache_dir=str(tmp_path / "cache"))
    ws = Workspace(root, settings)
    assert ws.scan(jobs=2) and ws.analysed == len(sources)
    ws.cache.close()
    again = Workspace(root, settings)
    assert again.scan(jobs=2) and again.cached == len(sources) and again.analysed == 0
    for rel, data in list(sources.items())[::50]:  # the rows read back are the facts an analysis here makes
        assert again.facts[rel] == analyse_source(rel, data)
    rows = again.cache.get_many([digest(data, rel) for rel, data in sources.items()])
    assert len(rows) == len(sources)
    again.cache.close()


def test_released_facts_are_loaded_again_on_use_and_only_cached_ones_go(tmp_path: Path) -> None:
    """The server forgets what the cache holds once its index and graph are built (490 MB on
    the 17,150-file corpus), and the graph streams pending facts a batch at a time."""
    cache = FactsCache(tmp_path / "cache")
    sources = {f"m{i}.py": _source(i) for i in range(600)}
    keys = {rel: digest(data, rel) for rel, data in sources.items()}
    store = FactsStore(tmp_path, cache)
    for rel, data in sources.items():
        store[rel] = analyse_source(rel, data)  # analysed here, as a cold scan's
    cache.put_many((keys[rel], store[rel]) for rel in list(sources)[:500])  # the last 100 not cached
    before = {rel: store[rel] for rel in sources}
    store.release(keys)
    assert [rel for rel in sources if store.loaded(rel) is not None] == list(sources)[500:]
    assert store.one("m7.py") == before["m7.py"] and store.loaded("m8.py") is None
    streamed = dict(store.stream(batch=64))
    assert streamed == before  # every file, equal facts
    assert [rel for rel in sources if store.loaded(rel) is not None] == ["m7.py", *list(sources)[500:]]
    assert store["m9.py"] == before["m9.py"]  # that file only: a run after an edit renders a few pages
    assert [rel for rel in sources if store.loaded(rel) is not None] == ["m7.py", "m9.py", *list(sources)[500:]]
    store.load_all()
    assert all(store.loaded(rel) is not None for rel in sources)


def test_a_releasing_scan_keeps_no_facts_the_cache_holds(tmp_path: Path) -> None:
    """The server's scan (release=True) forgets each batch of new facts once the cache holds
    them (every file's facts held at the end of a cold scan of 17,150 files took 574 MB); they
    load again equal. Without a cache nothing is forgotten."""
    root = tmp_path / "ws"
    root.mkdir()
    sources = {f"m{i}.py": _source(i) for i in range(STORE_BATCH + 44)}  # more than one batch of rows
    for rel, data in sources.items():
        (root / rel).write_bytes(data)
    seen: dict[str, object] = {}
    ws = Workspace(root, Settings().replace(cache_dir=str(tmp_path / "cache")))
    assert ws.scan(jobs=2, release=True, on_facts=seen.__setitem__) and ws.analysed == len(sources)
    assert [rel for rel in sources if ws.facts.loaded(rel) is not None] == []
    assert set(seen) == set(sources) and set(ws.facts) == set(sources)
    for rel in list(sources)[::25]:
        assert ws.facts.one(rel) == seen[rel]
    ws.cache.close()
    uncached = Workspace(root, Settings(), use_cache=False)
    assert uncached.scan(jobs=1, release=True)
    assert all(uncached.facts.loaded(rel) is not None for rel in sources)


def test_the_imports_kept_share_their_strings(tmp_path: Path) -> None:
    """Every file's imports stay in the workspace: `import os` of two files is one string, as
    analysed here and as read back from the cache (the 17,150-file corpus: 78 -> 34 MB)."""
    root = tmp_path / "ws"
    root.mkdir()
    for i in range(60):
        (root / f"m{i}.py").write_bytes(_source(i) + b"from collections.abc import Mapping as M, Iterable\n")
    settings = Settings().replace(cache_dir=str(tmp_path / "cache"))
    for ws in (Workspace(root, settings), Workspace(root, settings)):  # analysed, then from the cache
        assert ws.scan(jobs=2)
        first, other = ws.facts.imports()["m0.py"], ws.facts.imports()["m59.py"]
        assert first == other and first[1].names == ("Mapping", "Iterable")
        assert first[0].module is other[0].module and first[0].anchor is other[0].anchor
        assert all(a is b for a, b in zip(first[1].names + first[1].asnames, other[1].names + other[1].asnames,
                                           strict=True))
        assert ws.facts["m3.py"].imports == first
        ws.cache.close()
    assert ws.cached == 60


def test_facts_analysed_again_for_a_row_gone_are_cached_only_under_their_own_content(tmp_path: Path) -> None:
    """Released facts whose cache row is gone or damaged (the cache deleted or pruned mid-session)
    are analysed again from the file; if the file changed (or went) since, those facts are not
    the facts of the content the row's key names and must not be stored under it: a later scan
    of that content (the edit undone, a branch switched back) read another content's facts
    (an empty text file's for a deleted one) and its pages and graph said so."""
    import sqlite3

    cache_dir = tmp_path / "cache"
    root = tmp_path / "ws"
    root.mkdir()
    sources = {"a.py": _source(1), "b.py": _source(2), "c.py": _source(3)}
    for rel, data in sources.items():
        (root / rel).write_bytes(data)
    ws = Workspace(root, Settings().replace(cache_dir=str(cache_dir)))
    assert ws.scan(jobs=1, release=True) and ws.facts.loaded("a.py") is None
    (root / "a.py").write_bytes(_source(4))  # changed on disk: the watcher's event not handled yet
    (root / "b.py").unlink()  # deleted likewise
    db = sqlite3.connect(next(cache_dir.glob("facts-*.sqlite")))
    with db:
        db.execute("DELETE FROM facts")  # every row gone
    db.close()
    assert [f.name for f in ws.facts.one("a.py").symbols] == ["f4"]  # what the file holds now
    ws.facts.one("b.py")
    assert [f.name for f in ws.facts.one("c.py").symbols] == ["f3"]
    stored = ws.cache.get_many([digest(data, "x.py") for data in (*sources.values(), _source(4))])
    assert set(stored) == {digest(_source(3), "c.py")}  # c.py's own again; none under a.py's or b.py's old key
    assert [s.name for s in stored[digest(_source(3), "c.py")].symbols] == ["f3"]
    ws.cache.close()
    for rel, data in sources.items():  # the edit undone, the file restored: their own facts again
        (root / rel).write_bytes(data)
    again = Workspace(root, Settings().replace(cache_dir=str(cache_dir)))
    assert again.scan(jobs=1)
    assert {rel: [s.name for s in again.facts[rel].symbols] for rel in sources} == \
        {"a.py": ["f1"], "b.py": ["f2"], "c.py": ["f3"]}
    again.cache.close()


def test_analysis_workers_send_each_files_cache_row_and_only_facts(tmp_path: Path) -> None:
    """An analysis worker sends each file's facts (or its skip reason) and its cache row (its JSON,
    `cache.encode`): the parent of a cold scan only stores the row. Nothing of the symbol graph comes
    with them (the graph makes its views of each file from the facts, `knowledge/`). A scan in worker
    processes stores the rows the parent would have encoded, and its graph is the graph of the facts."""
    import dataclasses
    import pickle
    import sqlite3

    from repodoc_lsp.knowledge.once import BuiltOnce
    from repodoc_lsp.render.parts import definition_parts
    from repodoc_lsp.store.cache import encode
    from repodoc_lsp.store.facts import Analysed, analyse_chunk

    assert [f.name for f in dataclasses.fields(Analysed)] == ["rel", "digest", "size", "facts", "skip_reason", "row"]
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.py").write_bytes(b'def f(x: "nn.Linear") -> int:\n    """Takes a `torch.Tensor`."""\n')
    (root / "notes.md").write_bytes(b"# Notes\n")
    [py, md] = pickle.loads(pickle.dumps(analyse_chunk(str(root), ["a.py", "notes.md"])))
    assert py.facts is not None and md.facts is not None
    assert py.row == encode(py.facts) and md.row == encode(md.facts)
    sources = {f"m{i}.py": _source(i) + f"from m{i + 1} import f{i + 1}\n".encode() for i in range(60)}
    for rel, data in sources.items():
        (root / rel).write_bytes(data)
    ws = Workspace(root, Settings().replace(cache_dir=str(tmp_path / "cache")), incremental=False)
    assert ws.scan(jobs=2) and ws.analysed == 62 and ws.sketched() == {*sources, "a.py", "notes.md"}
    rows = {key: encode(ws.facts[rel]) for rel, key in ws.digests.items()}
    with sqlite3.connect(next((tmp_path / "cache").glob("facts-*.sqlite"))) as db:
        stored = {key: (imports, data) for key, imports, data in db.execute("SELECT key, imports, data FROM facts")}
    assert stored == rows
    graph = ws.graph()
    again = BuiltOnce(ws.relations, ws.facts.items(), parts=definition_parts)
    for rel in ws.facts:
        assert graph.outline(rel) == again.outline(rel) and graph.mentioned(rel) == again.mentioned(rel)
    assert graph.mentioned("a.py") == {} and graph.users(("m7.py", "f7")) == again.users(("m7.py", "f7")) == \
        {"m6.py": (6,)}
    ws.cache.close()


def test_a_scan_with_an_empty_cache_reads_each_file_once_in_the_analysis(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cache that holds no row (a first run, or off) knows no file: the scan does not read and
    digest every file before the analysis (both cores idle meanwhile), the analysis workers read
    and digest each; a cache that holds rows is looked up by every file's digest as before. The
    workspace is the same either way."""
    import repodoc_lsp.store.scan as scan

    reads: list[object] = []
    read = scan.read_regular
    monkeypatch.setattr(scan, "read_regular", lambda path, *a: reads.append(path) or read(path, *a))
    root = tmp_path / "ws"
    root.mkdir()
    sources = {f"m{i}.py": _source(i) for i in range(60)}
    for rel, data in sources.items():
        (root / rel).write_bytes(data)
    settings = Settings().replace(cache_dir=str(tmp_path / "cache"))
    states = []
    for ws, analysed in ((Workspace(root, settings), 60), (Workspace(root, settings, use_cache=False), 60),
                         (Workspace(root, settings), 0)):
        reads.clear()
        assert ws.scan(jobs=2) and ws.analysed == analysed
        assert len(reads) == (60 if ws.cache.enabled and not analysed else 0)  # read here only to look up the cache
        states.append(ws.state())
        ws.cache.close()
    assert states[0] == states[1] == states[2]
    assert states[0].digests == {rel: digest(data, rel) for rel, data in sources.items()}
    assert states[0].sizes == {rel: len(data) for rel, data in sources.items()}


_CLOSE_WHILE_READ = """
import sys, threading, time
from pathlib import Path
from repodoc_lsp.analysis import analyse_source
from repodoc_lsp.store.cache import FactsCache
folder = Path(sys.argv[1])
facts = analyse_source("m.py", b"'M.'\\n" + b"".join(b"def f%d(x):\\n    return x\\n" % i for i in range(200)))
keys = [f"{i:064x}" for i in range(3000)]
FactsCache(folder).put_many((k, facts) for k in keys)
for moment in (0.01, 0.03, 0.05, 0.07, 0.09, 0.11, 0.13, 0.15, 0.17, 0.19):
    cache, stop = FactsCache(folder), threading.Event()
    def read() -> None:
        while not stop.is_set():
            for i in range(0, len(keys), 50):
                cache.get_many(keys[i:i + 50])
    reader = threading.Thread(target=read)
    reader.start()
    time.sleep(moment)
    cache.close()  # the server's exit, while its worker thread reads facts
    stop.set()
    reader.join(10)
print("ok")
"""


def test_closing_the_cache_while_another_thread_reads_it(tmp_path: Path) -> None:
    """A server told to exit closes its cache while its worker may be reading facts (rendering pages
    after a save): the process crashed with a segmentation fault (SQLite's connection closed under a
    running query), now the close waits for the query and later reads find the cache off."""
    import subprocess

    done = subprocess.run([sys.executable, "-c", _CLOSE_WHILE_READ, str(tmp_path / "cache")], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", (done.returncode, done.stderr[-2000:])
