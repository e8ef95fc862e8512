"""The table of names `repodoc check` keeps between runs (store/names.py, refs/scope.py): trusted only for
the content it was made of, of its version and stamp, and in its exact form; anything else is ignored and
the answer is that of a check without it. And a change's words: only the docs that can name what the
change binds differently are read."""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import make_workspace

from repodoc_lsp.config import Settings
from repodoc_lsp.refs import check, scope
from repodoc_lsp.refs.scope import Kept
from repodoc_lsp.store import kept as kept_file
from repodoc_lsp.store import names
from repodoc_lsp.store.workspace import Workspace

FILES = {"kit/__init__.py": "from .shapes import draw as paint, draw\n",
         "kit/shapes.py": "import os\n\n\ndef draw():\n    pass\n",
         "docs/api.rst": "API\n===\n\n:func:`draw` and :func:`ghost`.\n"}
SHAPES = "kit/shapes.py"


def _scanned(root: Path, imports: Kept | None = None) -> Workspace:
    ws = Workspace(root, Settings(cache_dir=str(root.parent / "cache")))
    ws.scan(jobs=1, imports=imports.imports() if imports is not None else None)
    return ws


def _items(report: check.Report) -> list[tuple[str, int, str, str]]:
    return [(s.rel, s.line, s.text, s.message) for s in report.stale]


def _with_ghost(path: Path) -> None:
    """Forge the kept table: kit/shapes.py (its digest as kept) also defines `ghost`, in a valid form."""
    data = kept_file.read(path, names.MAX_BYTES)
    row = data["files"][SHAPES][1]
    for i, extra in ((0, "ghost"), (6, "function"), (7, ""), (8, "")):
        row[i] += names.SEP + extra
    row[9] += ",1,0,1"  # its line, column and last line
    kept_file.write(path, data, level=1)


def _rewrite(change: Callable[[dict[str, Any]], None]) -> Callable[[Path], None]:
    def damage(path: Path) -> None:
        data = kept_file.read(path, names.MAX_BYTES)
        change(data)
        kept_file.write(path, data, level=1)
    return damage


def _set(row: int, column: int, value: Any) -> Callable[[Path], None]:
    def change(data: dict[str, Any]) -> None:
        data["files"][SHAPES][row][column] = value
    return _rewrite(change)


DAMAGES: dict[str, Callable[[Path], None]] = {
    "another version": _rewrite(lambda d: d.update(version=names.VERSION + 1)),
    "another analysis": _rewrite(lambda d: d.update(stamp=d["stamp"] + "-other")),
    "made of other content": _rewrite(lambda d: d["files"][SHAPES].__setitem__(0, "0" * 32)),
    "a line that is text": _set(1, 9, "4,0,5,x,0,1"),
    "a line past 32 bits": _set(1, 9, f"4,0,5,{1 << 40},0,1"),
    "positions of another count": _set(1, 9, "4,0,5,1,0"),
    "columns of other lengths": _set(1, 6, "function"),
    "a count of strings off": _set(1, 4, 3),
    "a name column that is no text": _set(1, 0, ["draw", "ghost"]),
    "imports of another form": _set(2, 4, "1"),
    "a stat of another form": _set(3, 0, "1"),
    "not gzip": lambda p: p.write_bytes(b"not gzip at all"),
    "cut short": lambda p: p.write_bytes(p.read_bytes()[:40]),
    "not JSON": lambda p: p.write_bytes(gzip.compress(b"{nope")),
    "a list": lambda p: p.write_bytes(gzip.compress(json.dumps([1, 2]).encode())),
}


