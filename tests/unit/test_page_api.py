"""The API on file pages: attributes and fields (extracted with `ast`), module-level names, and
what the symbol graph adds (used by, subclassed by, inherited members), as a reader sees them."""

from __future__ import annotations

from pathlib import Path

from helpers import DOCS_SECTIONS, make_workspace, md_tokens, page_errors

from repodoc_lsp.analysis import analyse_source
from repodoc_lsp.config import Settings
from repodoc_lsp.pipeline.generate import plan_pages, site_of
from repodoc_lsp.render.file_sections import inherited_once as _inherited_once
from repodoc_lsp.render.pages import Renderer, gather_docs
from repodoc_lsp.store.workspace import Workspace

MODELS = '''"""Models."""
import enum
from dataclasses import dataclass, field
from typing import NamedTuple

LIMIT: int = 10
NAME = "models"
A, B = 1, 2
__all__ = ["Colour", "Point"]


class Colour(enum.Enum):
    RED = 1
    GREEN = 2


@dataclass(frozen=True)
class Point:
    x: int
    tags: list[str] = field(default_factory=list)


class Pair(NamedTuple):
    left: int
    right: int = 0


class Base:
    """A base."""

    kind: str = "base"

    def __init__(self, size):
        self.size = size
        self.kind = "set"
        if size:
            self.hidden = 1

    def run(self):
        pass

    def stop(self):
        pass

    def _private(self):
        pass
'''

USER = '''from models import Base, Point


class Child(Base):
    def run(self):
        return Point(1)


class GrandChild(Child):
    extra = 1


def make() -> Base:
    return Child(1)
'''


def test_attributes_are_extracted_with_types_defaults_and_where_they_are_set() -> None:
    facts = analyse_source("models.py", MODELS.encode())
    got = {(a.container, a.name): (a.annotation, a.value, a.instance) for a in facts.attributes}
    assert got[("", "LIMIT")] == ("int", "10", False)
    assert got[("", "NAME")] == ("", '"models"', False)
    assert got[("", "A")] == ("", "", False) and got[("", "B")] == ("", "", False)  # unpacked: no value
    assert got[("Colour", "RED")] == ("", "1", False)
    assert got[("Point", "tags")] == ("list[str]", "field(default_factory=list)", False)
    assert got[("Pair", "right")] == ("int", "0", False)
    assert got[("Base", "size")] == ("", "size", True)
    assert got[("Base", "hidden")] == ("", "1", True)  # under an `if` (`Linear.bias`): listed too


def test_two_definitions_of_one_name_are_anchored_in_line_order() -> None:
    source = ("import sys\nif sys.platform == 'win32':\n    class Impl:\n        pass\n"
              "else:\n    class Impl:\n        pass\n")
    facts = analyse_source("m.py", source.encode())
    assert [(s.line, s.anchor) for s in facts.symbols] == [(3, "class-Impl"), (6, "class-Impl-2")]


def _pages(tmp_path: Path) -> tuple[Workspace, dict[str, str]]:
    root = make_workspace(tmp_path / "ws", {"models.py": MODELS, "user.py": USER, "other.py": "import models\n"})
    ws = Workspace(root, Settings(), use_cache=False)
    ws.scan(jobs=1)
    site, renderer = site_of(ws), Renderer()
    return ws, {rel: renderer.file_docs(site, rel, ws.read_text(rel)) for rel in ("models.py", "user.py")}


def _entry(page: str, anchor: str) -> str:
    after = page.split(f'<a id="{anchor}"></a>\n', 1)[1]
    return after.split("\n#### ", 1)[0].split("\n### ", 1)[0].split("\n## ", 1)[0]


def test_class_entries_list_fields_members_and_attributes(tmp_path: Path) -> None:
    _ws, pages = _pages(tmp_path)
    page = pages["models.py"]
    assert page_errors(page, DOCS_SECTIONS) == []
    colour = _entry(page, "class-Colour")
    assert "**Members**" in colour and '<a id="attr-Colour.RED"></a>`RED = 1`' in colour
    point = _entry(page, "class-Point")
    assert "**Fields**" in point and "`tags: list[str] = field(default_factory=list)`" in point
    assert "**Fields**" in _entry(page, "class-Pair")
    base = _entry(page, "class-Base")
    assert "**Attributes**" in base
    assert '<a id="attr-Base.kind"></a>`kind: str = "base"`' in base  # the class body first
    assert '<a id="attr-Base.size"></a>`self.size = size`' in base and "in `__init__`" in base
    assert base.count("attr-Base.kind") == 1  # one entry per name
    names = page.split("### Module-level names", 1)[1].split("\n## ", 1)[0]
    assert '<a id="attr-LIMIT"></a>`LIMIT: int = 10`' in names and "`NAME = \"models\"`" in names
    assert "__all__" not in names and "attr-A" in names and "attr-B" in names


