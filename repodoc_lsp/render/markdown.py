"""Markdown building blocks that are safe for any input text.

Source text never reaches a page as raw HTML: outside code spans and fences,
`<`, `>` and `&` are escaped; code spans and fences are always longer than
any backtick run inside them.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping
from urllib.parse import quote

from repodoc_lsp.words import plural

_BACKTICKS = re.compile(r"`+")
_HTML = str.maketrans({"<": "&lt;", ">": "&gt;", "&": "&amp;"})


def code(text: str) -> str:
    """An inline code span holding `text` exactly (newlines become spaces)."""
    if "`" not in text and "\n" not in text and "\r" not in text and text and text[0] != " " and text[-1] != " ":
        return f"`{text}`"
    text = text.replace("\r", " ").replace("\n", " ")
    longest = max((len(m) for m in _BACKTICKS.findall(text)), default=0)
    ticks = "`" * (longest + 1)
    # One space each side is stripped by a reader, unless the content is only spaces.
    edges = text.startswith(("`", " ")) or text.endswith(("`", " "))
    pad = " " if not text or (edges and text.strip(" ")) else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


# Lists a template would loop over, one filter call each (a Jinja loop reading `loop.last` costs a page more)
def codes(items: Iterable[str], sep: str = ", ", prefix: str = "") -> str:
    """The `codes` filter: each item, after `prefix`, as code (`code`), joined by `sep`."""
    return sep.join(code(prefix + item) for item in items)


def lines_linked(lines: Iterable[int], src_href: str) -> str:
    """The `linelinks` filter: `[L12](source#L12), ...`, a link to each line of the source at `src_href`."""
    return ", ".join(f"[L{n}]({src_href}#L{n})" for n in lines)


def name_links(names: Iterable[Mapping[str, str]]) -> str:
    """The `namelinks` filter: each name (`name`) as code, a link when it has an `href`."""
    return ", ".join(f"[{code(n['name'])}]({n['href']})" if n["href"] else code(n["name"]) for n in names)


def escape_html(text: str) -> str:
    return text.translate(_HTML)


# `esc`'s escapes in one pass: HTML's characters as entities, Markdown's with a backslash (an
# entity holds none of Markdown's characters, so the order of the two made no difference).
_ESC = str.maketrans({"<": "&lt;", ">": "&gt;", "&": "&amp;", **{c: "\\" + c for c in "\\`*_[]|"}})


def esc(text: str) -> str:
    """Plain text for a Markdown line: no HTML, no accidental emphasis or links, no line break."""
    return _inert_start(one_line(text).translate(_ESC))


# A backtick or tilde run at the start of a line; `\r` ends a line for CommonMark too.
_FENCE_RUN = re.compile(r"(?:^|(?<=[\r\n]))[ \t]*(`{3,}|~{3,})")


def fence(text: str, lang: str = "") -> str:
    """A fenced code block that no content can close early."""
    # Most sources hold no run of three backticks or tildes: the scan of every line start
    # (of the whole source, when it is embedded in its page) is skipped.
    runs = _FENCE_RUN.findall(text) if "```" in text or "~~~" in text else ()
    longest = max((len(m) for m in runs), default=0)
    ticks = "`" * max(3, longest + 1)
    body = text if text.endswith("\n") or not text else text + "\n"
    return f"{ticks}{lang}\n{body}{ticks}"


_SAFE_URL = re.compile(r"[A-Za-z0-9/._~-]*")


def _quote(text: str, safe: str) -> str:
    return text if _SAFE_URL.fullmatch(text) else quote(text, safe=safe)


def fragment(anchor: str) -> str:
    return _quote(anchor, "/.-_~:")


def href(path: str, fragment: str = "") -> str:
    """A link destination: percent-encoded so spaces, #, %, brackets and parentheses survive."""
    return _quote(path, "/.-_~") + ("#" + _quote(fragment, "/.-_~:") if fragment else "")


def rel_link(from_page: str, to: str) -> str:
    """Relative path from the folder of `from_page` to `to`.

    Both are POSIX paths relative to one base (or both absolute); the result
    never depends on the process's working folder.
    """
    return rel_link_in(posixpath.dirname(from_page), to)


def rel_link_in(folder: str, to: str) -> str:
    """`rel_link` from a page of `folder` (the page's `posixpath.dirname`): the link depends on
    nothing else of the page, so pages of one folder can share it (`links.link_in`)."""
    src = folder.split("/") if folder else []
    dst = to.split("/")
    common = 0
    while common < len(src) and common < len(dst) - 1 and src[common] == dst[common]:
        common += 1
    if ".." in src or ".." in dst or (folder.startswith("/") != to.startswith("/")):
        base = "" if folder.startswith("/") else "/"
        rel = posixpath.relpath(base + to, base + folder)
    else:
        rel = "/".join([".."] * (len(src) - common) + dst[common:])
    return rel  # as short as it can be: `c.md`, not `./c.md`


# A code span as CommonMark reads it: whole backtick runs, the opening one not escaped. Written to start
# with a backtick (what follows the run's first one looks behind it): `re` then looks for one, not a match
# at every character.
_CODE_SPAN = re.compile(r"(`(?<![`\\]`)`*)(?!`).+?(?<!`)\1(?!`)")
# What may open a block at the start of a line (after the HTML is escaped): a heading, a setext
# underline or thematic break, a quote, a list item, a fence, a table row, a link definition.
_BLOCK_START = re.compile(
    r"#|=|\+|>|\||`{3,}[^`]*$|~{3}|\d{1,9}[.)](?:\s|$)|[-*_](?:[ \t]*[-*_])*[ \t]*$|\[[^\]]*\]:"
)
_LIST_ITEM = re.compile(r"([-*])([ \t]+)(.*)$")
_LINE_BREAKS = re.compile(r"[\r\n\v\f\x1c-\x1e\x85\u2028\u2029]+")


