"""Part pages (`repodoc_lsp/render/parts.py`): a file whose class members and functions outgrow the page
budget keeps its page and gains `_docs.partN.md` pages beside it. Incremental equals fresh as the
file grows past the limit and shrinks back, with another file mentioning its members (the link's
page is part of what the graph says that file consulted), in-process as the server runs it (one
workspace, its graph updated) and through the CLI (the manifest and the pages are what one run
leaves for the next); no part page is left behind."""

from __future__ import annotations

import contextlib
import io
import re
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest
from edits import SETTINGS, big_class, differences, tree
from helpers import broken_links, make_workspace
from hypothesis.stateful import initialize, run_state_machine_as_test
from test_incremental import CliEdits

from repodoc_lsp import cli
from repodoc_lsp.config import load_settings
from repodoc_lsp.pipeline.generate import generate, regenerate
from repodoc_lsp.render import fit as page_views
from repodoc_lsp.render import parts as part_rule
from repodoc_lsp.render.pages import Renderer
from repodoc_lsp.store.workspace import Workspace

DOC = "Does one thing and says so at some length. " * 6


def big(methods: int) -> str:
    body = "".join(f'    def m{i}(self, x: int) -> int:\n        """{DOC}{i}."""\n        return x\n\n'
                   for i in range(methods))
    return f'"""Big."""\n\n\nclass Big:\n    """The big one."""\n\n{body}\ndef helper():\n    """Helps."""\n'


# it does not import big.py: only the graph's resolution of its mentions ties its page to big.py's
USER = ('"""User."""\n\n\ndef run() -> int:\n'
        '    """Uses :meth:`big.Big.m5` and :func:`big.helper`."""\n    return 1\n')


def _fresh(ws: Path, home: Path) -> dict[str, bytes]:
    copy = home / "fresh" / "ws"
    shutil.rmtree(copy.parent, ignore_errors=True)
    shutil.copytree(ws, copy, ignore=lambda folder, names: ["docs"] if Path(folder) == ws else [])
    with contextlib.redirect_stdout(io.StringIO()) as printed, contextlib.redirect_stderr(printed):
        assert cli.main(["generate", str(copy), "--no-cache", "--quiet"]) == 0, printed.getvalue()
    return tree(copy / "docs")


def _parts(out: Path) -> list[str]:
    return sorted(p.name for p in out.glob("*.part*.md"))


