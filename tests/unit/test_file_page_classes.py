"""Classes on a file page: a metaclass is not a base, a class's attributes are one block, overloads
are one entry."""

from __future__ import annotations

import re

from repodoc_lsp.analysis import analyse_source
from repodoc_lsp.analysis.relations import Relations
from repodoc_lsp.render.pages import Renderer, Site


def _site(files: dict[str, str]) -> Site:
    facts = {r: analyse_source(r, text.encode()) for r, text in files.items()}
    return Site.build(project="p", root="/r", out="/r/docs", embed_max=0,
                      relations=Relations({r: f.imports for r, f in facts.items()}), facts=facts,
                      sizes={r: len(text.encode()) for r, text in files.items()}, folders=[""])


def _page(files: dict[str, str], rel: str) -> str:
    return Renderer().render(_site(files), "docs", rel, None)


def test_a_metaclass_is_shown_as_a_metaclass_not_a_base() -> None:
    source = ("import abc\n\n\nclass Meta(type):\n    pass\n\n\nclass Plain(metaclass=Meta):\n    pass\n\n\n"
              "class Both(Plain, abc.ABC, metaclass=abc.ABCMeta):\n    pass\n\n\n"
              "class Row(dict, total=False):\n    pass\n")
    hierarchy = _page({"m.py": source}, "m.py").split("### Class hierarchy\n", 1)[1].split("\n## ", 1)[0]
    assert "- `Plain` has the metaclass `Meta`\n" in hierarchy
    assert "- `Both` derives from `Plain`, `abc.ABC`; its metaclass is `abc.ABCMeta`\n" in hierarchy
    assert "- `Row` derives from `dict`\n" in hierarchy  # a class keyword is not a base either
    assert "metaclass=" not in hierarchy


POINT = '''class Point:
    """A point.

    Attributes:
        x (int): The x coordinate.
        label: What it is called.

    Note:
        Immutable.
    """

    origin = None

    def __init__(self, x):
        self.x = x
'''


def test_a_class_s_documented_attributes_and_its_analysed_ones_are_one_block() -> None:
    page = _page({"m.py": POINT}, "m.py")
    entry = page.split('<a id="class-Point"></a>', 1)[1].split("\n## ", 1)[0]
    assert entry.count("**Attributes**") == 1
    assert "A point.\n\n**Note**\n\nImmutable." in entry  # the rest of the docstring stays
    assert '- <a id="attr-Point.x"></a>`self.x = x` ([L15](../m.py#L15)), in `__init__`: The x coordinate.\n' in entry
    assert '- <a id="attr-Point.origin"></a>`origin = None` ([L12](../m.py#L12))\n' in entry
    # documented only: listed after them, unanchored
    assert re.search(r"^- `label(: \w+)?`: What it is called\.$", entry, re.M)


OVERLOADED = '''from typing import overload
from typing import overload as _overload


@overload
def f(x: int) -> int: ...
@overload
def f(x: str) -> str: ...
def f(x):
    """Echo it back."""
    return x


class C:
    @_overload
    def m(self, x: int) -> int: ...
    @_overload
    def m(self, x: str) -> str: ...
    def m(self, x):
        return x
'''


def test_overloads_are_one_entry_with_their_users_once() -> None:
    files = {"m.py": OVERLOADED, "u.py": "from m import f, C\n\nf(1)\nC().m(2)\n"}
    site = _site(files)
    from concurrent.futures import Future

    from repodoc_lsp.knowledge.graph import Graph
    from repodoc_lsp.render.parts import definition_parts
    done: Future[Graph] = Future()
    done.set_result(Graph(site.relations, site.facts.items(), parts=definition_parts))
    site.symbols = done
    page = Renderer().render(site, "docs", "m.py", None)
    functions = page.split("### Functions\n", 1)[1].split("\n## ", 1)[0]
    assert functions.count("\n#### ") == 1 and "#### `def f(x)` ([L9]" in functions
    # every definition's anchor on the one heading, the name's own (other pages link it) last
    assert '<a id="function-f-3"></a><a id="function-f-2"></a><a id="function-f"></a>\n#### `def f(x)`' in functions
    assert "**Overloads**\n\n- `def f(x: int) -> int` ([L6]" in functions
    assert functions.count("**Used by**") == 1 and "Echo it back." in functions
    methods = page.split('<a id="class-C"></a>', 1)[1].split("### Functions", 1)[0]
    assert methods.count("\n- <a id=") == 1  # one method bullet, its overloads under it
    assert '- <a id="method-C.m-3"></a><a id="method-C.m-2"></a><a id="method-C.m"></a>`m(self, x)`' in methods
    assert "  - overload `m(self, x: int) -> int`" in methods
    doc = Renderer().render(site, "doc", "")
    assert doc.count("[`f`](m.py_docs.md#function-f) in `m.py`") == 1
    assert "[`f`](m.py_docs.md#function-f) in `m.py` (used by 1 file): Echo it back." in doc
