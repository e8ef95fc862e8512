"""Markdown building blocks that are safe for any input text.

Source text never reaches a page as raw HTML: outside code spans and fences,
`<`, `>` and `&` are escaped; code spans and fences are always longer than
any backtick run inside them.
"""

from __future__ import annotations

import posixpath
import re
from urllib.parse import quote

_BACKTICKS = re.compile(r"`+")
_HTML = str.maketrans({"<": "&lt;", ">": "&gt;", "&": "&amp;"})
_MD_SPECIAL = re.compile(r"([\\`*_\[\]|])")


def code(text: str) -> str:
    """An inline code span holding `text` exactly (newlines become spaces)."""
    if "`" not in text and "\n" not in text and "\r" not in text and text and text[0] != " " and text[-1] != " ":
        return f"`{text}`"
    text = text.replace("\r", " ").replace("\n", " ")
    longest = max((len(m) for m in _BACKTICKS.findall(text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith(("`", " ")) or text.endswith(("`", " ")) or not text else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def escape_html(text: str) -> str:
    return text.translate(_HTML)


def esc(text: str) -> str:
    """Plain text for a Markdown line: no HTML, no accidental emphasis or links."""
    return _MD_SPECIAL.sub(r"\\\1", text.translate(_HTML))


def fence(text: str, lang: str = "") -> str:
    """A fenced code block that no content can close early."""
    longest = max((len(m) for m in re.findall(r"^[ \t]*(`{3,}|~{3,})", text, re.M)), default=0)
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
    src = posixpath.dirname(from_page).split("/") if "/" in from_page else []
    dst = to.split("/")
    common = 0
    while common < len(src) and common < len(dst) - 1 and src[common] == dst[common]:
        common += 1
    if ".." in src or ".." in dst or (from_page.startswith("/") != to.startswith("/")):
        base = "" if from_page.startswith("/") else "/"
        rel = posixpath.relpath(base + to, posixpath.dirname(base + from_page))
    else:
        rel = "/".join([".."] * (len(src) - common) + dst[common:])
    return rel if rel.startswith(".") else f"./{rel}"


_CODE_SPAN = re.compile(r"(`+)(?:.+?)\1")


def inline(text: str) -> str:
    """One line of prose from the source: code spans kept, HTML escaped elsewhere,
    and no accidental block syntax (headings, rules, quotes) at its start."""
    out: list[str] = []
    last = 0
    for span in _CODE_SPAN.finditer(text):
        out.append(escape_html(text[last : span.start()]))
        out.append(span.group(0))
        last = span.end()
    out.append(escape_html(text[last:]))
    line = "".join(out)
    stripped = line.lstrip()
    if stripped.startswith(("#", "+", "=", ">", "|", "---", "***", "___")) or re.match(r"\d+[.)]\s", stripped):
        line = "\\" + stripped
    return line


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


def first_line(doc: str | None) -> str:
    if not doc:
        return ""
    for line in doc.strip().splitlines():
        if line.strip():
            return line.strip()
    return ""


_SECTION_HINT = re.compile(
    r"^\s*(Args|Arguments|Parameters|Returns|Yields|Raises|Attributes|Example|Examples)\s*:?\s*$"
    r"|^\s*:(param|returns?|raises?|type|rtype)\b",
    re.M,
)


def prose(text: str) -> str:
    """Docstring prose as Markdown: doctest and indented blocks fenced, the rest escaped."""
    out: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.lstrip()
        if stripped.startswith(">>>"):
            block = []
            while i < len(lines) and lines[i].strip():
                block.append(lines[i].strip())
                i += 1
            out.append(fence("\n".join(block), "pycon"))
            continue
        if line.startswith(("    ", "\t")) and (not out or not out[-1].strip() or out[-1].endswith("::")):
            block = []
            while i < len(lines) and (lines[i].startswith(("    ", "\t")) or not lines[i].strip()):
                block.append(lines[i])
                i += 1
            while block and not block[-1].strip():
                block.pop()
            indent = min(len(b) - len(b.lstrip()) for b in block if b.strip())
            out.append(fence("\n".join(b[indent:] for b in block), ""))
            out.append("")
            continue
        out.append(inline(stripped))
        i += 1
    return "\n".join(out).strip()


def docstring_markdown(doc: str | None) -> str:
    """A docstring (Google, NumPy or reST style, or plain) as Markdown."""
    if not doc or not doc.strip():
        return ""
    if not _SECTION_HINT.search(doc):
        return prose(doc)
    try:
        import docstring_parser

        parsed = docstring_parser.parse(doc)
    except Exception:
        return prose(doc)
    parts: list[str] = []
    if parsed.short_description:
        parts.append(prose(parsed.short_description))
    if parsed.long_description:
        parts.append(prose(parsed.long_description))
    for title, group in (("**Parameters**", [p for p in parsed.params if p.args[:1] != ["attribute"]]),
                         ("**Attributes**", [p for p in parsed.params if p.args[:1] == ["attribute"]])):
        if group:
            rows = [title, ""]
            for p in group:
                kind = f" ({code(p.type_name)})" if p.type_name else ""
                desc = inline(" ".join((p.description or "").split()))
                rows.append(f"- {code(p.arg_name)}{kind}: {desc}".rstrip(": "))
            parts.append("\n".join(rows))
    if parsed.returns and (parsed.returns.description or parsed.returns.type_name):
        r = parsed.returns
        label = "**Yields**" if r.is_generator else "**Returns**"
        kind = f"{code(r.type_name)}: " if r.type_name else ""
        parts.append(f"{label}: {kind}{inline(' '.join((r.description or '').split()))}".rstrip(": "))
    examples = _doctest_blocks(doc)
    if parsed.raises:
        rows = ["**Raises**", ""]
        for e in parsed.raises:
            rows.append(f"- {code(e.type_name or 'Exception')}: {inline(' '.join((e.description or '').split()))}")
        parts.append("\n".join(rows))
    if examples:
        parts.append("**Examples**\n\n" + "\n\n".join(fence(b, "pycon") for b in examples))
    return "\n\n".join(p for p in parts if p)


def _doctest_blocks(doc: str) -> list[str]:
    blocks: list[list[str]] = []
    current: list[str] | None = None
    for line in doc.splitlines():
        stripped = line.strip()
        if stripped.startswith(">>>"):
            if current is None:
                current = []
                blocks.append(current)
            current.append(stripped)
        elif current is not None and stripped:
            current.append(stripped)
        else:
            current = None
    return ["\n".join(b) for b in blocks]