def test_used_by_subclassed_by_and_inherited_members_link_their_pages(tmp_path: Path) -> None:
    _ws, pages = _pages(tmp_path)
    base = _entry(pages["models.py"], "class-Base")
    assert "**Subclassed by** (1):\n\n- [`Child`](user.py_docs.md#class-Child) in `user.py`\n" in base
    # other.py names only the module; user.py names it on 3 lines (import, base, annotation)
    assert "**Used by** (1 file):\n\n- [user.py](user.py_docs.md) (3 lines)\n" in base
    assert "**Used by** (1 file" in _entry(pages["models.py"], "class-Point")
    grand = _entry(pages["user.py"], "class-GrandChild")
    inherited = grand.split("**Inherited from workspace classes**", 1)[1]
    # run comes from Child (it overrides Base's), stop and the attributes from Base; no private names;
    # one link per ancestor (its entry lists and links each member), the names as a comma list
    assert "- from [`Child`](user.py_docs.md#class-Child): `run`\n" in inherited
    child = _entry(pages["user.py"], "class-Child").split("**Inherited from workspace classes**", 1)[1]
    base_line = next(line for line in child.splitlines() if "from [`Base`]" in line)
    assert base_line.startswith("- from [`Base`](models.py_docs.md#class-Base) in `models.py`: ")
    assert {"`kind`", "`stop`", "`size`"} <= set(base_line.split(": ", 1)[1].split(", "))
    assert base_line.count("](") == 1
    assert "`run`" not in base_line and "_private" not in base_line and "__init__" not in base_line
    # GrandChild inherits the same three from Base: named again, shorter than a link to Child's list
    assert "listed for" not in inherited and "`stop`" in inherited
    assert page_errors(pages["user.py"], DOCS_SECTIONS) == []


def test_inherited_members_listed_once_per_page_where_that_is_shorter() -> None:
    def entry(members: list[str]) -> dict:
        return {"href": "base.py_docs.md#class-Base", "members": members, "redefined": [], "same": None}
    long = [f"member_with_a_long_name_{i}" for i in range(5)]
    xref = {f"class-{n}": {"inherited": [entry(long), entry(["a", "b"])]} for n in ("A", "B")}
    classes = analyse_source("pkg/m.py", b"class A:\n    pass\n\n\nclass B:\n    pass\n").symbols
    _inherited_once("pkg/m.py_docs.md", classes, xref)
    assert [h["same"] for h in xref["class-A"]["inherited"]] == [None, None]
    assert xref["class-B"]["inherited"][0]["same"] == {"text": "`A`", "href": "m.py_docs.md#class-A"}
    assert xref["class-B"]["inherited"][1]["same"] is None  # `a`, `b`: shorter than the link


def test_methods_are_used_by_the_files_naming_them_through_their_class(tmp_path: Path) -> None:
    other = ("import models\nfrom user import GrandChild\n\nmodels.Base.stop(None)\nGrandChild.stop\n"
             "GrandChild.run\nGrandChild(1).kind\n")
    root = make_workspace(tmp_path / "ws", {"models.py": MODELS, "user.py": USER, "other.py": other})
    ws = Workspace(root, Settings(), use_cache=False)
    ws.scan(jobs=1)
    site, renderer = site_of(ws), Renderer()
    models = renderer.file_docs(site, "models.py", ws.read_text("models.py"))
    methods = _entry(models, "class-Base").split("**Methods**", 1)[1].split("\n**Subclassed by**", 1)[0]
    # `models.Base.stop` and `GrandChild.stop` (inherited through Child): two lines of other.py
    stop = methods.split('<a id="method-Base.stop"></a>', 1)[1].split("\n- <a id=", 1)[0]
    assert "\n\n  **Used by** (1 file, through its class):\n\n  - [other.py](other.py_docs.md) (2 lines)\n" in stop
    assert methods.count("**Used by**") == 1  # Base.run: GrandChild.run is Child's
    # what is not counted, said once above the classes
    assert models.count("through its class (`Linear.forward`); calls on instances, `self` or `super()` are not") == 1
    user = renderer.file_docs(site, "user.py", ws.read_text("user.py"))
    run = _entry(user, "class-Child").split('<a id="method-Child.run"></a>', 1)[1]
    assert "  **Used by** (1 file, through its class)" in run and "  - [other.py](other.py_docs.md) (1 line)" in run
    assert page_errors(models, DOCS_SECTIONS) == [] and page_errors(user, DOCS_SECTIONS) == []