def test_a_kept_table_is_used_for_the_content_it_was_made_of(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", FILES)
    ws = _scanned(root)
    path = tmp_path / "names.json.gz"
    without = _items(check.check_workspace(ws))
    assert [text for _, _, text, _ in without] == ["ghost"]
    assert _items(check.check_workspace(ws, kept=Kept(path))) == without  # made from the facts, and kept
    assert _scanned(root, Kept(path)).facts.imports() == ws.facts.imports()  # as the facts cache has them
    made = scope.name_table(ws)
    assert [scope.name_table(ws, Kept(path)).file_entries(rel) for rel in FILES] == \
        [made.file_entries(rel) for rel in FILES]  # each entry's kind, lines and columns as the facts have them
    _with_ghost(path)
    assert _items(check.check_workspace(_scanned(root, Kept(path)), kept=Kept(path))) == []  # trusted: it says so
    (root / SHAPES).write_text("import os\n\n\ndef draw():\n    return 1\n")  # stale for this file now
    ws = _scanned(root, Kept(path))
    assert _items(check.check_workspace(ws, kept=Kept(path))) == _items(check.check_workspace(ws)) == without


@pytest.mark.parametrize("damage", DAMAGES.values(), ids=list(DAMAGES))
def test_a_damaged_or_foreign_kept_table_is_ignored(tmp_path: Path, damage: Callable[[Path], None]) -> None:
    root = make_workspace(tmp_path / "ws", FILES)
    path = tmp_path / "names.json.gz"
    without = _items(check.check_workspace(_scanned(root), kept=Kept(path)))
    _with_ghost(path)  # trusted as it is (see above): each damage must make it ignored
    damage(path)
    ws = _scanned(root, Kept(path))
    assert [i.module for i in ws.facts.imports()[SHAPES]] == ["os"]  # from the facts cache then
    assert _items(check.check_workspace(ws, kept=Kept(path))) == without


def test_a_change_reads_only_the_docs_naming_what_it_binds_differently(tmp_path: Path) -> None:
    """A rename's words are the old and the new name: a doc naming another function of the changed
    module, or a parameter on a line the rename touched, is not read; a module that appeared is read
    wherever it is named."""
    before = "def draw(mode='fast'):\n    pass\n\n\ndef paint():\n    pass\n"
    files = {"kit/__init__.py": "", "kit/shapes.py": before.replace("draw", "sketch"),
             "docs/draw.rst": "Draw\n====\n\n:func:`kit.shapes.draw`\n",
             "docs/paint.rst": "Paint\n=====\n\n:func:`kit.shapes.paint` (``mode``, ``fast``)\n"}
    ws = Workspace(make_workspace(tmp_path / "ws", files), Settings(), use_cache=False)
    ws.scan(jobs=1)
    report = check.check_workspace(ws, only={SHAPES}, old_sources={SHAPES: before}, since="HEAD")
    assert [(s.rel, s.suggestion) for s in report.stale] == [("docs/draw.rst", "kit.shapes.sketch")]
    assert report.files == 2  # kit/shapes.py and docs/draw.rst
    report = check.check_workspace(ws, only={SHAPES}, old_sources={}, since="HEAD")  # new: every name of it
    assert report.files == 3


def test_the_server_reads_a_file_s_dotted_strings_again_only_when_it_changed(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """What a saved doc's check needs of every file (the dotted names the code spells as strings) is the
    same as reading them all, and only a changed file is read again."""
    from repodoc_lsp.refs.namespace import Namespaces
    from repodoc_lsp.refs.project import Project
    from repodoc_lsp.refs.scope import DottedStrings

    root = make_workspace(tmp_path / "ws", {"kit/__init__.py": "", "kit/log.py": 'NAME = "kit.log.events"\n',
                                            "kit/other.py": 'GROUP = "kit.plugins"\n'})
    ws = Workspace(root, Settings(), use_cache=False)
    ws.scan(jobs=1)
    dotted = DottedStrings()
    assert dotted.of(ws) == Namespaces(ws, Project(ws)).strings() == {"kit.log.events", "kit.plugins"}
    (root / "kit/log.py").write_text('NAME = "kit.log.records"\n')
    ws.update_file("kit/log.py")
    read: list[str] = []
    real = ws.read_text
    monkeypatch.setattr(ws, "read_text", lambda rel: read.append(rel) or real(rel))
    assert dotted.of(ws) == {"kit.log.records", "kit.plugins"}
    assert read == ["kit/log.py"]


def test_a_check_builds_no_import_relations(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The module names a check needs come from the files' names: the import relations of every file (what
    pages need) are not built, and the answer is the same."""
    from repodoc_lsp.analysis.relations import Relations

    root = make_workspace(tmp_path / "ws", FILES)
    path = tmp_path / "names.json.gz"
    expected = _items(check.check_workspace(_scanned(root)))
    for kept in (None, path, path):  # without a table, making it, reading it
        ws = _scanned(root, Kept(kept) if kept else None)

        def refused(*_: Any) -> None:
            raise AssertionError("import relations built")

        monkeypatch.setattr(Relations, "__init__", refused)
        assert _items(check.check_workspace(ws, kept=Kept(kept) if kept else None)) == expected
        monkeypatch.undo()


def test_a_check_reads_only_the_files_whose_stat_moved_since_its_table(tmp_path: Path, cache_env: dict[str, str],
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The table keeps each file's stat: the next check reads and digests only the files whose stat moved
    (and those written too close to the scan that made it: their stat may not move), and sees their change."""
    from helpers import cli_here

    from repodoc_lsp.store import scan

    root = make_workspace(tmp_path / "ws", FILES)
    assert "1 stale" in cli_here("check", ".", "--no-pages", env=cache_env, cwd=root).stdout  # `ghost`
    (table,) = Path(cache_env["REPODOC_CACHE_DIR"], names.FOLDER).glob("*.json.gz")
    read: list[str] = []
    real = scan.read_regular
    monkeypatch.setattr(scan, "read_regular", lambda path: read.append(path.relative_to(root).as_posix()) or real(path))
    cli_here("check", ".", "--no-pages", env=cache_env, cwd=root)
    assert sorted(read) == sorted(FILES)  # every file was written right before the table was made
    _rewrite(lambda d: d.update(began=d["began"] + 10**12))(table)  # as if made long after they were written
    (root / SHAPES).write_text("import os\n\n\ndef draw():\n    pass\n\n\ndef ghost():\n    pass\n")
    read.clear()
    proc = cli_here("check", ".", "--no-pages", env=cache_env, cwd=root)
    assert read == [SHAPES]
    assert "0 stale" in proc.stdout, proc.stdout  # `ghost` is defined now


def test_a_file_s_entries_read_back_from_the_table_as_they_were() -> None:
    """Anchors kept short when they are their entry's kind and qualified name read back as they were, as do
    others; a row that would not read back (a value holding the separator, an anchor that is the short
    form's text) is not kept."""
    from repodoc_lsp.knowledge.index import Entry

    entries = [Entry("draw", "function", "", "a.py", 4, 0, 5, "function-draw"),
               Entry("draw", "function", "", "a.py", 9, 0, 9, "function-draw-2"),
               Entry("size", "method", "Box", "a.py", 12, 4, 13, "method-Box.size"),
               Entry("Usage", "heading", "", "a.py", 20, 0, 20, "")]
    found = names.FileNames.of(entries, ("LIMIT",), " draw size ", ("a.b",))
    again = names.decode_names(json.loads(json.dumps(names.encode_names(found))))
    assert [again.entry("a.py", i) for i in range(4)] == entries
    assert (again.assigned, again.words, again.strings) == (("LIMIT",), " draw size ", ("a.b",))
    odd = [Entry("a|b", "heading", "", "a.py", 1, 0, 1, "a-b"), Entry("x", "function", "", "a.py", 1, 0, 1, "=")]
    assert [names.encode_names(names.FileNames.of([e], (), "", ())) for e in odd] == [None, None]
