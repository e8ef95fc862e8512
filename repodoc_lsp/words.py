"""A count and its noun, singular or plural: `plural(1, "page")` is "1 page", `plural(3, "page")`
"3 pages". Every count shown to a person (pages, hovers, the CLI's and the editors' summaries) goes
through it; templates have it as the `plural` filter."""

from __future__ import annotations


def plural_of(word: str) -> str:
    """The plural of an English noun as repodoc's messages use them: `class` -> `classes`,
    `entry` -> `entries`, `file` -> `files`; the last word of a phrase (`workspace file`)."""
    if word.endswith(("s", "x", "z", "ch", "sh")):
        return word + "es"
    if word.endswith("y") and word[-2:-1] not in ("a", "e", "i", "o", "u", ""):
        return word[:-1] + "ies"
    return word + "s"


def grouped(n: int) -> str:
    """`n` with thousands separators (1,234): the templates' `grouped` filter, for a count shown without its noun
    (a filter is a plain call; `"{:,}".format(n)` was one through Jinja's `Context.call`)."""
    return f"{n:,}"


def plural(n: int, word: str, words: str = "", *, grouped: bool = False) -> str:
    """`n` and `word` (n == 1) or its plural (`words`, else `plural_of(word)`); `grouped`: the
    number with thousands separators (1,234)."""
    number = f"{n:,}" if grouped else str(n)
    return f"{number} {word if n == 1 else words or plural_of(word)}"