def test_names_in_signatures_link_to_their_entries(tmp_path: Path) -> None:
    sig = ('from typing import Literal\nfrom models import Base, Point\nimport models\n\n\nclass Box:\n'
           '    def put(self, item: "Point", other: models.Pair, size=Base) -> "Box":\n        pass\n\n\n'
           'def make(kind: Literal["Base"], n: int = 1) -> Base:\n    pass\n\n\n'
           'def again(a: Point, b: "models.Point") -> Box:\n    pass\n')
    root = make_workspace(tmp_path / "ws", {"models.py": MODELS, "sig.py": sig})
    ws = Workspace(root, Settings(), use_cache=False)
    ws.scan(jobs=1)
    page = Renderer().file_docs(site_of(ws), "sig.py", ws.read_text("sig.py"))
    # a code span holds no link: each linked name is a span of its own (its own page's entry by anchor)
    assert ('`put(self, item: "`[`Point`](models.py_docs.md#class-Point)`", other: `'
            '[`models.Pair`](models.py_docs.md#class-Pair)`, size=Base) -> "`[`Box`](#class-Box)`"`') in page
    assert ('#### `def make(kind: Literal["Base"], n: int = 1) -> `[`Base`](models.py_docs.md#class-Base)'
            ' ([L11](../sig.py#L11))\n') in page
    # each definition is linked once per page, where its first signature names it
    assert '#### `def again(a: Point, b: "models.Point") -> Box` ([L15](../sig.py#L15))\n' in page
    assert page_errors(page, DOCS_SECTIONS) == []
    tokens = md_tokens(page)
    heading = next(i for i, t in enumerate(tokens) if t.type == "heading_open" and t.tag == "h4"
                   and "make" in tokens[i + 1].content)
    spans = [t.content for t in tokens[heading + 1].children if t.type == "code_inline"]
    assert "".join(spans) == 'def make(kind: Literal["Base"], n: int = 1) -> Base'  # reads as written


def test_a_change_to_a_base_class_replans_the_pages_of_its_heirs(tmp_path: Path) -> None:
    ws, _ = _pages(tmp_path)
    before = {p.path: p.key for p in plan_pages(ws, site_of(ws))}
    (ws.root / "models.py").write_text(MODELS + "\n    def more(self):\n        pass\n")
    change = ws.update_file("models.py")
    planned = {p.path: p.key for p in plan_pages(ws, site_of(ws), change)}
    assert "user.py_docs.md" in planned and planned["user.py_docs.md"] != before["user.py_docs.md"]
    assert "other.py_docs.md" not in planned


def test_bases_are_linked_and_a_hierarchy_is_drawn_when_three_classes_are_related(tmp_path: Path) -> None:
    _ws, pages = _pages(tmp_path)
    design = pages["user.py"].split("## Architecture & Design", 1)[1].split("\n## ", 1)[0]
    assert "- `Child` derives from [`Base`](models.py_docs.md#class-Base)" in design
    assert "- `GrandChild` derives from [`Child`](user.py_docs.md#class-Child)" in design
    chart = design.split("```mermaid\n", 1)[1].split("```", 1)[0]
    assert chart.splitlines() == ["flowchart BT", '  n0["Child"]', '  n1["Base (models.py)"]', '  n2["GrandChild"]',
                                  "  n0 --> n1", "  n2 --> n0"]
    # one class deriving from one workspace class: no diagram
    assert "```mermaid" not in pages["models.py"]


