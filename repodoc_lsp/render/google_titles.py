"""Google section titles griffe's Google parser reads as text, set as it reads them: a title with blank lines
under it (`titles_joined`) or no blank line above it (`titles_spaced`). `titles_set` gives griffe the
text through both (`docstrings._sections`)."""

from __future__ import annotations

import re

# griffe's Google section titles of entries (in lower case), but `Examples` (its blocks are code) and
# `Warnings` (often prose): `titles_joined`
_ENTRY_TITLES = frozenset({"args", "arguments", "params", "parameters", "keyword args", "keyword arguments",
                           "other args", "other arguments", "other params", "other parameters", "raises",
                           "exceptions", "returns", "yields", "receives", "attributes", "warns"})
_BLANKS_BEFORE_INDENTED = re.compile(r"(?:[ \t]*\n)+(?= +\S)")  # blank lines, then an indented line
_GRIFFE_FENCE = re.compile(r"^ *```", re.M)


def titles_set(text: str) -> str:
    """`text` with its Google section titles as griffe's Google parser reads them: a blank line above a title
    right under a line of text (`titles_spaced`), none under one (`titles_joined`)."""
    return titles_joined(titles_spaced(text))


def _outside_fence(text: str, at: int) -> bool:
    """Whether `at` is outside a code fence of `text`, as griffe counts them (a line starting with ```)."""
    return "```" not in text or len(_GRIFFE_FENCE.findall(text, 0, at)) % 2 == 0


def titles_joined(text: str) -> str:
    """`text` without the blank lines between a Google section title and its indented entries (`Args:`, a
    blank line, `    x (int): ...`, as boltons writes them), which griffe's Google parser reads as text
    ("extraneous blank line"): a title of `_ENTRY_TITLES` alone on its line, at its start, after a blank
    line or the text's start, never inside a code fence (griffe's: a line starting with ```). Found from
    each `:` before a blank line (few: no pattern is tried over the text, bench/README.md)."""
    i = text.find(":\n\n")
    if i < 0:
        return text
    parts, kept = [], 0
    while i >= 0:
        start = text.rfind("\n", 0, i) + 1
        if text[start:i].lower() in _ENTRY_TITLES:
            above = text[text.rfind("\n", 0, start - 1) + 1:start] if start else ""  # the line above, or none
            blanks = _BLANKS_BEFORE_INDENTED.match(text, i + 2)
            if blanks and not above.strip() and _outside_fence(text, start):
                parts.append(text[kept:i + 2])
                kept = blanks.end()
        i = text.find(":\n\n", i + 3)
    return "".join(parts) + text[kept:] if parts else text


_TITLE_END = "s:\n"  # how each title of `_ENTRY_TITLES` ends its line, in lower case
_LONGEST = max(map(len, _ENTRY_TITLES)) + 1  # a title's length with its `:`
_INDENTED_BELOW = re.compile(r"(?:[ \t]*\n)*(?= +\S)")  # blank lines or none, then an indented line


def titles_spaced(text: str) -> str:
    """`text` with a blank line above each Google section title that directly follows a line of text (an
    indented entry of the section above, a paragraph's last line: `Returns:` under `Args:`'s last entry),
    which griffe's Google parser reads as text ("missing blank line above"): a title of `_ENTRY_TITLES`
    alone on its line at its start, capitalised (`returns:` may end a sentence's line; `RETURNS:` left as it
    is), over an indented block griffe reads whole (`_entries_read`; blank lines between: `titles_joined`),
    never under a line ending in `:`, in a paragraph with a doctest (its output) or inside a code fence.
    Found from each `s:` ending a line (each title's end: fewer than the lines ending in `:`), no pattern
    run over the text (bench/README.md)."""
    i = text.find(_TITLE_END)
    parts, kept = [], 0
    while i >= 0:
        i += 1  # the title's `:`; its line's start looked for among its last `_LONGEST` characters
        start = text.rfind("\n", i - _LONGEST if i > _LONGEST else 0, i) + 1
        # a line above that is not blank (most titles have one: not looked at further), the title capitalised
        if start > 1 and text[start - 2] != "\n" and text[start].isupper() and text[start:i].lower() in _ENTRY_TITLES:
            above = text[text.rfind("\n", 0, start - 1) + 1:start - 1]
            paragraph = text[text.rfind("\n\n", 0, start) + 1:start]
            if above.strip() and not above.endswith(":") and ">>>" not in paragraph \
                    and _INDENTED_BELOW.match(text, i + 2) and _entries_read(text, i + 2, text[start:i].lower()) \
                    and _outside_fence(text, start):
                parts.append(text[kept:start] + "\n")
                kept = start
        i = text.find(_TITLE_END, i + 2)
    return "".join(parts) + text[kept:] if parts else text


def _entries_read(text: str, at: int, title: str) -> bool:
    """Whether griffe reads every entry of the indented block from `at` under the Google section `title`: each
    line at the block's indentation starts an entry, which must hold a `:` (`name: text`) but under `Returns`,
    `Yields` or `Receives`. An entry it cannot read (`Raises:` over `ValueError if ...`) is dropped, and the
    whole docstring would be shown as prose (`docstrings._loses_text`), where the title left as text loses
    nothing."""
    if title in ("returns", "yields", "receives"):
        return True
    indent = -1
    for line in text[at:].split("\n"):
        stripped = line.lstrip(" ")
        if not stripped.strip():
            continue
        width = len(line) - len(stripped)
        if indent < 0:
            indent = width
        if width < indent:
            return True
        if width == indent and ":" not in line:
            return False
    return True
