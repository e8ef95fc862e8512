"""Purpose lines: the module docstring's first sentence, else a line derived from the file's own
facts that says where it came from, and only names the file really has."""

from __future__ import annotations

import re

import pytest
from helpers import contained_errors

from repodoc_lsp.analysis import analyse_source
from repodoc_lsp.render.purpose import Purpose, file_purpose, first_sentence


def _purpose(source: str, rel: str = "pkg/m.py") -> Purpose:
    return file_purpose(rel, analyse_source(rel, source.encode()))


def test_the_module_docstring_speaks_first() -> None:
    p = _purpose('"""Tensors on the GPU.\n\nMore detail here."""\nclass A:\n    """An A."""\n')
    assert p == Purpose("Tensors on the GPU.")
    assert not p.derived


def test_a_long_first_paragraph_is_cut_to_its_first_sentence() -> None:
    doc = "Load a :class:`torch.nn.Module` from disk. " + "It reads the file in chunks and checks it. " * 5
    assert first_sentence(doc) == "Load a ``torch.nn.Module`` from disk."
    assert first_sentence("word " * 200).endswith(" …") and len(first_sentence("word " * 200)) <= 242
    assert first_sentence("A\nwrapped\n  line.\n\nSecond paragraph.") == "A wrapped line."


def test_all_and_the_docstring_of_its_first_documented_name() -> None:
    p = _purpose('__all__ = ["f", "Linear", "g", "h"]\ndef f(): pass\nclass Linear:\n    """Applies y = xA + b."""\n'
                 "def g(): pass\ndef h(): pass\n")
    assert p.text == "Public API (`__all__`): `f`, `Linear`, `g` and 1 more. `Linear`: Applies y = xA + b."
    assert p.origin == "`__all__` and the docstring of `Linear`"


def test_definitions_public_first_and_a_documented_class_speaks() -> None:
    p = _purpose('def helper():\n    """Help."""\nclass _Hidden: pass\nclass Shape:\n    """A shape."""\n'
                 "class Circle(Shape): pass\nclass Square(Shape): pass\nclass Line(Shape): pass\n")
    assert p.text == "Defines classes `Shape`, `Circle`, `Square` and 1 more and function `helper`. `Shape`: A shape."
    assert p.origin == "its definitions and the docstring of `Shape`"


def test_only_private_definitions_are_named_when_nothing_is_public() -> None:
    assert _purpose("def _a(): pass\n").text == "Defines function `_a`."


@pytest.mark.parametrize(("rel", "source", "text", "origin"), [
    ("pkg/c.py", "X = 1\nY: int = 2\n", "Sets module-level names `X`, `Y`; defines no class or function.",
     "its assignments"),
    ("pkg/__init__.py", "from .a import A, B\nfrom .b import *\n",
     "Gathers `A`, `B` from `.a`, `.b` into the package.", "its imports"),
    ("pkg/s.py", "import os\nimport sys\n", "Imports `os`, `sys`; defines nothing.", "its imports"),
    ("pkg/__init__.py", "", "An empty `__init__.py`: it makes `pkg` a package.", "its contents"),
    ("pkg/e.py", "", "An empty file.", "its contents"),
    ("pkg/p.py", "print('hi')\n", "1 line with no definitions, assignments or imports.", "its contents"),
    ("notes.md", "# Notes\n\ntext\n", "A Markdown document titled `Notes`.", ""),
])
def test_what_little_a_file_holds(rel: str, source: str, text: str, origin: str) -> None:
    assert _purpose(source, rel) == Purpose(text, origin)


@pytest.mark.parametrize("source", [
    '"""# Not a heading <script>x</script>\n\n```"""\n',
    'class A:\n    """</details> `unclosed [link](x) <b>"""\n',
    '__all__ = ["a`b", "<i>"]\n',
])
def test_a_purpose_line_is_inert_markdown(source: str) -> None:
    p = _purpose(source)
    assert "\n" not in p.text and contained_errors(p.text) == []


def test_a_derived_line_names_only_what_the_file_defines() -> None:
    source = "import torch\nclass Net(torch.nn.Module):\n    def forward(self, x): ...\ndef build(): ...\n"
    p = _purpose(source)
    named = set(re.findall(r"`([^`]+)`", p.text))
    assert named == {"Net", "build"} and p.derived