def test_a_large_hierarchy_is_capped_and_says_what_was_left_out(tmp_path: Path) -> None:
    classes = "".join(f"class C{i}(Root):\n    pass\n\n\n" for i in range(30))
    root = make_workspace(tmp_path / "ws", {"m.py": "class Root:\n    pass\n\n\n" + classes})
    ws = Workspace(root, Settings(), use_cache=False)
    ws.scan(jobs=1)
    page = Renderer().file_docs(site_of(ws), "m.py", ws.read_text("m.py"))
    chart = page.split("```mermaid\n", 1)[1].split("```", 1)[0]
    assert sum(1 for line in chart.splitlines() if line.endswith('"]')) == 20
    assert "(20 classes; 11 more links to further classes left out;" in page
    assert page_errors(page, DOCS_SECTIONS) == []


def test_a_long_used_by_list_shows_twenty_and_folds_the_rest(tmp_path: Path) -> None:
    files = {"lib.py": "def f():\n    pass\n"}
    files.update({f"app/u{i:02}.py": "from lib import f\n" + "f()\n" * (i % 3) for i in range(25)})
    root = make_workspace(tmp_path / "ws", files)
    ws = Workspace(root, Settings(), use_cache=False)
    ws.scan(jobs=1)
    page = Renderer().file_docs(site_of(ws), "lib.py", ws.read_text("lib.py"))
    used = page.split("**Used by** (25 files, most lines first):", 1)[1].split("\n## ", 1)[0]
    shown = used.split("<details>", 1)[0]
    assert shown.count("\n- [") == 20 and shown.index("(3 lines)") < shown.index("(1 line)")
    folded = used.split("<details>", 1)[1]
    assert all(f"[u{i:02}.py](app/u{i:02}.py_docs.md)" in folded for i in range(25))
    assert page_errors(page, DOCS_SECTIONS) == []


def test_names_in_docstrings_link_to_their_entries_and_follow_changes(tmp_path: Path) -> None:
    files = {"pkg/__init__.py": "from .core import Thing\n",
             "pkg/core.py": "class Thing:\n    def go(self):\n        pass\n",
             "app.py": ('"""App."""\n\n\ndef run():\n    """Runs a :class:`~pkg.Thing` (see ``pkg.core.Thing.go``,\n'
                        '    `pkg.nothing`, `os.path`).\n\n    ```\n    `pkg.Thing` in a fence\n    ```\n    """\n')}
    root = make_workspace(tmp_path / "ws", files)
    ws = Workspace(root, Settings(), use_cache=False)
    ws.scan(jobs=1)
    page = Renderer().file_docs(site_of(ws), "app.py", ws.read_text("app.py"))
    assert "[``pkg.Thing``](pkg/core.py_docs.md#class-Thing)" in page
    assert "[``pkg.core.Thing.go``](pkg/core.py_docs.md#method-Thing.go)" in page
    assert "`pkg.nothing`" in page and "[`pkg.nothing`]" not in page and "[`os.path`]" not in page
    assert "`pkg.Thing` in a fence" in page  # fenced code is left alone
    assert page_errors(page, DOCS_SECTIONS) == []
    # Thing becomes a function: app.py's page is planned again and links the new anchor
    (root / "pkg/core.py").write_text("def Thing():\n    pass\n")
    change = ws.update_file("pkg/core.py")
    assert "app.py" in change.xref
    page = Renderer().file_docs(site_of(ws), "app.py", ws.read_text("app.py"))
    assert "[``pkg.Thing``](pkg/core.py_docs.md#function-Thing)" in page and "Thing.go``]" not in page


def test_code_spans_become_links_outside_fences_only() -> None:
    from repodoc_lsp.render.markdown import link_code_spans

    links = {"a.B": "a.py_docs.md#class-B"}
    text = "See `a.B` and ``a.B`` and [`a.B`](x) and \\`a.B\\`.\n\n````\n`a.B`\n```\n`a.B`\n````\n`a.B`"
    assert link_code_spans(text, links).split("\n") == [
        "See [`a.B`](a.py_docs.md#class-B) and [``a.B``](a.py_docs.md#class-B) and [`a.B`](x) and \\`a.B\\`.",
        "", "````", "`a.B`", "```", "`a.B`", "````", "[`a.B`](a.py_docs.md#class-B)"]


