"""cache.FactsCache: facts by content digest in a private SQLite file; every row that is not
exactly facts is a miss, a cache that cannot be used is a `problem`, never an exception."""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path

import pytest

from repodoc_lsp.analysis import analyse_source
from repodoc_lsp.store import cache as cache_module
from repodoc_lsp.store.cache import ANALYSIS_VERSION, FactsCache, digest, encode

SOURCES = {f"m{i}.py": f"import os\nfrom pkg import thing{i}\n\ndef f{i}(x: int) -> int:\n    '''Doc {i}.'''\n"
           "    return x\n" for i in range(4)}


def _filled(folder: Path) -> tuple[FactsCache, list[str]]:
    cache = FactsCache(folder)
    items = [(digest(text.encode(), rel), analyse_source(rel, text.encode())) for rel, text in SOURCES.items()]
    cache.put_many(items)
    return cache, [k for k, _ in items]


def test_facts_round_trip_by_digest(tmp_path: Path) -> None:
    cache, keys = _filled(tmp_path / "c")
    try:
        got = cache.get_many([*keys, "0" * 40])
        assert set(got) == set(keys)  # an unknown key is a miss
        for (rel, text), key in zip(SOURCES.items(), keys, strict=True):
            assert got[key] == analyse_source(rel, text.encode())
        imports = cache.get_imports_many(keys)
        assert imports[keys[1]] == got[keys[1]].imports and [i.module for i in imports[keys[1]]] == ["os", "pkg"]
        assert digest(b"x", "x.py") == digest(b"x", "y.py") != digest(b"y", "x.py") and len(digest(b"x", "x.py")) == 40
    finally:
        cache.close()
    assert FactsCache(tmp_path / "c").get_many(keys).keys() == set(keys)  # on disk, for the next process


def test_rows_that_are_not_exactly_facts_are_misses(tmp_path: Path) -> None:
    cache, keys = _filled(tmp_path / "c")
    cache.close()
    good = json.loads(sqlite3.connect(tmp_path / "c" / f"facts-{ANALYSIS_VERSION}.sqlite").execute(
        "SELECT data FROM facts WHERE key = ?", (keys[0],)).fetchone()[0])
    wrong_type = {**good, "symbols": [{**good["symbols"][0], "line": "1; import os"}]}
    damaged = {"garbage": ("not json", "{nope"),
               "unknown key": ("[]", json.dumps({"language": "python", "lines": 5, "surprise": 1})),
               "wrong types": ('{"a": 1}', json.dumps(wrong_type)),
               "too deep": ("[" * 100_000, "[" * 100_000),
               "no such language": ("[]", json.dumps({"language": "cobol", "lines": 1})),
               "null": (None, None)}
    db = sqlite3.connect(tmp_path / "c" / f"facts-{ANALYSIS_VERSION}.sqlite")
    with db:
        db.executemany("INSERT OR REPLACE INTO facts VALUES (?, ?, ?, ?)",
                       [(name, imports, data, 0) for name, (imports, data) in damaged.items()])
    db.close()
    cache = FactsCache(tmp_path / "c")
    try:
        assert cache.get_many(damaged) == {}
        # the imports column is read on its own: its valid rows (`[]`) are hits
        assert cache.get_imports_many(damaged) == {"unknown key": (), "no such language": ()}
        assert set(cache.get_many(keys)) == set(keys)  # the good rows are still read
    finally:
        cache.close()


def test_the_cache_is_private_and_pruned(tmp_path: Path) -> None:
    folder = tmp_path / "c"
    folder.mkdir(mode=0o755)
    old, other = folder / "facts-0.0.1-1.sqlite", folder / "facts-9.9.9-1.sqlite"
    old.write_bytes(b"an old version's database")
    os.utime(old, (time.time() - 3 * 86_400,) * 2)
    other.write_bytes(b"another version, used today")
    cache, keys = _filled(folder)
    path = folder / f"facts-{ANALYSIS_VERSION}.sqlite"
    cache.close()
    assert folder.stat().st_mode & 0o777 == 0o700 and path.stat().st_mode & 0o777 == 0o600
    assert not old.exists() and other.exists()
    db = sqlite3.connect(path)
    with db:
        db.execute("UPDATE facts SET used = 1 WHERE key = ?", (keys[0],))  # unused since 1970
        db.execute("DELETE FROM meta")  # not pruned today
    db.close()
    os.chmod(path, 0o644)
    cache = FactsCache(folder)
    try:
        assert set(cache.get_many(keys)) == set(keys[1:])
        assert path.stat().st_mode & 0o777 == 0o600
    finally:
        cache.close()


