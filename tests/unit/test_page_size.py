"""A file page stays under PAGE_LIMIT by leaving its source out (and saying so), never by cutting
the analysis; a source that fits is embedded folded, with its size in the summary."""

from __future__ import annotations

from pathlib import Path

from helpers import DOCS_SECTIONS, make_workspace, page_errors

from repodoc_lsp.analysis import analyse_source
from repodoc_lsp.analysis.relations import Relations
from repodoc_lsp.config import Settings
from repodoc_lsp.pipeline.generate import site_of
from repodoc_lsp.render.pages import PAGE_LIMIT, Renderer, Site, gather_docs, where_of
from repodoc_lsp.store.workspace import Workspace


def _page(source: str) -> str:
    facts = analyse_source("m.py", source.encode())
    site = Site.build(project="p", root="/r", out="/r/docs", embed_max=10**6,
                      relations=Relations({"m.py": facts.imports}), facts={"m.py": facts},
                      sizes={"m.py": len(source.encode())}, folders=[""])
    return Renderer().file_docs(site, "m.py", source)


def test_a_source_that_fits_is_folded_with_its_size() -> None:
    source = "x = 1\n" * 5000  # 30,000 bytes
    page = _page(source)
    assert "<details><summary>Source: 5,000 lines, 29.3 KB</summary>\n\n```python\nx = 1\n" in page
    assert len(page.encode()) <= PAGE_LIMIT and page_errors(page, DOCS_SECTIONS) == []


def test_a_source_that_would_pass_the_limit_is_left_out_and_the_page_says_so() -> None:
    source = "# padding\n" * 11_000  # 110,000 bytes
    page = _page(source)
    assert len(page.encode()) <= PAGE_LIMIT and "# padding" not in page
    original = page.split("## Original Source", 1)[1].split("\n## ", 1)[0]
    assert "Not embedded: with it this page would be 10" in original
    assert "over the 100,000 bytes a page may take. [Open m.py](../m.py) (11,000 lines, 107.4 KB)." in original
    assert page_errors(page, DOCS_SECTIONS) == []


def test_a_page_whose_analysis_alone_is_too_long_says_how_long() -> None:
    source = "".join(f'def f{i}():\n    """{"Doc. " * 30}"""\n' for i in range(800))
    page = _page(source)
    original = page.split("## Original Source", 1)[1].split("\n## ", 1)[0]
    assert "(its analysis alone takes " in original and "def f0" not in original


def test_a_page_over_the_limit_sends_entries_to_parts_with_their_docstrings_whole() -> None:
    """400 documented functions: on part pages beside the page (past `parts.SPLIT_AT`), each docstring
    whole (a part holds it), every anchor kept, nothing brief."""
    source = "".join(f'def f{i}():\n    """Summary {i}.\n\n    {"More words. " * 20}\n    """\n' for i in range(400))
    facts = analyse_source("m.py", source.encode())
    site = Site.build(project="p", root="/r", out="/r/docs", embed_max=10**6,
                      relations=Relations({"m.py": facts.imports}), facts={"m.py": facts},
                      sizes={"m.py": len(source.encode())}, folders=[""])
    pages = dict(Renderer().render_pages(where_of(site), "docs", "m.py", gather_docs(site, "m.py"), site.facts,
                                         source))
    page = pages.pop("m.py_docs.md")
    assert pages and all(len(p.encode()) <= PAGE_LIMIT for p in (page, *pages.values()))
    assert page_errors(page, DOCS_SECTIONS) == []
    parts = "".join(pages.values())
    assert "Shortened" not in page + parts and "more lines" not in parts
    assert parts.count("More words. " * 19 + "More words.") == 400
    assert all(f'<a id="function-f{i}"></a>' in parts for i in range(400))


def test_whole_class_entries_go_to_parts_before_any_docstring_is_cut(tmp_path: Path) -> None:
    """A page of 40 classes with long docstrings, one used by 30 files: the complete Used by list and
    the last classes' entries go to part pages, each docstring whole; nothing is shortened."""
    classes = "".join(f'class C{i:02}:\n    """Class {i} does things.\n\n    {"It does them well. " * 150}\n    """\n\n'
                      for i in range(40))
    files = {"m.py": classes, **{f"u/user_with_a_long_name_{i:02}.py": "from m import C00\nC00()\n" for i in range(30)}}
    pages = _pages_of(tmp_path, files, "m.py")
    page = pages.pop("m.py_docs.md")
    assert pages and all(len(p.encode()) <= PAGE_LIMIT for p in (page, *pages.values()))
    everything = page + "".join(pages.values())
    assert "more lines" not in everything and "docstrings show their first" not in everything
    assert "so lists longer than 20 show their count and breakdown, each with a link to the complete list; " \
        "docstrings are whole." in page
    assert everything.count("It does them well. " * 149 + "It does them well.") == 40
    assert "): its entry is on [m.py_docs.part3.md](m.py_docs.part3.md#class-C39)" in page  # a line stays
    assert "All 30 files: on [m.py_docs.part2.md](m.py_docs.part2.md#list-users-class-C00)." in page
    assert page_errors(page, DOCS_SECTIONS) == []

def _pages_of(tmp_path: Path, files: dict[str, str], rel: str) -> dict[str, str]:
    """The page of `rel` and its parts, in a workspace of `files` (its symbol graph built)."""
    ws = Workspace(make_workspace(tmp_path / "ws", files), Settings(), use_cache=False)
    ws.scan(jobs=1)
    site = site_of(ws)
    return dict(Renderer().render_pages(where_of(site), "docs", rel, gather_docs(site, rel), site.facts,
                                        ws.read_text(rel)))


def _swallowed_labels(text: str) -> list[str]:
    """Lines starting with a bold label that CommonMark does not read as a top-level paragraph's
    first line (it lands in the list item above, or continues a paragraph)."""
    from markdown_it import MarkdownIt

    starts: set[int] = set()
    in_para: set[int] = set()
    depth = 0
    for t in MarkdownIt("commonmark").parse(text):
        depth += t.type in ("bullet_list_open", "ordered_list_open")
        depth -= t.type in ("bullet_list_close", "ordered_list_close")
        if t.type == "paragraph_open" and t.map:
            if depth == 0:
                starts.add(t.map[0])
            in_para.update(range(*t.map))
    return [line for i, line in enumerate(text.split("\n"))
            if line.startswith("**") and i in in_para and i not in starts]


def test_labels_after_a_members_line_on_a_page_with_parts_start_their_own_paragraph(tmp_path: Path) -> None:
    """A class whose members went to a part page: its `- **Members**` line, then Inherited, Subclassed
    by and Used by, each a label of its own, not swallowed by the bullet above."""
    body = "".join(f'    def m{i}(self):\n        """Method {i}. {"Words. " * 30}"""\n' for i in range(300))
    files = {"m.py": f"class Base:\n    def base_method(self): pass\n\nclass Big(Base):\n{body}",
             "sub.py": "from m import Big\nclass Sub(Big): pass\n", "use.py": "from m import Big\nBig()\n"}
    page = _pages_of(tmp_path, files, "m.py")["m.py_docs.md"]
    assert "- **Members**: 301 methods on" in page or "- **Members**: 300 methods on" in page
    assert "**Used by** (" in page and "**Subclassed by** (" in page
    assert _swallowed_labels(page) == []