def test_a_file_growing_past_the_limit_and_back_in_process_equals_fresh(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", {"big.py": big(20), "user.py": USER})
    settings, _ = load_settings(root, {"cacheDir": str(tmp_path / "cache")})
    ws = Workspace(root, settings)
    generate(root, ws)
    assert _parts(ws.out) == []
    assert "](big.py_docs.md#method-Big.m5)" in (ws.out / "user.py_docs.md").read_text()

    (root / "big.py").write_text(big(160))
    summary = regenerate(ws, ["big.py"], Renderer())
    assert "user.py_docs.md" in summary.written  # its links now name the part pages
    assert _parts(ws.out) == ["big.py_docs.part2.md", "big.py_docs.part3.md"]
    user = (ws.out / "user.py_docs.md").read_text()
    # a class's members stay together (part 2), the functions follow (part 3)
    assert "](big.py_docs.part2.md#method-Big.m5)" in user
    assert "](big.py_docs.part3.md#function-helper)" in user
    assert differences(tree(ws.out), _fresh(root, tmp_path)) == []
    assert broken_links(ws.out) == []

    (root / "big.py").write_text(big(10))
    summary = regenerate(ws, ["big.py"], Renderer())
    assert _parts(ws.out) == []
    assert sorted(p for p in summary.removed if ".part" in p) == ["big.py_docs.part2.md", "big.py_docs.part3.md"]
    assert differences(tree(ws.out), _fresh(root, tmp_path)) == []


def test_a_member_moving_to_another_part_with_the_same_definitions_relinks_its_users(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only a docstring grows: the file defines the same names, but `B`'s members move from part 2
    to part 3, and the page whose docstring links to `B.m` must follow."""
    monkeypatch.setattr(part_rule, "SPLIT_AT", 120)
    monkeypatch.setattr(part_rule, "PART_BUDGET", 300)

    def two(doc: str) -> str:
        return f'class A:\n    def m(self):\n        """{doc}"""\n\n\nclass B:\n    def m(self):\n        pass\n'

    user_py = 'def run():\n    """Uses :meth:`two.B.m`."""\n'
    root = make_workspace(tmp_path / "ws", {"two.py": two("Short."), "user.py": user_py})
    ws = Workspace(root, load_settings(root, {"cacheDir": str(tmp_path / "cache")})[0])
    generate(root, ws)
    user = ws.out / "user.py_docs.part2.md"  # its function left the page too
    assert "](two.py_docs.part2.md#method-B.m)" in user.read_text()
    (root / "two.py").write_text(two("Long. " * 40))
    assert "user.py_docs.part2.md" in regenerate(ws, ["two.py"], Renderer()).written
    assert "](two.py_docs.part3.md#method-B.m)" in user.read_text()
    assert differences(tree(ws.out), _fresh(root, tmp_path)) == []


def test_a_file_growing_past_the_limit_and_back_through_the_cli_equals_fresh(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", {"big.py": big(20), "user.py": USER})
    cache = ["--cache-dir", str(tmp_path / "cache")]

    def generate_cli(*extra: str) -> int:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            return cli.main(["generate", str(root), "--quiet", *cache, *extra])

    for methods, parts in ((20, []), (160, ["big.py_docs.part2.md", "big.py_docs.part3.md"]), (10, [])):
        (root / "big.py").write_text(big(methods))
        assert generate_cli() == 0
        assert generate_cli("--check") == 0
        assert _parts(root / "docs") == parts
        assert differences(tree(root / "docs"), _fresh(root, tmp_path)) == []
    (root / "big.py").write_text(big(160))
    assert generate_cli() == 0
    (root / "docs" / "big.py_docs.part3.md").unlink()  # a part page gone: the page is made again
    assert generate_cli("--check") == 1
    assert generate_cli() == 0 and _parts(root / "docs") == ["big.py_docs.part2.md", "big.py_docs.part3.md"]


def test_random_edits_with_a_small_part_budget_equal_fresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The random edits of `test_incremental.py` with budgets so small that most pages have parts,
    and files move between one part, several and none as they are edited, renamed and deleted."""
    monkeypatch.setattr(part_rule, "SPLIT_AT", 120)
    monkeypatch.setattr(part_rule, "PART_BUDGET", 200)
    seen = _random_edits(tmp_path, lambda docs: (p.name for p in docs.rglob("*_docs.part*.md")))
    assert seen, "no page had parts: the budgets no longer make any"


def _random_edits(tmp_path: Path, pages: Callable[[Path], Iterable[str]]) -> list[str]:
    """Run the random edits of `test_incremental.py` (kept tree == fresh after each edit) and return
    what `pages` found in the output folder after each edit."""
    seen: list[str] = []

    class Run(CliEdits):
        base = tmp_path

        @initialize()
        def start_over_the_limit(self) -> None:
            """Every sequence has a page over the budgets from its start (random edits alone made
            none in some runs: `seen` stayed empty, about one run in 16 failed for it)."""
            self.edited(self.write("big.py", 'class K:\n    """K things."""\n\n\n' + big_class(2)))

        def after_edit(self, changed: list[str], folders: list[str]) -> None:
            super().after_edit(changed, folders)
            seen.extend(pages(self.ws / "docs"))

    run_state_machine_as_test(Run, settings=SETTINGS)
    return seen


def _lib_and_users(users: int) -> dict[str, str]:
    lib = '"""Lib."""\n\n\n' + "".join(f'class Thing{k}:\n    """Thing {k}."""\n\n\n' for k in range(4))
    uses = ('from lib import Thing0, Thing1, Thing2, Thing3\n\n\n'
            'def f():\n    return Thing0(), Thing1(), Thing2(), Thing3()\n')
    return {"lib.py": lib, **{f"pkg_{i % 7}/user_{i}.py": uses for i in range(users)}}


@pytest.mark.parametrize(("limit", "parts"), [(6_000, ["lib.py_docs.part2.md"]),
                                              (3_500, ["lib.py_docs.part2.md", "lib.py_docs.part3.md"])])
def test_a_page_whose_lists_pass_the_limit_has_a_part_of_lists_and_comes_back_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, limit: int, parts: list[str]) -> None:
    """No member leaves `lib.py`'s page, but what the graph says of its classes (Used by 30 files
    each) and its Imported by pass the limit: the complete lists go to a part page of lists, linked
    from each folded line (6,000 bytes); past that the class entries go to a part too, the page
    keeping a line per class with its anchor (3,500). Five users (none at 3,500) bring it back
    whole, as fresh."""
    monkeypatch.setattr(page_views, "PAGE_LIMIT", limit)
    root = make_workspace(tmp_path / "ws", _lib_and_users(30))
    ws = Workspace(root, load_settings(root, {"cacheDir": str(tmp_path / "cache")})[0])
    generate(root, ws)
    assert _parts(ws.out) == parts
    page = (ws.out / "lib.py_docs.md").read_text()
    lists = (ws.out / "lib.py_docs.part2.md").read_text()
    assert len(page.encode()) <= limit and '<a id="imported-by"></a>' in page
    assert "<details>" not in page and "All 30 importing files: on [lib.py_docs.part2.md]" \
        "(lib.py_docs.part2.md#list-imported-by)" in page
    imported_by = lists.split('<a id="list-imported-by"></a>', 1)[1]
    assert all(f"(pkg_{i % 7}/user_{i}.py_docs.md)" in imported_by for i in range(30))
    assert all(f'<a id="list-users-class-Thing{k}"></a>' in lists for k in range(4))
    for k in range(4):  # links from other pages land on the class's anchor, on the page
        assert f'<a id="class-Thing{k}"></a>' in page
    if limit < 6_000:
        entries = (ws.out / "lib.py_docs.part3.md").read_text()
        assert "- <a id=\"class-Thing3\"></a>`class Thing3` ([L16](../lib.py#L16)): its entry is on " \
            "[lib.py_docs.part3.md](lib.py_docs.part3.md#class-Thing3)" in page
        assert '<a id="class-Thing3"></a>\n#### `class Thing3`' in entries
    assert broken_links(ws.out) == []
    assert differences(tree(ws.out), _fresh(root, tmp_path)) == []

    gone = [f"pkg_{i % 7}/user_{i}.py" for i in range(30 if limit < 6_000 else 25)]
    for rel in gone:
        (root / rel).write_text("def f():\n    return 1\n")
    summary = regenerate(ws, gone, Renderer())
    assert _parts(ws.out) == [] and sorted(p for p in summary.removed if ".part" in p) == parts
    assert differences(tree(ws.out), _fresh(root, tmp_path)) == []


def test_a_name_first_named_by_a_class_whose_entry_left_is_linked_on_the_page(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A signature links a name the first time the page's signatures name it. When the entry of the
    class that named it first goes to a part (which links it there), the page's next signature
    naming it links it: the page is not left without a link to it."""
    monkeypatch.setattr(page_views, "PAGE_LIMIT", 2_500)
    doc = "Says a lot. " * 20
    body = "".join(f'    def m{i}(self, t: Thing) -> Thing:\n        """{doc}"""\n        return t\n\n'
                   for i in range(3))
    root = make_workspace(tmp_path / "ws", {
        "lib.py": '"""Lib."""\n\n\nclass Thing:\n    """Thing."""\n',
        "mod.py": '"""Mod."""\nfrom lib import Thing\n\n\nclass A:\n    """A."""\n\n    def a(self) -> int:\n'
                  f'        return 1\n\n\nclass B:\n    """B."""\n\n{body}\n\ndef f(t: Thing) -> Thing:\n'
                  '    """F."""\n    return t\n'})
    ws = Workspace(root, load_settings(root, {"cacheDir": str(tmp_path / "cache")})[0])
    generate(root, ws)
    page = (ws.out / "mod.py_docs.md").read_text()
    part = (ws.out / "mod.py_docs.part2.md").read_text()
    assert "its entry is on [mod.py_docs.part2.md]" in page
    link = "`[`Thing`](lib.py_docs.md#class-Thing)`"
    assert f"`m0(self, t: {link}) -> Thing`" in part and "`m1(self, t: Thing) -> Thing`" in part
    assert f"#### `def f(t: {link}) -> Thing`" in page
    assert broken_links(ws.out) == []


def test_random_edits_with_a_small_page_limit_equal_fresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The random edits with a page limit so small that pages over it once brief send their class
    entries to parts (a line per class staying on the page), as files are edited, renamed and
    deleted: which part holds what follows from the page's view, so incremental equals fresh."""
    monkeypatch.setattr(page_views, "PAGE_LIMIT", 2_000)
    seen = _random_edits(tmp_path, lambda docs: (p.name for p in docs.rglob("*_docs.md")
                                                 if "its entry is on [" in p.read_text(encoding="utf-8")))
    assert seen, "no class entry left a page: the limit no longer makes any"


def test_a_part_page_links_a_class_of_its_own_file_by_the_page_s_name(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A class's entry on a part page links its base and its subclass of the same file by the file
    page's name (`mod.py_docs.md#class-A`), where their anchors are: a bare `#class-A` would point
    into the part page, which does not hold it."""
    monkeypatch.setattr(page_views, "PAGE_LIMIT", 2_500)
    monkeypatch.setattr(page_views, "LISTS_BUDGET", 1_000)  # a part page of entries for each class
    doc = "Says a lot. " * 20
    body = "".join(f'    def m{i}(self) -> int:\n        """{doc}"""\n        return 1\n\n' for i in range(3))
    root = make_workspace(tmp_path / "ws", {
        "mod.py": '"""Mod."""\n\n\nclass A:\n    """A."""\n\n    def a(self) -> int:\n        return 1\n\n\n'
                  + "".join(f'class {c}(A):\n    """{c}."""\n\n{body}\n\n' for c in "BCDE")})
    ws = Workspace(root, load_settings(root, {"cacheDir": str(tmp_path / "cache")})[0])
    generate(root, ws)
    assert _parts(ws.out), "no part page: the test needs one"
    assert "(mod.py_docs.md#class-A)" in "".join(p.read_text() for p in ws.out.glob("mod.py_docs*.md"))
    for part in ws.out.glob("mod.py_docs.part*.md"):  # a fragment alone names an anchor of that very page
        text = part.read_text()
        assert [a for a in re.findall(r"\]\(#([^)\s]+)\)", text) if f'<a id="{a}"></a>' not in text] == [], part.name
    assert broken_links(ws.out) == []


def test_the_bound_adds_up_every_method_function_class_attribute_and_class_estimate() -> None:
    """`_bound`, written out, is the sum of the estimates it stands for (module attributes left
    out), and no less than what the lines of the local classes take."""
    from repodoc_lsp.analysis import analyse_source
    from repodoc_lsp.analysis.model import SymbolKind

    source = big(3) + 'X: int = 1\n\n\nclass A:\n    y: "str" = "v"\n    z = 2\n\n    class B:\n' \
        '        w = f(1)\n\n        def __init__(self):\n            self.q = 1\n\n\nasync def g(a, *b):\n    pass\n'
    facts = analyse_source("big.py", source.encode())
    assert {a.container for a in facts.attributes} == {"", "A", "A.B"}
    assert part_rule._bound(facts) == sum(
        part_rule._symbol_estimate(s) for s in facts.symbols if s.kind in (SymbolKind.METHOD, SymbolKind.FUNCTION)
    ) + sum(part_rule._attribute_estimate(a) for a in facts.attributes if a.container) + sum(
        part_rule._class_estimate(s) for s in facts.symbols if s.kind is SymbolKind.CLASS)
    local = analyse_source("t.py", b'def test():\n    class C(Base):\n        """Says.\n\n        More."""\n'
                           b'        x = 1\n\n        def m(self):\n            pass\n')
    (c,) = [s for s in local.symbols if s.kind is SymbolKind.CLASS]
    assert part_rule._bound(local) >= part_rule._local_estimate(c, [("attr-test.C.x", 0), ("method-test.C.m", 0)])


def test_editing_a_sub_package_docstring_updates_its_parent_index(tmp_path: Path) -> None:
    """A folder's index.md says what each sub-folder is for (its `__init__.py`'s docstring): saving
    that `__init__.py` re-renders the parent's index.md too, as a fresh run writes it."""
    root = make_workspace(tmp_path / "ws", {"pkg/__init__.py": '"""Old words."""\n', "pkg/a.py": "X = 1\n"})
    ws = Workspace(root, load_settings(root, {"cacheDir": str(tmp_path / "cache")})[0])
    generate(root, ws)
    assert "Old words." in (ws.out / "index.md").read_text()
    (root / "pkg/__init__.py").write_text('"""New words."""\n')
    regenerate(ws, ["pkg/__init__.py"], Renderer())
    assert "- [`pkg/`](pkg/index.md): 2 files. New words.\n" in (ws.out / "index.md").read_text()
    assert differences(tree(ws.out), _fresh(root, tmp_path)) == []