def test_long_member_lists_fold_past_20_and_long_inherited_lists_name_what_is_left_out(tmp_path: Path) -> None:
    big = "class Big:\n" + "".join(f"    a{i} = {i}\n" for i in range(25)) \
        + "".join(f"    def m{i}(self):\n        pass\n" for i in range(24))
    small = "from big import Big\n\n\nclass Small(Big):\n" + "".join(
        f"    def m{i}(self):\n        pass\n" for i in (0, 1))
    root = make_workspace(tmp_path / "ws", {"big.py": big, "small.py": small})
    ws = Workspace(root, Settings(), use_cache=False)
    ws.scan(jobs=1)
    site, renderer = site_of(ws), Renderer()
    big_page = renderer.file_docs(site, "big.py", ws.read_text("big.py"))
    entry = _entry(big_page, "class-Big")
    assert "**Attributes** (25)\n" in entry and "**Methods** (24)\n" in entry
    shown, folded = entry.split("<details><summary>5 more attributes</summary>", 1)
    assert shown.count('<a id="attr-Big.') == 20 and folded.split("</details>", 1)[0].count('<a id="attr-Big.') == 5
    assert "<details><summary>4 more methods</summary>" in entry
    assert all(big_page.count(f'<a id="method-Big.m{i}"></a>') == 1 for i in range(24))
    assert page_errors(big_page, DOCS_SECTIONS) == []
    inherited = _entry(renderer.file_docs(site, "small.py", ws.read_text("small.py")), "class-Small")
    # 47 of Big's 49 public members reach Small: named by what is left out, with one link
    assert ("- from [`Big`](big.py_docs.md#class-Big) in `big.py`: 47 of its 49 public members, "
            "all but `m0`, `m1` (redefined)\n") in inherited


def test_used_by_names_a_file_of_the_pages_folder_by_its_name(tmp_path: Path) -> None:
    files = {"pkg/lib.py": "def f():\n    pass\n", "pkg/near.py": "from pkg.lib import f\n\nf()\n",
             "far.py": "from pkg.lib import f\n"}
    root = make_workspace(tmp_path / "ws", files)
    ws = Workspace(root, Settings(), use_cache=False)
    ws.scan(jobs=1)
    page = Renderer().file_docs(site_of(ws), "pkg/lib.py", ws.read_text("pkg/lib.py"))
    used = page.split("**Used by** (2 files, most lines first):\n\n", 1)[1]
    assert used.startswith("- [near.py](near.py_docs.md) (2 lines)\n- [far.py](../far.py_docs.md) (1 line)\n")


def test_gathered_bases_inherited_members_and_module_files_of_mixed_classes(tmp_path: Path) -> None:
    """A class's bases as written map to the workspace classes they name, whether every base text
    names one (taken from the graph's bases in order) or some name none (`Generic[T]`, `metaclass=`);
    inherited members leave out and list as redefined what the class or a nearer ancestor defines;
    an import of a module that holds no modules looks up none of its names as one."""
    mixed = ('from typing import Generic, TypeVar\nimport models\nfrom models import Base\nfrom user import Child\n'
             'from pkg import sub, thing\nT = TypeVar("T")\n\n\n'
             'class Meta(type):\n    pass\n\n\n'
             'class Both(Child, models.Base):\n    def stop(self):\n        pass\n\n\n'
             'class Some(Generic[T], Base, metaclass=Meta):\n    pass\n')
    root = make_workspace(tmp_path / "ws", {"models.py": MODELS, "user.py": USER, "mixed.py": mixed,
                                            "pkg/__init__.py": "thing = 1\n", "pkg/sub.py": "y = 2\n"})
    ws = Workspace(root, Settings(), use_cache=False)
    ws.scan(jobs=1)
    inputs = gather_docs(site_of(ws), "mixed.py")
    xref = inputs["xref"]
    assert xref["class-Both"]["bases"] == {"Child": ("user.py", "Child", "class-Child"),
                                           "models.Base": ("models.py", "Base", "class-Base")}
    assert xref["class-Some"]["bases"] == {"Base": ("models.py", "Base", "class-Base")}
    # Both: run from Child (Child's own), stop redefined by Both, kind/size/... from Base
    child, base = xref["class-Both"]["inherited"]
    assert child[:2] == ("user.py", "Child") and child[3] == ["run"] and child[4] == []
    assert base[:2] == ("models.py", "Base") and "run" not in base[3] and "stop" not in base[3]
    assert base[4] == ["run", "stop"]
    assert [entry[:2] for entry in xref["class-Some"]["inherited"]] == [("models.py", "Base")]
    assert inputs["modules"] == {"models": "models.py", "user": "user.py", "pkg": "pkg/__init__.py",
                                 "pkg.sub": "pkg/sub.py"}