@pytest.mark.parametrize("how", ["relative", "a file", "locked"])
def test_a_cache_that_cannot_be_used_is_a_problem_not_an_error(tmp_path: Path, how: str,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "c"
    holder = None
    if how == "relative":
        folder = Path("relative-cache")
        monkeypatch.chdir(tmp_path)
    elif how == "a file":
        folder.write_text("not a folder\n")
    else:
        made = FactsCache(folder)
        assert made.enabled
        made.close()
        monkeypatch.setattr(cache_module, "BUSY_SECONDS", 0.05)
        holder = sqlite3.connect(folder / f"facts-{ANALYSIS_VERSION}.sqlite", isolation_level=None)
        holder.execute("PRAGMA locking_mode=EXCLUSIVE")
        holder.execute("BEGIN EXCLUSIVE")
        holder.execute("INSERT INTO facts VALUES ('held', '[]', '{}', 0)")
    try:
        cache = FactsCache(folder)
        facts = analyse_source("a.py", b"x = 1\n")
        cache.put_many([("k", facts)])  # nothing raised
        assert cache.get_many(["k"]) == {}
        assert not cache.enabled and cache.problem.startswith("analysis cache ")
        assert cache.problem.endswith("; analysing without it")
        assert not (tmp_path / "relative-cache").exists()
        cache.close()
    finally:
        if holder is not None:
            holder.close()


def test_no_folder_means_no_cache_and_no_problem() -> None:
    cache = FactsCache(None)
    cache.put_many([("k", analyse_source("a.py", b"x = 1\n"))])
    assert cache.get_many(["k"]) == {} and not cache.enabled and cache.problem == ""


def test_a_closed_cache_is_never_opened_again(tmp_path: Path) -> None:
    cache, keys = _filled(tmp_path / "c")
    cache.close()
    assert cache.get_many(keys) == {} and not cache.enabled


@pytest.mark.parametrize("source", [
    "x = 1\n",  # no import: none in the facts' JSON
    'import os\nfrom a.b import c as d, e\n\ndef f() -> None:\n    """Mentions ,"imports":0 and \\"x\\"."""\n',
    '"""Module ,\\"imports\\":0."""\nfrom . import *\nimport json\n',
])
def test_a_row_writes_the_imports_once_as_the_facts_and_their_imports_written_apart(source: str) -> None:
    facts = analyse_source("m.py", source.encode())
    row = cache_module.encode(facts)
    shape = cache_module.IMPORTS
    assert row.imports == json.dumps(cache_module._convert().unstructure(facts.imports, shape),
                                     separators=(",", ":"), ensure_ascii=False)
    assert row.data == json.dumps(cache_module._convert().unstructure(facts, cache_module.FileFacts),
                                  separators=(",", ":"), ensure_ascii=False)
    assert cache_module._load(row.data, cache_module.FileFacts) == facts


def test_a_row_is_what_cattrs_writes_with_every_field_set_or_default() -> None:
    """`encode`'s own unstructuring (`_row_maker`) against cattrs' on facts with every field of every
    class away from its default (and on the defaults), Markdown headings and a syntax error too."""
    from repodoc_lsp.analysis.model import (
        Attribute,
        FileFacts,
        Finding,
        FindingCategory,
        Import,
        Language,
        Symbol,
        SymbolKind,
        SyntaxProblem,
    )

    full = FileFacts(
        Language.MARKDOWN, 7, "latin-1", "not valid utf-8", 'Doc "é"\n\t\x01',
        (Symbol("a", "C.a", SymbolKind.METHOD, 3, 4, 5, "method-C.a", "C", "(x) -> int", True, ("d",), ("B",),
                "doc", 2, "ab12"),
         Symbol("h", "h", SymbolKind.HEADING, 1, 0, 1, "h")),
        (Import("..m", ("a", "b"), 2, 2, "import-..m", ("c", "b"), False), Import("x", (), 1),
         Import("s", (), 3, star=True)),
        (Finding(FindingCategory.SECURITY, "eval", 4, "`eval()`", "check"),
         Finding(FindingCategory.PATTERN, "p", 1, "d")),
        ("ident", "x"), 9, SyntaxProblem(2, 3, "bad"), True, ("a", "b"),
        (Attribute("x", "C", 3, "int", "1", True), Attribute("y", "", 4)), "a 1\nb 2,3", {"k": "v"})
    for facts in (full, FileFacts(Language.PYTHON, 0), analyse_source("m.py", b"x = 1\n")):
        row = cache_module.encode(facts)
        assert row.data == json.dumps(cache_module._convert().unstructure(facts, cache_module.FileFacts),
                                      separators=(",", ":"), ensure_ascii=False)
        assert cache_module._load(row.data, cache_module.FileFacts) == facts


# names of every analyser (two of each where the analysis reads the name alike), in other folders and cases
NAMES = ("pkg/__init__.py", "mod.pyi", "pkg/py.typed", "LICENSE", "setup.cfg", "README.md", "doc/a.rst",
         "a.c", "b/x.C", "a.h", "a.hpp", "k.cu", "a.ts", "a.tsx", "a.js", "a.jsx", "a.go", "a.rs", "A.java")
CONTENTS = (b"", b"x = 1\n", b"int f(void);\n", b"# Title\n\nText.\n", b"/** Doc. */\nclass A {}\n")


def test_the_key_is_the_content_and_what_the_analysis_reads_of_the_name() -> None:
    """Two files share a row exactly when their analyses are alike: the same content, read by the same
    analyser and grammar (the folder and the rest of the name are not read)."""
    assert digest(b"", "pkg/__init__.py") != digest(b"", "pkg/py.typed")
    assert digest(b"", "a.c") != digest(b"", "a.h") and digest(b"", "a.ts") != digest(b"", "a.tsx")
    assert digest(b"", "pkg/__init__.py") == digest(b"", "other/mod.py")
    assert digest(b"", "py.typed") == digest(b"", "LICENSE") and digest(b"", "a.h") == digest(b"", "B.HPP")
    for data in CONTENTS:
        first: dict[str, str] = {}
        for name in NAMES:
            same = first.setdefault(digest(data, name), name)
            assert analyse_source(same, data) == analyse_source(name, data), (same, name, data)
        assert len(first) == 13  # Python, text, Markdown, reST, C, C++, CUDA, JavaScript, TS, TSX, Go, Rust, Java


def test_a_second_cache_on_the_database_keeps_the_first_ones_locks(tmp_path: Path) -> None:
    """A process that opens the cache twice (a server with two roots) must not drop the write lock the
    first one holds: closing any descriptor of a database file drops every lock the process has on it,
    and another process could then write at the same time (a malformed database)."""
    import subprocess
    import sys

    first = FactsCache(tmp_path / "c")
    db = first._connection()
    assert db is not None
    probe = ("import sqlite3, sys\nd = sqlite3.connect(sys.argv[1], timeout=0, isolation_level=None)\n"
             "try:\n    d.execute('BEGIN IMMEDIATE')\nexcept sqlite3.OperationalError:\n    sys.exit(3)\n")
    path = tmp_path / "c" / f"facts-{ANALYSIS_VERSION}.sqlite"
    with first._using:
        db.execute("BEGIN IMMEDIATE")
        try:
            second = FactsCache(tmp_path / "c")
            assert second.enabled
            other = subprocess.run([sys.executable, "-c", probe, str(path)], timeout=60)
            assert other.returncode == 3  # the write lock is still the first cache's
        finally:
            db.execute("ROLLBACK")
    second.close()
    first.close()


def test_a_row_with_an_integer_no_file_can_hold_is_a_miss(tmp_path: Path) -> None:
    """A line past 32 bits comes from no analysis (a forged row or facts file): refused when read, as any
    row that is not exactly facts, instead of ending the run when the graph stores it."""
    from repodoc_lsp.store.cache import structure_facts

    raw = json.loads(encode(analyse_source("a.py", b"def f():\n    pass\n")).data)
    assert structure_facts(raw).symbols[0].line == 1
    raw["symbols"][0]["line"] = 1 << 31
    with pytest.raises(TypeError):
        structure_facts(raw)


def test_imports_are_checked_as_strictly_as_the_facts_model() -> None:
    """`structure_imports` (written plainly, not with cattrs) makes what cattrs makes of a row and refuses
    every row cattrs refuses."""
    good = [{"module": "os", "names": [], "line": 1, "anchor": "import-os"},
            {"module": "..pkg", "names": ["a", "b"], "line": 2, "level": 2, "asnames": ["c", "b"]},
            {"module": "m", "names": [], "line": 3, "star": True}]
    convert = cache_module._convert()
    assert cache_module.structure_imports(good) == convert.structure(good, cache_module.IMPORTS)
    bad = [{"module": "os", "names": [], "line": True}, {"module": "os", "names": [], "line": "1"},
           {"module": "os", "names": [1], "line": 1}, {"module": "os", "line": 1},
           {"module": "os", "names": [], "line": 1, "surprise": 0}, {"module": "os", "names": [], "line": 1, "star": 1},
           {"module": None, "names": [], "line": 1}, ["os", [], 1], {"module": "os", "names": [], "line": 1 << 31}]
    for row in bad:
        with pytest.raises(Exception):  # noqa: B017 (cattrs raises several kinds)
            convert.structure([row], cache_module.IMPORTS)
        with pytest.raises((TypeError, KeyError)):
            cache_module.structure_imports([row])
    with pytest.raises(TypeError):
        cache_module.structure_imports({"module": "os"})
