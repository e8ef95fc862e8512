"""Property tests: every text-to-Markdown function takes any text without raising, and a CommonMark
reader (markdown-it-py) finds in its output exactly what was meant: no heading, no raw HTML, no block
that runs past its section, code spans and fences that hold the text exactly.

Examples per test: REPODOC_FUZZ_EXAMPLES (default 60)."""

from __future__ import annotations

import os

from helpers import contained_errors, foreign_html, md_tokens
from hypothesis import given, settings
from hypothesis import strategies as st

from repodoc_lsp.render.docstrings import docstring_markdown
from repodoc_lsp.render.markdown import code, esc, fence, first_line, inline
from repodoc_lsp.render.pages import link_text
from repodoc_lsp.render.rest import prose, roles_as_literals

EXAMPLES = int(os.environ.get("REPODOC_FUZZ_EXAMPLES", "60"))
# Lines that mean something to reST, Google, NumPy, Markdown or HTML, mixed with arbitrary text.
FRAGMENTS = st.sampled_from([
    "Args:", "Arguments:", "Parameters", "----------", "Returns:", "Yields:", "Raises:", "Note:", "Warning:",
    "See Also", "Examples", "Example::", "::", "x (int): a value", "device (:class:`torch.device`): where",
    "x : int", ":param x: value", ":type x: int", ":returns: y", ".. note::", ".. warning:: careful",
    ".. code-block:: python", ".. deprecated:: 1.0", ".. math::", ".. _label:", ">>> f(1)", "... g()",
    "~~~", "~~~~~~", "```", "```python", "````", "---", "===", "***", "- - -", "# title", "## title",
    "1. one", "2) two", "- item", "* item", "+ item", "> quote", "| a | b |", "[ref]: http://x",
    "<script>alert(1)</script>", "<img src=x onerror=alert(1)>", "<!-- c", "<details>", "`", "``", "`a`",
    "``<b>``", "\\`<i>`", "\\", ":class:`~a.B`", ":func:`f <g>`", "Title", "", " ", "\t", "    ",
])
TEXT = st.text(max_size=40)
INDENT = st.sampled_from(["", "", "", "  ", "    ", "        ", "\t", " \t "])
BREAK = st.sampled_from(["\n", "\n", "\n", "\r\n", "\r", "\n\n"])


@st.composite
def docstrings(draw: st.DrawFn) -> str:
    """Docstring-like text: section titles, directives, fences and markup at random indents."""
    parts = []
    for _ in range(draw(st.integers(0, 25))):
        parts.append(draw(INDENT) + draw(st.one_of(FRAGMENTS, FRAGMENTS, TEXT)) + draw(BREAK))
    return "".join(parts)


ANY_DOC = st.one_of(docstrings(), st.text(max_size=300))


def _texts(tokens: list) -> str:
    return "".join(t.content for t in tokens if t.type in ("text", "code_inline"))


@settings(max_examples=EXAMPLES * 3, deadline=None)
@given(ANY_DOC)
def test_docstring_markdown_stays_in_its_section(doc: str) -> None:
    assert contained_errors(docstring_markdown(doc)) == []


@settings(max_examples=EXAMPLES * 2, deadline=None)
@given(ANY_DOC)
def test_prose_stays_in_its_section(doc: str) -> None:
    assert contained_errors(prose(doc)) == []
    assert contained_errors(prose(roles_as_literals(doc))) == []


@settings(max_examples=EXAMPLES * 2, deadline=None)
@given(st.one_of(FRAGMENTS, TEXT, st.text(max_size=100)))
def test_one_line_helpers_stay_on_their_line(text: str) -> None:
    for out in (inline(text), esc(text), inline(first_line(text))):
        assert "\n" not in out and "\r" not in out
        assert contained_errors(out) == []


@settings(max_examples=EXAMPLES * 2, deadline=None)
@given(st.one_of(FRAGMENTS, TEXT, st.text(max_size=100)))
def test_code_span_holds_the_text_exactly(text: str) -> None:
    tokens = md_tokens("x " + code(text))
    spans = [t for t in tokens if t.type == "code_inline"]
    assert len(spans) == 1 and not foreign_html(code(text))
    expected = text.replace("\r", " ").replace("\n", " ").replace("\x00", "\ufffd")
    assert not text or spans[0].content in (expected, expected[1:-1] if expected.strip(" ") else expected)


@settings(max_examples=EXAMPLES * 2, deadline=None)
@given(st.one_of(FRAGMENTS, TEXT, st.text(max_size=100)))
def test_link_text_is_one_link_without_html(text: str) -> None:
    page = f"## Start\n\n- [{link_text(text)}](./x.md)\n\n## End\n"
    tokens = md_tokens(page)
    assert [t.type for t in tokens].count("link_open") == 1
    assert not foreign_html(page)
    assert [t.content for t in tokens if t.type == "inline" and t.level > 0][1:] == ["End"] or \
        [t.tag for t in tokens if t.type == "heading_open"] == ["h2", "h2"]


@settings(max_examples=EXAMPLES * 2, deadline=None)
@given(st.one_of(docstrings(), st.text(max_size=200)), st.sampled_from(["", "python", "pycon"]))
def test_fence_holds_the_text_exactly(text: str, lang: str) -> None:
    page = f"## Start\n\n{fence(text, lang)}\n\n## End\n"
    fences = [t for t in md_tokens(page) if t.type == "fence"]
    assert len(fences) == 1 and fences[0].info == lang
    expected = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "\ufffd")
    assert fences[0].content == (expected if expected.endswith("\n") or not expected else expected + "\n")
    assert contained_errors(fence(text, lang)) == []
