"""The keyword index (`_kw.md`): the workspace's names, not the standard library's, no dunders, and
every definition of a name linked."""

from __future__ import annotations

from repodoc_lsp.analysis import analyse_source
from repodoc_lsp.analysis.relations import Relations
from repodoc_lsp.render.pages import Renderer, Site

LIB = '''import os
from collections import OrderedDict

import numpy as np

from . import util
from .util import helper


class A:
    def __init__(self):
        self.x = 1

    def forward(self):
        pass


class B:
    def __init__(self):
        self.y = 2

    def forward(self):
        pass


def __getattr__(name):
    return name
'''


def _kw(files: dict[str, str], rel: str) -> str:
    facts = {r: analyse_source(r, text.encode()) for r, text in files.items()}
    site = Site.build(project="p", root="/r", out="/r/docs", embed_max=0,
                      relations=Relations({r: f.imports for r, f in facts.items()}), facts=facts,
                      sizes={r: len(text.encode()) for r, text in files.items()}, folders=["", "pkg"])
    return Renderer().render(site, "kw", rel)


def test_the_keyword_index_lists_workspace_names_and_every_definition() -> None:
    kw = _kw({"pkg/__init__.py": "", "pkg/lib.py": LIB, "pkg/util.py": "def helper():\n    pass\n"}, "pkg/lib.py")
    # every definition of a name linked, each by its qualified name
    assert "- **`forward`**: [`A.forward`](lib.py_docs.md#method-A.forward), " \
           "[`B.forward`](lib.py_docs.md#method-B.forward)\n" in kw
    assert "- **`A`**: [docs](lib.py_docs.md#class-A)\n" in kw
    # no dunders, no standard-library modules or names, no relative module strings
    for noise in ("`__init__`", "`__getattr__`", "`os`", "`collections`", "`OrderedDict`", "`.`", "`.util`"):
        assert noise not in kw, noise
    imports = kw.split("### Imports\n", 1)[1].split("\n### ", 1)[0]
    assert "- **`pkg.util`**: [docs](lib.py_docs.md#import-.util)" in imports  # by its absolute name
    assert "`helper`" in imports and "`numpy`" not in imports
    third = kw.split("### Third-party Imports\n", 1)[1].split("\n## ", 1)[0]
    assert "- **`numpy`**: [docs](lib.py_docs.md#import-numpy)" in third
    assert "*2 standard-library imports are not listed here: see the page's " \
           "[Dependencies](lib.py_docs.md#dependencies).*" in kw
    assert "- **Third-party Imports** (1): [Dependencies](lib.py_docs.md#dependencies)" in kw


def test_a_file_importing_only_the_standard_library_says_so() -> None:
    kw = _kw({"pkg/m.py": "import os\nimport sys\n"}, "pkg/m.py")
    assert "No keywords: no classes or functions are defined in this file, and it imports only the " \
           "standard library." in kw
    assert "`os`" not in kw
