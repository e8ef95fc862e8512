"""Markdown and other text files -> facts: headings and identifiers."""

from __future__ import annotations

import re

from repodoc_lsp.analysis import docwords
from repodoc_lsp.analysis.common import Anchors, count_lines
from repodoc_lsp.analysis.model import FileFacts, Language, Symbol, SymbolKind

MAX_IDENTIFIERS = 500
FIRST_LINE = "first_line"  # `FileFacts.extra`: a text file's first line with a letter or digit (stripped, cut)
_FIRST_LINE_MAX = 100  # characters
_FIRST_WORDS = re.compile(r"^[^\n]*[^\W_][^\n]*", re.MULTILINE)  # (not `---`, `{`, a blank line)

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
_ATX = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def _slug(text: str) -> str:
    slug = re.sub(r"[^\w\- ]", "", text.lower(), flags=re.UNICODE).strip().replace(" ", "-")
    return slug or "section"


def _cap(found: set[str]) -> tuple[tuple[str, ...], int]:
    ordered = sorted(found)
    return tuple(ordered[:MAX_IDENTIFIERS]), len(ordered)


def analyse_text(text: str, language: Language, rest: bool = False) -> FileFacts:
    """A document's (`Language.MARKDOWN`; reST when `rest`) or another text's facts."""
    facts = FileFacts(language=language, lines=count_lines(text))
    if language is Language.MARKDOWN:
        _markdown(text, facts, rest)
    else:
        facts.identifiers, facts.identifiers_total = _cap(set(_WORD.findall(text)))
        found = _FIRST_WORDS.search(text)  # what a folder's index says of a file without pages (`render/own_pages.py`)
        if found:
            first = found.group(0).strip()
            facts.extra[FIRST_LINE] = first if len(first) <= _FIRST_LINE_MAX else first[:_FIRST_LINE_MAX - 1] + "…"
    return facts


# A reST section title's underline (or a setext heading's): one punctuation character repeated
_UNDERLINE = re.compile(r"^([=\-~^\"'`#*+:.])\1{2,}[ \t]*$")
_UNDERLINE_LEVEL = {"=": 1, "-": 2, "~": 3, "^": 4}
# Lines that are no prose: badges and images, HTML, reST directives and substitutions, tables, rules
_NOT_PROSE = re.compile(r"^\s*(?:\[!\[|!\[|<|\.\.|\||[-*_=+]{3,}\s*$|:\w+:)")


_LIST_ITEM = re.compile(r"^(?:[-*+]|\d{1,9}[.)])(?:\s|$)|^>")
_LINK = re.compile(r"(?<!!)\[([^\[\]]+)\]\([^()\s]*\)")  # a Markdown link: its text is what it says
_PARAGRAPH_LINES = 80  # a paragraph of prose starts within this many lines, or the text has none


def _first_paragraph(lines: list[str], rest: bool) -> str:
    """The first paragraph of prose of a Markdown or reST text (of 5 words at least, within its
    first lines), headings, badges, HTML, directives, lists, quotes and fences left aside: what the
    text says it is. Its links are their text."""
    para: list[str] = []
    fence: str | None = None
    for i, line in enumerate(lines[:_PARAGRAPH_LINES]):
        marker = None if rest else _FENCE.match(line)  # (reST: `~~~` is an underline)
        stripped = line.strip()
        if fence is not None:
            fence = None if marker and marker.group(1)[0] == fence[0] else fence
        elif marker:
            fence = marker.group(1)
        elif not stripped:
            if len(" ".join(para).split()) >= 5:
                break
            para = []  # a line such as "Released 2024-12-19" is no paragraph of prose
        elif para:
            para = [] if _UNDERLINE.match(stripped) else [*para, stripped]  # an underline: a title
        elif not (line[:1].isspace() or _ATX.match(line) or _NOT_PROSE.match(line) or _UNDERLINE.match(stripped)
                  or _LIST_ITEM.match(stripped)
                  or (i + 1 < len(lines) and _UNDERLINE.match(lines[i + 1].strip()))):
            para.append(stripped)
    return _LINK.sub(r"\1", " ".join(para)) if len(" ".join(para).split()) >= 5 else ""


def _markdown(text: str, facts: FileFacts, rest: bool) -> None:
    """Headings (outside code blocks) and the words that are code (`docwords`)."""
    anchors = Anchors()
    headings: list[Symbol] = []
    parents: list[tuple[int, str]] = []
    lines = text.split("\n")
    facts.module_doc = _first_paragraph(lines, rest) or None
    code = docwords.rest_code_lines(lines) if rest else docwords.markdown_code_lines(lines)
    for lineno, line in enumerate(lines, start=1):
        if lineno - 1 in code:
            continue
        heading = None if rest else _ATX.match(line)
        under = _UNDERLINE.match(lines[lineno].strip()) if lineno < len(lines) and not heading else None
        if under and (not line.strip() or len(lines[lineno].strip()) < len(line.strip())
                      or _NOT_PROSE.match(line) or line[:1].isspace()):
            under = None
        if heading or under:
            level = len(heading.group(1)) if heading else _UNDERLINE_LEVEL.get(under.group(1), 2) if under else 2
            title = heading.group(2).strip() if heading else line.strip()
            while parents and parents[-1][0] >= level:
                parents.pop()
            headings.append(
                Symbol(
                    name=title,
                    qualname=title,
                    kind=SymbolKind.HEADING,
                    line=lineno,
                    col=0,
                    end_line=lineno,
                    anchor=anchors.make(f"heading-{_slug(title)}"),
                    container=parents[-1][1] if parents else "",
                    level=level,
                )
            )
            parents.append((level, title))
    facts.symbols = tuple(headings)
    words = docwords.rest_words(lines, code) if rest else docwords.markdown_words(lines, code)
    facts.identifiers, facts.identifiers_total = _cap(words)
