"""The file page as a CommonMark reader sees it: methods under their own class, full method docs."""

from __future__ import annotations

from helpers import DOCS_SECTIONS, page_errors

from repodoc_lsp.analysis import analyse_source
from repodoc_lsp.analysis.relations import Relations
from repodoc_lsp.render.pages import Renderer, Site


def _docs_page(source: str) -> str:
    facts = analyse_source("m.py", source.encode())
    site = Site.build(project="p", root="/r", out="/r/docs", embed_max=10**6,
                      relations=Relations({"m.py": facts.imports}), facts={"m.py": facts},
                      sizes={"m.py": len(source)}, folders=[""])
    return Renderer().file_docs(site, "m.py", source)


def test_two_classes_of_one_name_keep_their_own_methods() -> None:
    source = ("import sys\nif sys.platform == 'win32':\n    class Impl:\n        def win(self): ...\n"
              "        def both(self): ...\nelse:\n    class Impl:\n        def posix(self): ...\n"
              "        def both(self): ...\n")
    page = _docs_page(source)
    first, second = page.split("#### `class Impl`")[1:3]
    assert [m for m in ("win", "posix") if f"`{m}(self)`" in first.split("\n#### ")[0]] == ["win"]
    assert [m for m in ("win", "posix") if f"`{m}(self)`" in second.split("\n#### ")[0]] == ["posix"]
    assert page_errors(page, DOCS_SECTIONS) == []


def test_methods_show_their_whole_docstring() -> None:
    source = ('class A:\n    def m(self, x):\n        """Do it.\n\n        Args:\n            x (int): how much.\n\n'
              '        Returns:\n            int: done.\n\n        .. note::\n            Slow.\n        """\n')
    page = _docs_page(source)
    method = page.split('<a id="method-A.m"></a>', 1)[1].split("\n## ", 1)[0]
    for text in ("Do it.", "- `x` (`int`): how much.", "**Returns**: `int`: done.", "**Note**", "Slow."):
        assert text in method, text
    assert page_errors(page, DOCS_SECTIONS) == []


def test_an_import_of_submodules_links_the_package_and_each_submodule() -> None:
    """`from pkg import a, b`: `pkg` links to the package's page, `a` and `b` to their own; a name that
    is not a module stays text (it was: `pkg` linked to `a`'s page, the first file the import names)."""
    sources = {"pkg/__init__.py": "A = 1\n", "pkg/a.py": "def f(): ...\n", "pkg/b.py": "B = 1\n",
               "m.py": "from pkg import a, b\nfrom pkg.a import f\nfrom ns import c\n", "ns/c.py": "C = 1\n"}
    facts = {rel: analyse_source(rel.rsplit("/", 1)[-1], text.encode()) for rel, text in sources.items()}
    site = Site.build(project="p", root="/r", out="/r/docs", embed_max=10**6,
                      relations=Relations({rel: f.imports for rel, f in facts.items()}), facts=facts,
                      sizes={rel: len(text) for rel, text in sources.items()}, folders=["", "pkg", "ns"])
    deps = Renderer().file_docs(site, "m.py", sources["m.py"]).split("### This workspace", 1)[1].split("\n#", 1)[0]
    assert "[`pkg`](pkg/__init__.py_docs.md) ([L1](" in deps
    assert ": [`a`](pkg/a.py_docs.md), [`b`](pkg/b.py_docs.md)\n" in deps
    assert "[`pkg.a`](pkg/a.py_docs.md) ([L2](" in deps and ": `f`\n" in deps
    # a namespace package has no page of its own: its submodule is linked, and it is found
    assert "- <a id=" in deps and "`ns` ([L3](" in deps and ": [`c`](ns/c.py_docs.md)\n" in deps
    assert "not found" not in deps
