"""`repodoc generate` after a one-file edit makes the import relations from the tables the last saved run kept
(`store/sketches.py`, `Relations.saved_tables`) and makes a file's imports only when something reads them,
not every file's; a damaged relations part means relations made from every file's imports, and the tree
stays equal to a fresh run's."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from edits import differences, tree
from helpers import make_workspace, read_saved, write_saved
from test_since_last_run import FILES, _fresh, _generate, _state

from repodoc_lsp.analysis import analyse_source
from repodoc_lsp.analysis.relations import Relations
from repodoc_lsp.store import sketches
from repodoc_lsp.store.facts import SavedImports

MORE = {
    "pkg/sub/__init__.py": "from .x import X\nfrom .. import a\n",
    "pkg/sub/x.py": "from pkg import b, leaf as l\nfrom pkg.b import f\nimport os.path\n\n\nclass X:\n    pass\n",
    "pkg/sub/y.py": "from . import x\nfrom .x import *\nimport pkg.sub\n",
}
MANY = {f"many/m{n}.py": f"from pkg.b import f\n\n\ndef f{n}():\n    return f()\n" for n in range(20)}


def _tables(rels: Relations) -> tuple[Any, ...]:
    return (rels.files, rels.module_of, rels.file_of, {k: v for k, v in rels.imported_by.items() if v},
            {k: v for k, v in rels.name_users.items() if v}, {rel: rels.links_of(rel) for rel in rels.files},
            {rel: rels.imports_of(rel) for rel in rels.files})


def _saved(imports: dict[str, Any], relations: Relations) -> sketches.Saved:
    """What a run's saved file holds of these files (each file's digest its name), as read back."""
    raw = {"sketches": {rel: [f"d-{rel}", None, None] for rel in imports},
           "imports": {f"d-{rel}": sketches.encode_imports(found) for rel, found in imports.items()},
           "relations": sketches.encode_relations(relations)}
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "s.json.gz"
        sketches.write_aside(path, "stamp", raw["sketches"], raw["imports"], raw["relations"]).keep()
        return sketches.load(path, "stamp")


def test_relations_made_from_the_saved_tables_are_those_made_from_every_file(monkeypatch: pytest.MonkeyPatch) -> None:
    imports = {rel: analyse_source(rel, text.encode()).imports for rel, text in {**FILES, **MORE}.items()}
    built = Relations(imports)
    made: list[SavedImports] = []
    real = SavedImports.made
    monkeypatch.setattr(SavedImports, "made", lambda self: made.append(self) or real(self))
    saved = sketches.relations(_saved(imports, built), sketches.imports_of(_saved(imports, built)))
    assert saved is not None
    restored = saved.made()
    assert made == [] and restored.importers("pkg/sub/x.py") == built.importers("pkg/sub/x.py")
    assert restored.links_of("pkg/sub/y.py") == built.links_of("pkg/sub/y.py") and len(made) == 1
    assert _tables(restored) == _tables(built)
    edited = analyse_source("pkg/sub/x.py", b"from pkg.a import g\n").imports
    assert restored.update("pkg/sub/x.py", edited) == built.update("pkg/sub/x.py", edited)
    assert _tables(restored) == _tables(built)


def test_damaged_relations_are_not_taken() -> None:
    imports = {rel: analyse_source(rel, text.encode()).imports for rel, text in {**FILES, **MORE}.items()}
    good = _saved(imports, Relations(imports))
    assert sketches.relations(good, sketches.imports_of(good)) is not None
    names = good.relations["names"]
    for relations in ({}, {"importers": [], "names": names}, {**good.relations, "names": {"pkg/b.py": ["f"]}},
                      {**good.relations, "importers": {"pkg/b.py": "pkg/a.py"}},
                      {**good.relations, "importers": {"pkg/b.py": [["pkg/a.py"]]}},
                      {**good.relations, "importers": {"pkg/b.py": ["gone.py"]}},
                      {**good.relations, "names": {"pkg/b.py": {"f": [1]}}}):
        damaged = sketches.Saved(good.sketches, good.imports, relations)
        assert sketches.relations(damaged, sketches.imports_of(damaged)) is None, relations
    rows = {**good.imports, "d-pkg/a.py": [["pkg.b", ["f"], "1", 0, "", None, False]]}  # a file's imports
    assert sketches.relations(sketches.Saved(good.sketches, rows, good.relations), sketches.imports_of(
        sketches.Saved(good.sketches, rows, good.relations))) is None


@pytest.fixture
def built_from_every_file(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many files each `Relations` made from every file's imports (not from saved tables) had."""
    sizes: list[int] = []
    real = Relations.__init__

    def counted(self: Relations, imports: Any, saved: Any = None) -> None:
        if saved is None and imports:
            sizes.append(len(imports))
        real(self, imports, saved)
    monkeypatch.setattr(Relations, "__init__", counted)
    return sizes


def test_an_edit_run_makes_the_imports_of_few_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     built_from_every_file: list[int]) -> None:
    files = {**FILES, **MANY}
    root, cache = make_workspace(tmp_path / "ws", files), tmp_path / "cache"
    _generate(root, cache)
    made: list[SavedImports] = []
    real = SavedImports.made
    monkeypatch.setattr(SavedImports, "made", lambda self: made.append(self) or real(self))
    built_from_every_file.clear()
    (root / "pkg/leaf.py").write_text("def alone():\n    return 2\n")
    assert _generate(root, cache)["writtenPages"] == ["pkg/leaf.py_docs.md"]
    assert built_from_every_file == [] and 0 < len(made) < len(MANY)
    fresh = make_workspace(tmp_path / "fresh" / "ws", {rel: (root / rel).read_text() for rel in files})
    _generate(fresh, tmp_path / "fresh-cache")
    assert differences(tree(root / "docs"), tree(fresh / "docs")) == []


def test_an_edit_run_with_damaged_saved_relations_makes_them_from_every_file(
        tmp_path: Path, built_from_every_file: list[int]) -> None:
    root, cache = make_workspace(tmp_path / "ws", FILES), tmp_path / "cache"
    _generate(root, cache)
    path = sketches.sketches_path(_state(root, cache))
    saved = read_saved(path)
    some = next(iter(saved["relations"]["importers"]))
    for n, relations in enumerate([{**saved["relations"], "importers": {some: "pkg/a.py"}},
                                   {**saved["relations"], "names": {some: {"f": ["gone.py"]}}},
                                   {"importers": saved["relations"]["importers"]}]):
        write_saved(path, {**saved, "relations": relations})
        built_from_every_file.clear()
        (root / "pkg/leaf.py").write_text(f"def alone():\n    return {n + 2}\n")
        assert _generate(root, cache)["writtenPages"] == ["pkg/leaf.py_docs.md"]
        assert built_from_every_file == [len(FILES)], n
    assert differences(tree(root / "docs"), _fresh(root, tmp_path)) == []
