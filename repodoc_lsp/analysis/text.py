"""Markdown and other text files -> facts: headings and identifiers."""

from __future__ import annotations

import re

from repodoc_lsp.analysis.model import FileFacts, Language, Symbol, SymbolKind
from repodoc_lsp.analysis.python import _Anchors, count_lines

MAX_IDENTIFIERS = 500

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
_ATX = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
# A word that looks like code in prose: has an underscore, an inner capital or a digit.
_CODE_LIKE = re.compile(r"^(?:_*[a-z]+[A-Z]|.*_.|[A-Z][a-z]+[A-Z]|.*[0-9])")


def _slug(text: str) -> str:
    slug = re.sub(r"[^\w\- ]", "", text.lower(), flags=re.UNICODE).strip().replace(" ", "-")
    return slug or "section"


def _cap(found: set[str]) -> tuple[tuple[str, ...], int]:
    ordered = sorted(found)
    return tuple(ordered[:MAX_IDENTIFIERS]), len(ordered)


def analyse_text(text: str, language: Language) -> FileFacts:
    facts = FileFacts(language=language, lines=count_lines(text))
    if language is Language.MARKDOWN:
        _markdown(text, facts)
    else:
        facts.identifiers, facts.identifiers_total = _cap(set(_WORD.findall(text)))
    return facts


def _markdown(text: str, facts: FileFacts) -> None:
    anchors = _Anchors()
    headings: list[Symbol] = []
    idents: set[str] = set()
    fence: str | None = None
    parents: list[tuple[int, str]] = []
    for lineno, line in enumerate(text.split("\n"), start=1):
        marker = _FENCE.match(line)
        if fence is not None:
            if marker and marker.group(1)[0] == fence[0] and len(marker.group(1)) >= len(fence):
                fence = None
            else:
                idents.update(_WORD.findall(line))
            continue
        if marker:
            fence = marker.group(1)
            continue
        for span in _CODE_SPAN.finditer(line):
            idents.update(_WORD.findall(span.group(2)))
        idents.update(w for w in _WORD.findall(line) if _CODE_LIKE.match(w))
        heading = _ATX.match(line)
        if heading:
            level = len(heading.group(1))
            title = heading.group(2).strip()
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
    facts.identifiers, facts.identifiers_total = _cap(idents)
