"""Function signatures as written in the source (`(x: int = 1) -> str`).

Reading the def header is several times cheaper than `ast.unparse`, and
keeps the author's spelling; comments and line breaks are dropped.
"""

from __future__ import annotations

import re

_TOKEN = re.compile(r"""[rRbBuUfF]{0,2}(?:'''|\"\"\"|'|")|[()\[\]{}:#]""")
_STRING_END = {
    q: re.compile(r"(?:\\.|[^\\])*?" + re.escape(q), re.S) for q in ("'''", '"""', "'", '"')
}
_SPACES = re.compile(r"\s+")
_TIDY = (("( ", "("), (" )", ")"), ("[ ", "["), (" ]", "]"), (", )", ")"), (",)", ")"))


def _tidy(text: str) -> str:
    text = _SPACES.sub(" ", text).strip()
    for a, b in _TIDY:
        text = text.replace(a, b)
    return text


def signature_text(header: str) -> str | None:
    """`header` starts at the `(` after a def's name; returns `(args) -> ret`, or None if unsure."""
    depth = 0
    pos = 0
    parts: list[str] = []
    closed = False
    for m in _TOKEN.finditer(header):
        if m.start() < pos:
            continue
        tok = m.group()
        if tok[-1] in "'\"":
            end = _STRING_END[tok.lstrip("rRbBuUfF")].match(header, m.end())
            if end is None:
                return None
            pos_after = end.end()
            # skip the string body: move the scan past it
            parts.append(header[pos:pos_after])
            pos = pos_after
            continue
        if tok == "#":
            parts.append(header[pos : m.start()])
            nl = header.find("\n", m.end())
            pos = len(header) if nl < 0 else nl
            continue
        parts.append(header[pos : m.end()])
        pos = m.end()
        if tok in "([{":
            depth += 1
        elif tok in ")]}":
            depth -= 1
            if depth == 0:
                closed = True
        elif tok == ":" and depth == 0 and closed:
            return _tidy("".join(parts)[:-1])
    return None
