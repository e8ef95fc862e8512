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
    # epytext's markup (Twisted, Klein) as in the docstring's Markdown: it was left as `L{x}`
    assert first_sentence("This module, L{klein.resource}, serves\nC{resource()}.") == \
        "This module, ``klein.resource``, serves ``resource()``."


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
     "Gathers `A`, `B` from `.a` and every public name of `.b` into the package.", "its imports"),
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


def test_a_derived_line_features_the_most_used_name_then_one_named_like_the_file() -> None:
    source = ("def register_hook(f):\n    '''Register a hook.'''\n\nclass Helper:\n    '''A helper.'''\n\n"
              "class Module:\n    '''Base class for all modules.'''\n")
    facts = analyse_source("pkg/module.py", source.encode())
    used = file_purpose("pkg/module.py", facts, {"Module": 319, "register_hook": 2})
    assert used.text.startswith("Defines classes `Module`, `Helper` and function `register_hook`. "
                                "`Module`: Base class for all modules.")
    alike = file_purpose("pkg/module.py", facts)  # no use known: the one named like the file first
    assert alike.text.startswith("Defines classes `Module`, `Helper` and function")
    functions = file_purpose("pkg/module.py", facts, {"register_hook": 5, "Module": 1})
    assert functions.text.startswith("Defines function `register_hook` and classes `Module`, `Helper`. "
                                     "`register_hook`: Register a hook.")
    listed = analyse_source("pkg/m.py", b"__all__ = ['b', 'a']\ndef a():\n    '''A.'''\ndef b():\n    '''B.'''\n")
    assert file_purpose("pkg/m.py", listed, {"a": 3}).text == "Public API (`__all__`): `a`, `b`. `a`: A."


def test_a_leading_comment_block_speaks_for_a_file_without_a_docstring() -> None:
    source = ("#!/usr/bin/env python\n# mypy: allow-untyped-defs\n# Copyright (c) Someone. All rights reserved.\n"
              "\n# Helpers that build export graphs. Used by the exporter.\nimport os\n\ndef f(): pass\n")
    assert _purpose(source) == Purpose("Helpers that build export graphs. Used by the exporter.")
    assert _purpose("# mypy: x\nimport os\n# a later comment of many words here\ndef f(): pass\n").derived


APACHE_HEADER = """# Copyright 2024 The Authors. All rights reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
"""


def test_a_licence_header_is_not_a_file_s_description() -> None:
    # Apache's header has a line naming no licence ("Unless required by applicable law ..."): it was the
    # description of every such file without a docstring
    assert _purpose(APACHE_HEADER + "import os\n\ndef f(): pass\n").derived
    mit = ("# Permission is hereby granted, free of charge, to any person obtaining a copy\n"
           "# of this software and associated documentation files (the \"Software\"), to deal\n")
    assert _purpose(mit + "import os\n\ndef f(): pass\n").derived
    bsd = ("# Redistribution and use in source and binary forms, with or without\n"
           "# modification, are permitted provided that the following conditions are met:\n#\n"
           "# 1. Redistributions of source code must retain the above copyright notice, this\n"
           "#    list of conditions and the following disclaimer.\n")
    assert _purpose(bsd + "import os\n\ndef f(): pass\n").derived
    told = APACHE_HEADER + "\n# Helpers that build export graphs. Used by the exporter.\nimport os\n"
    assert _purpose(told) == Purpose("Helpers that build export graphs. Used by the exporter.")


def test_a_re_exporting_init_says_what_it_gathers_and_from_where() -> None:
    source = ("from torch.nn.parameter import Parameter, Buffer, UninitializedBuffer\n"
              "from torch.nn.modules import *\nfrom torch.nn import init\n\ndef factory_kwargs(kw): pass\n")
    p = _purpose(source, "torch/nn/__init__.py")
    assert p.text == ("Gathers `Parameter`, `Buffer`, `UninitializedBuffer` and 1 more from `torch.nn.parameter`, "
                      "`torch.nn` and every public name of `torch.nn.modules` into the package. "
                      "Also defines `factory_kwargs`.")


def test_readme_by_its_first_paragraph_and_rest_read_as_rest() -> None:
    readme = ('<p align="center"><img src="logo.svg"></p>\n\n[![CI](https://x/badge.svg)](https://x)\n\n'
              "# $ click_\n\nClick is a Python package for [command line](https://c) interfaces.\nIt is fun.\n")
    assert _purpose(readme, "README.md") == Purpose("Click is a Python package for command line interfaces. It is fun.")
    changes = ".. currentmodule:: click\n\nVersion 8.1.8\n-------------\n\nReleased 2024-12-19\n\n-   Fix a bug\n" \
        "    on multiple lines.\n"
    facts = analyse_source("CHANGES.rst", changes.encode())
    assert [s.name for s in facts.symbols] == ["Version 8.1.8"]
    assert file_purpose("CHANGES.rst", facts) == Purpose("A reStructuredText document titled `Version 8.1.8`.")
