"""Function signatures as written in the source (`(x: int = 1) -> str`).

Reading the def header is several times cheaper than `ast.unparse`, and
keeps the author's spelling; comments and line breaks are dropped.
"""

from __future__ import annotations

import functools
import re

_TOKEN = re.compile(r"""[rRbBuUfF]{0,2}(?:'''|\"\"\"|'|")|[()\[\]{}:#]""")
_STRING_END = {
    q: re.compile(r"(?:\\.|[^\\])*?" + re.escape(q), re.S) for q in ("'''", '"""', "'", '"')
}
_TIDY = (("( ", "("), (" )", ")"), ("[ ", "["), (" ]", "]"), (", )", ")"), (",)", ")"))


def _tidy(text: str) -> str:
    # `str.split()` splits at what `\s` matches (`Py_UNICODE_ISSPACE` both): `_SPACES.sub(" ", text).strip()`
    # in a third of the time
    text = " ".join(text.split())
    for a, b in _TIDY:
        text = text.replace(a, b)
    return text


def signature_text(header: str) -> str | None:
    """`header` starts at the `(` after a def's name; returns `(args) -> ret`, or None if unsure."""
    if header[:1] == "(":
        at = _closing_colon(header)
        # no string or comment before it (most headers; a docstring may follow): the token scan stops there too
        if at >= 0:
            # `in` on the slice: `str.find` with bounds parses its arguments with a format built at each call
            head = header[:at]
            if "'" not in head and '"' not in head and "#" not in head:
                return _tidy(head)
    return _scanned_signature_text(header)


def _scanned_signature_text(header: str) -> str | None:
    """`signature_text` a token at a time (strings and comments skipped)."""
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


_OPENING = re.compile(r"[(\[{]")
_CLOSING = re.compile(r"[)\]}]")


def _closing_colon(header: str) -> int:
    """Where the first `:` outside brackets is (-1: none), by counting brackets between colons instead
    of reading a token at a time: after the opening `(`, a depth of 0 means the parameters have closed.
    Strings and comments are not skipped: `signature_text` takes it only when none comes before it."""
    depth = 0
    done = 0
    # a colon before the first `)` is inside the parameters (its depth is at least 1 but for an
    # unmatched `]`/`}` in a string or comment before it, which sends `signature_text` to the
    # scan either way): the counting starts at the first colon after it (most annotations skipped)
    at = header.find(":", header.find(")") + 1)
    while at >= 0:
        # the brackets found by two regexes, not six `str.count` calls (each parsed its bounds as `str.find`)
        depth += len(_OPENING.findall(header, done, at)) - len(_CLOSING.findall(header, done, at))
        if depth == 0:
            return at
        done = at
        at = header.find(":", at + 1)
    return -1


# A signature's tokens: a string, a dotted name, or punctuation that changes what follows.
_SIG_TOKEN = re.compile(r"""(?P<s>[rRbBuUfF]{0,2}(?:'[^'\\]*(?:\\.[^'\\]*)*'|"[^"\\]*(?:\\.[^"\\]*)*"))"""
                        r"|(?P<n>(?<![\w.])[^\W\d]\w*(?:\.[^\W\d]\w*)*)|(?P<p>->|[()\[\]{},:=])")
_DOTTED = re.compile(r"[^\W\d]\w*(?:\.[^\W\d]\w*)*")


@functools.lru_cache(maxsize=65536)  # the graph reads every signature, then its page again
def annotation_spans(signature: str) -> tuple[tuple[int, int], ...]:
    """Where the dotted names of a signature's annotations are (`(x: nn.Linear, n=a.b) -> "Tensor"`:
    `nn.Linear` and `Tensor`; not parameter names or defaults), as (start, end) offsets: names in
    a parameter's annotation (after its `:`, before its `=`) and in the return annotation, and a
    string annotation that is one dotted name (a forward reference)."""
    if ":" not in signature and "->" not in signature:
        return ()
    spans: list[tuple[int, int]] = []
    depth = 0
    mode = "name"  # name | annotation | default
    closed = False
    literal = 0  # the depth inside `Literal[...]` (its strings are values), 0 outside
    after_literal = False
    for m in _SIG_TOKEN.finditer(signature):
        kind, tok = m.lastgroup, m.group()
        if kind == "p":
            if tok in "([{":
                depth += 1
                if after_literal and tok == "[" and not literal:
                    literal = depth
            elif tok in ")]}":
                if depth == literal:
                    literal = 0
                depth -= 1
                if depth == 0 and not closed:
                    closed, mode = True, "name"
            elif tok == "->":
                if closed and depth == 0:
                    mode = "annotation"
            elif depth == 1 and not closed:
                if tok == ":" and mode == "name":
                    mode = "annotation"
                elif tok == "=":
                    mode = "default"
                elif tok == ",":
                    mode = "name"
            after_literal = False
        elif mode == "annotation":
            if kind == "n":
                spans.append(m.span())
                after_literal = tok == "Literal" or tok.endswith(".Literal")
            elif not literal:  # a string: a forward reference when it is one dotted name
                quote = tok.lstrip("rRbBuUfF")
                start = m.start() + len(tok) - len(quote) + 1
                if tok[0] not in "bBfF" and _DOTTED.fullmatch(signature, start, m.end() - 1):
                    spans.append((start, m.end() - 1))
    return tuple(spans)
