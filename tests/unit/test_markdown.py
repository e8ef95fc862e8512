from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from repodoc_lsp.render.docstrings import docstring_markdown
from repodoc_lsp.render.markdown import code, fence, href, inline, rel_link, size_human


@pytest.mark.parametrize(("text", "expected"), [
    ("plain", "`plain`"), ("a`b", "``a`b``"), ("`x", "`` `x ``"), ("a\nb", "`a b`"), ("", "`  `"),
])
def test_code_span_holds_any_text(text: str, expected: str) -> None:
    assert code(text) == expected


def test_fence_is_longer_than_any_fence_inside() -> None:
    assert fence("a\n````\nb", "py") == "`````py\na\n````\nb\n`````"
    assert fence("x", "") == "```\nx\n```"
    assert fence("a\r  ~~~~~\nb") == "``````\na\r  ~~~~~\nb\n``````"  # tildes, after a lone CR, indented
    assert fence("a ```` b\n") == "```\na ```` b\n```"  # not at a line's start: no fence


def test_href_encodes_what_breaks_links() -> None:
    assert href("a b/c#d(1).py_docs.md", "class-X") == "a%20b/c%23d%281%29.py_docs.md#class-X"
    assert href("plain/path.md") == "plain/path.md"


def test_rel_link() -> None:
    assert rel_link("a/b/c.md", "a/d.md") == "../d.md"
    assert rel_link("a/b.md", "a/c.md") == "c.md"
    assert rel_link("index.md", "a/index.md") == "a/index.md"
    assert rel_link("/out/a/b.md", "/src/a/b.py") == "../../src/a/b.py"


def test_size_human() -> None:
    assert size_human(2520) == "2,520 bytes (2.46 KB)"
    assert size_human(52_428_800) == "52,428,800 bytes (50.00 MB)"
    assert size_human(12) == "12 bytes"


def test_inline_keeps_code_escapes_html_and_block_syntax() -> None:
    assert inline("use `a<b` not <b>") == "use `a<b` not &lt;b&gt;"
    assert inline("# not a heading") == "\\# not a heading"


@pytest.mark.parametrize(("text", "expected"), [
    ("Options for __rich_console__ method.", "Options for `__rich_console__` method."),  # rich's ConsoleOptions
    ("Calls __init__ and then obj.__dict__, in __init__.py.",
     "Calls `__init__` and then `obj.__dict__`, in `__init__.py`."),
    ("snake_case, _private, a__b__c, __x and ``__all__`` stay as they are.",
     "snake_case, _private, a__b__c, __x and ``__all__`` stay as they are."),
])
def test_dunder_names_in_prose_are_code_not_emphasis(text: str, expected: str) -> None:
    """CommonMark reads `__init__` in prose as strong emphasis: a page showed "Calls **init**"."""
    from markdown_it import MarkdownIt

    assert inline(text) == expected
    assert "<strong>" not in MarkdownIt("commonmark").render(docstring_markdown(text))


def test_docstring_styles_become_markdown() -> None:
    google = "Sum.\n\nArgs:\n    x (int): first\n\nReturns:\n    int: the sum\n\nRaises:\n    ValueError: bad"
    assert docstring_markdown(google) == (
        "Sum.\n\n**Parameters**\n\n- `x` (`int`): first\n\n**Returns**: `int`: the sum\n\n"
        "**Raises**\n\n- `ValueError`: bad")
    numpy = "Sum.\n\nParameters\n----------\nx : int\n    first\n"
    assert "- `x` (`int`): first" in docstring_markdown(numpy)
    rest = "Sum.\n\n:param x: first\n:type x: int\n:returns: the sum\n"
    assert "- `x` (`int`): first" in docstring_markdown(rest)
    assert docstring_markdown("Example:\n\n>>> f(1)\n2") .count("```pycon") == 1


def _rel_link_by_page(from_page: str, to: str) -> str:
    """`rel_link` as it was worked out from the whole page's path (before `rel_link_in`)."""
    import posixpath

    src = posixpath.dirname(from_page).split("/") if "/" in from_page else []
    dst = to.split("/")
    common = 0
    while common < len(src) and common < len(dst) - 1 and src[common] == dst[common]:
        common += 1
    if ".." in src or ".." in dst or (from_page.startswith("/") != to.startswith("/")):
        base = "" if from_page.startswith("/") else "/"
        return posixpath.relpath(base + to, posixpath.dirname(base + from_page))
    return "/".join([".."] * (len(src) - common) + dst[common:])


_PATH_PARTS = st.lists(st.sampled_from(["a", "b", "c d", "..", ".", "", "x.md", "a.py_docs.md"]), min_size=1,
                       max_size=5).map("/".join)


@given(_PATH_PARTS, _PATH_PARTS, st.booleans(), st.booleans())
@settings(max_examples=1500, deadline=None)
def test_a_link_depends_on_the_pages_folder_alone(page: str, to: str, page_absolute: bool, to_absolute: bool) -> None:
    """Links are kept per folder of the page (`links.link_in`), not per page: `rel_link` is worked out
    from the page's `dirname` and gives what it gave from the whole path, for any path (`..`, `.`,
    empty parts, absolute or not)."""
    import posixpath

    from repodoc_lsp.render.markdown import rel_link_in

    def outcome(link: Callable[[], str]) -> str:
        try:
            return link()
        except ValueError as exc:  # `posixpath.relpath` of an empty path: the same failure
            return f"ValueError: {exc}"

    page, to = "/" * page_absolute + page, "/" * to_absolute + to
    expected = outcome(lambda: _rel_link_by_page(page, to))
    assert outcome(lambda: rel_link(page, to)) == outcome(lambda: rel_link_in(posixpath.dirname(page), to)) == expected


def test_pages_of_one_folder_share_their_kept_links() -> None:
    """Kept per page, 1 link in 10 was found kept when rendering PyTorch's pages; per folder, 1 in 2."""
    from repodoc_lsp.render.links import file_parts as _file_parts
    from repodoc_lsp.render.links import link_in as _link_in
    from repodoc_lsp.render.links import page_link as _page_link

    before = _link_in.cache_info().hits
    assert _page_link("t/q/a.py_docs.md", "t/r/b.py_docs.md", "K") == "../r/b.py_docs.md#K"
    assert _page_link("t/q/c.py_kw.md", "t/r/b.py_docs.md", "K") == "../r/b.py_docs.md#K"
    assert _page_link("t/q/index.md", "t/q/index.md", "") == "index.md"
    assert _link_in.cache_info().hits == before + 1
    assert _file_parts("t/q/a.py_docs.md", "t/q/m.py")[2:] == ("m.py_docs.md", "`t/q/`", "m.py")
    assert _file_parts("t/index.md", "t/q/m.py")[2:] == ("q/m.py_docs.md", "`t/q/`", "t/q/m.py")
