"""Property-based tests: any Python text is analysed without a crash, keywords equal an independent
reading of `ast`, and rendered pages close every fence and link every keyword to a unique anchor.

Examples per test: REPODOC_FUZZ_EXAMPLES (default 60; CI uses the default)."""

from __future__ import annotations

import ast
import os
import re

from helpers import DOCS_SECTIONS, KW_SECTIONS, ast_keywords, page_errors
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from repodoc_lsp.analysis import analyse_source
from repodoc_lsp.analysis.relations import Relations
from repodoc_lsp.analysis.source import NotText
from repodoc_lsp.render.pages import Renderer, Site

EXAMPLES = int(os.environ.get("REPODOC_FUZZ_EXAMPLES", "60"))
NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True).filter(lambda n: n not in KEYWORDS)
KEYWORDS = {"False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def",
            "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is",
            "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with", "yield",
            "match", "case", "type", "_"}
TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40)


@st.composite
def python_source(draw: st.DrawFn) -> str:
    """Python built from statements that define, import and nest, with odd docstrings."""
    lines: list[str] = []

    def block(indent: int, depth: int) -> None:
        for _ in range(draw(st.integers(1, 4))):
            pad = "    " * indent
            kind = draw(st.sampled_from(["def", "async", "class", "import", "from", "if", "doc", "expr"]))
            name = draw(NAMES)
            if kind in ("def", "async", "class") and depth < 4:
                head = {"def": "def", "async": "async def", "class": "class"}[kind]
                sig = "(self, x=1, *a, **k)" if kind != "class" else draw(st.sampled_from(["", "(Base)", "(A, B)"]))
                lines.append(f"{pad}{head} {name}{sig}:")
                lines.append(f"{pad}    {draw(TEXT)!r}")
                block(indent + 1, depth + 1)
            elif kind == "import":
                lines.append(f"{pad}import {name}.{draw(NAMES)} as {draw(NAMES)}")
            elif kind == "from":
                dots = "." * draw(st.integers(0, 3))
                module = draw(st.one_of(st.just(""), NAMES)) if dots else draw(NAMES)
                names = ", ".join(draw(st.lists(NAMES, min_size=1, max_size=3)))
                lines.append(f"{pad}from {dots}{module} import ({names})")
            elif kind == "if" and depth < 4:
                lines.append(f"{pad}if {name}:")
                block(indent + 1, depth + 1)
            elif kind == "doc":
                lines.append(f"{pad}x = {draw(TEXT)!r}")
            else:
                lines.append(f"{pad}{name}({draw(TEXT)!r})")

    block(0, 0)
    return "\n".join(lines) + "\n"


def _render(source: str, rel: str = "m.py", sibling: str = "") -> tuple[str, str]:
    data = source.replace("\x00", "").encode("utf-8", "surrogatepass")
    facts = analyse_source(rel, data)
    names = [rel, *([sibling] if sibling and sibling != rel else [])]
    all_facts = {r: facts for r in names}
    site = Site.build(project="fuzz", root="/r", out="/r/docs", embed_max=10**6,
                      relations=Relations({r: facts.imports for r in names}), facts=all_facts,
                      sizes={r: len(data) for r in names}, folders=[""])
    renderer = Renderer()
    return renderer.file_docs(site, rel, source), renderer.file_kw(site, rel)


def _sound(docs: str, kw: str) -> None:
    """Both pages parse as CommonMark with every section the format promises, in order."""
    assert _fences_closed(docs) and _fences_closed(kw)
    assert page_errors(docs, DOCS_SECTIONS) == []
    assert page_errors(kw, KW_SECTIONS) == []


def _fences_closed(text: str) -> bool:
    fence = None
    for line in text.split("\n"):
        m = re.match(r"^ {0,3}(`{3,}|~{3,})(.*)$", line)
        if fence is None and m and (m.group(1)[0] == "~" or "`" not in m.group(2)):  # as CommonMark reads it
            fence = m.group(1)
        elif fence is not None and m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) \
                and not m.group(2).strip():
            fence = None
    return fence is None


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(python_source())
def test_keywords_equal_ast_and_pages_are_sound(source: str) -> None:
    facts = analyse_source("m.py", source.encode("utf-8", "surrogatepass"))
    tree = ast.parse(source)
    got = {kind.heading: {name for name, _ in entries} for kind, entries in facts.keywords().items()}
    expected = ast_keywords(tree)
    assert got == expected
    docs, kw = _render(source)
    _sound(docs, kw)
    anchors = re.findall(r'<a id="([^"]+)"></a>', docs)
    assert len(anchors) == len(set(anchors))
    # keyword entries: `- **name**: [docs](#anchor)`, or one link per definition of a name defined
    # several times (`[`A`](#function-A), [`A.A`](#function-A.A)`); every link lands on an anchor
    for entry in re.findall(r"^- \*\*.+?\*\*: (\[.*\]\(m\.py_docs\.md#[^)]+\))$", kw, re.M):
        for target in re.findall(r"\]\(m\.py_docs\.md#([^)]+)\)", entry):
            assert target in anchors, target
    for heading in ("Classes", "Functions"):  # one entry per name defined, dunders left out
        section = re.search(rf"^### {heading}\n\n((?:- .*\n)+)", kw, re.M)
        listed = re.findall(r"^- \*\*`(.+?)`\*\*: ", section.group(1), re.M) if section else []
        defined = [n for n in got.get(heading, ()) if not (n.startswith("__") and n.endswith("__"))]
        assert sorted(listed) == sorted(defined)


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.text(max_size=300))
def test_any_text_never_crashes(text: str) -> None:
    for name in ("m.py", "m.md", "m.txt"):
        try:
            data = text.encode("utf-8", "surrogatepass")
        except UnicodeEncodeError:
            data = text.encode("utf-8", "replace")
        try:
            analyse_source(name, data)
        except NotText:  # binary input is refused with a reason, not a crash
            assert "\x00" in text
    docs, kw = _render(text.encode("utf-8", "replace").decode("utf-8"))
    _sound(docs, kw)


DOCSTRING = st.lists(st.sampled_from([
    "Args:", "    x (:class:`a.B`): value", "Returns:", "    int: y", "Note:", "    careful", ".. note::",
    "    body", ".. warning:: w", "~~~~~", "```", "```python", "---", "# h", "<img src=x onerror=alert(1)>",
    ">>> f()", "Example::", "", "    ", "\t", "1. one", "- item", "[r]: x",
]) | TEXT, max_size=12).map("\n".join)
# File names as a checkout may have them: backticks, HTML, blank lines, brackets, heading marks.
FILE_NAMES = st.one_of(
    st.sampled_from(["tool`<img src=x onerror=alert(1)>`.py", "a\n\n# injected\n\nb.py", "```.py", "~~~.md",
                     "[x](y).py", "<script>.txt", "a|b.py", "#.py", "- x.py", "1. x.py", "a\r\nb.py"]),
    st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="/\x00"),
            min_size=1, max_size=20).map(lambda n: n + ".py"),
)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(FILE_NAMES, FILE_NAMES, DOCSTRING, DOCSTRING)
def test_any_file_name_and_docstring_keep_the_page_whole(rel: str, sibling: str, doc: str, method_doc: str) -> None:
    """A file name and docstrings of any text: both pages keep their structure, no live HTML."""
    source = (f"{doc!r}\nclass C:\n    {method_doc!r}\n    def m(self):\n        {doc!r}\n"
              f"def f():\n    {method_doc!r}\nif __name__ == '__main__':\n    f()\n")
    docs, kw = _render(source, rel, sibling)
    _sound(docs, kw)