def one_line(text: str) -> str:
    """`text` with every line break (any that `str.splitlines` knows) made a space."""
    if text.isascii() and "\n" not in text and "\r" not in text and "\v" not in text and "\f" not in text \
            and "\x1c" not in text and "\x1d" not in text and "\x1e" not in text:
        return text  # most text is one ASCII line: found so without the expression, 6 times as fast
    return _LINE_BREAKS.sub(" ", text)


def _inert_start(line: str) -> str:
    """`line` with a backslash before anything that would open a block; `- ` and `* ` list items
    are kept, with their content made inert the same way."""
    if line[:1].isalpha():  # most lines: nothing that opens a block starts with a letter
        return line
    prefix = ""
    while True:
        stripped = line.lstrip(" \t")
        start = _BLOCK_START.match(stripped)
        if start and stripped[0].isdigit():  # `1.` as `1\.`: a backslash only escapes punctuation
            digits = len(stripped) - len(stripped.lstrip("0123456789"))
            return f"{prefix}{stripped[:digits]}\\{stripped[digits:]}"
        if start:
            return f"{prefix}\\{stripped}"
        item = _LIST_ITEM.match(stripped)
        if not item:
            return prefix + stripped
        prefix += item.group(1) + item.group(2)
        line = item.group(3)


# What `_plain` escapes (each character on its own: no replacement holds another's character).
_PLAIN = str.maketrans({"\\": "\\\\", "`": "\\`", "[": "\\[", "<": "&lt;", ">": "&gt;", "&": "&amp;"})
_PLAIN_SPECIAL = re.compile(r"[\\`\[<>&]")


# A dunder name in prose (`__init__`, `obj.__dict__`, `__init__.py`): Markdown reads its underscores as
# strong emphasis (**init**), which reST and Python never mean
_DUNDER = re.compile(r"(?<![\w\\.])(?:[A-Za-z_]\w*\.)*__[A-Za-z0-9]\w*?__(?:\.\w+)*(?!\w)")


def _plain(text: str) -> str:
    """Text outside code spans: no HTML, no link or image, no backtick that could pair with another
    line's (a paragraph's code spans may cross lines), dunder names as code. Most text has none of
    these characters: then it is returned as it is, after one search for them and one for `__`."""
    if _PLAIN_SPECIAL.search(text):
        text = text.translate(_PLAIN)
    return _DUNDER.sub(r"`\g<0>`", text) if "__" in text else text


def inline(text: str) -> str:
    """One line of prose from the source: its code spans kept, line breaks made spaces, and
    elsewhere no HTML, no link, no stray backtick and no block syntax (heading, fence, rule, quote,
    table, numbered list) at its start."""
    text = one_line(text)
    if "`" not in text:  # no code span (most lines of prose): the whole line is plain text
        return _inert_start(_plain(text))
    out: list[str] = []
    last = 0
    for span in _CODE_SPAN.finditer(text):
        out.append(_plain(text[last : span.start()]))
        out.append(span.group(0))
        last = span.end()
    out.append(_plain(text[last:]))
    return _inert_start("".join(out))


def size_human(n: int) -> str:
    """`2,520 bytes (2.46 KB)`."""
    if n < 1024:
        return f"{n:,} bytes"
    scaled = float(n)
    for unit in ("KB", "MB", "GB"):
        scaled /= 1024
        if scaled < 1024 or unit == "GB":
            break
    return f"{n:,} bytes ({scaled:.2f} {unit})"


def size_short(n: int) -> str:
    """`41.2 KB` (one decimal; `512 bytes` under a kilobyte)."""
    if n < 1024:
        return plural(n, "byte", grouped=True)
    scaled = n / 1024
    unit = "KB"
    if scaled >= 1024:
        scaled, unit = scaled / 1024, "MB"
    return f"{scaled:,.1f} {unit}"


def first_line(doc: str | None) -> str:
    if not doc:
        return ""
    for line in doc.strip().splitlines():
        if line.strip():
            return line.strip()
    return ""


_SPAN = re.compile(r"(`(?<![`\\\[]`)`*)(?!`)(.+?)(?<!`)\1(?!`)")  # `_CODE_SPAN`'s way, not after `[`
_FENCE_LINE = re.compile(r"[ \t]*(`{3,}|~{3,})(.*)$")


def link_code_spans(text: str, links: dict[str, str]) -> str:
    """Markdown with each code span whose content is a key of `links` made a link to its value
    (`` `a.B` `` -> ``[`a.B`](href)``); fenced blocks, spans already in link text and spans
    across lines are left as they are."""
    if not links or "`" not in text:
        return text

    def linked(m: re.Match[str]) -> str:
        return f"[{m.group(0)}]({links[k]})" if (k := m.group(2).strip()) in links else m.group(0)

    if "```" not in text and "~~~" not in text:  # no fence (most docstrings): no line is one, and a
        return _SPAN.sub(linked, text)  # span ends on its line (`.` stops at "\n"): all lines at once
    out = []
    fence = ""
    for line in text.split("\n"):
        # a fence line holds three backticks or tildes in a row, a span a backtick: most lines neither
        opened = _FENCE_LINE.match(line) if "```" in line or "~~~" in line else None
        if fence:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence) \
                    and not opened.group(2).strip():
                fence = ""
        elif opened and not (opened.group(1)[0] == "`" and "`" in opened.group(2)):
            fence = opened.group(1)
        elif "`" in line:
            line = _SPAN.sub(linked, line)
        out.append(line)
    return "\n".join(out)
