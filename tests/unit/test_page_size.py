"""A file page stays under PAGE_LIMIT by leaving its source out (and saying so), never by cutting
the analysis; a source that fits is embedded folded, with its size in the summary."""

from __future__ import annotations

from helpers import DOCS_SECTIONS, page_errors

from repodoc_lsp.analysis import analyse_source
from repodoc_lsp.analysis.relations import Relations
from repodoc_lsp.render import Renderer, Site
from repodoc_lsp.render.pages import PAGE_LIMIT, gather_docs, where_of


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


def test_a_page_over_the_limit_shortens_docstrings_keeps_every_anchor_and_says_so() -> None:
    """400 documented functions: brief, and (past `parts.SPLIT_AT`) on part pages beside the page."""
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
    analysis = page.split("## Detailed Analysis", 1)[1].split("\n## ", 1)[0]
    assert analysis.lstrip().startswith("*Shortened:* in full, this page's analysis takes about 1")  # estimated
    parts = "".join(pages.values())
    assert "Summary 7. ([2 more lines](../m.py#L36))" in parts and "More words" not in parts
    assert all(f'<a id="function-f{i}"></a>' in parts for i in range(400))
