"""Doc comments (Doxygen, JSDoc, Javadoc, rustdoc, Go) -> docstring text the page renderer already reads.

The comment markers are stripped; the tags become the Google-style sections a Python docstring has:
`@param x text` / `\\param x` -> "Args:", `@return(s)` -> "Returns:", `@throws`/`@exception` ->
"Raises:", `@note` -> "Note:", `@warning` -> "Warning:"; `@brief`/`\\brief` just drops its tag.
Other tags stay as text.
"""

from __future__ import annotations

import re

_LINE_MARK = re.compile(r"^\s*(?:///?<?|//!<?|//)\s?")
_BLOCK_OPEN = re.compile(r"^/\*[*!]?<?\s?")
_BLOCK_STAR = re.compile(r"^\s*\*(?!/) ?")
_TAG = re.compile(r"^\s*[@\\](\w+)(?:\[[^\]]*\])?\s*(.*)$")
_SECTION = {"param": "Args", "arg": "Args", "tparam": "Args", "return": "Returns", "returns": "Returns",
            "retval": "Returns", "result": "Returns", "throws": "Raises", "throw": "Raises",
            "exception": "Raises", "note": "Note", "warning": "Warning", "example": "Examples",
            "examples": "Examples"}
_NAMED = {"param", "arg", "tparam", "throws", "throw", "exception", "retval"}
_DROP = {"brief", "short", "details", "file", "fn", "class", "struct", "var", "def", "typedef"}


def is_doc(comment: str) -> bool:
    """A Doxygen/JSDoc/rustdoc doc comment (not an ordinary `//` or `/* */` one)."""
    return comment.startswith(("///", "//!", "/**", "/*!")) and not comment.startswith(("////", "/**/"))


def strip(comment: str) -> list[str]:
    """The text lines of one comment, markers removed."""
    if comment.startswith("/*"):
        body = comment[:-2] if comment.endswith("*/") else comment
        lines = body.split("\n")
        lines[0] = _BLOCK_OPEN.sub("", lines[0])
        return [_BLOCK_STAR.sub("", line).rstrip() for line in lines]
    return [_LINE_MARK.sub("", comment, count=1).rstrip()]


def docstring(comments: list[str]) -> str | None:
    """The docstring of the comments right above a definition, or None when there is no text."""
    lines: list[str] = []
    for comment in comments:
        lines.extend(strip(comment))
    return tagged(lines)


def tagged(lines: list[str]) -> str | None:
    """Doc comment lines (markers stripped) with their tags as Google-style sections."""
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    if not lines:
        return None
    prose: list[str] = []
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in lines:
        tag = _TAG.match(line)
        if tag and tag.group(1).lower() in _SECTION:
            name, rest = tag.group(1).lower(), tag.group(2).strip()
            current = sections.setdefault(_SECTION[name], [])
            if name in _NAMED:
                rest = re.sub(r"^\{[^}]*\}\s*", "", rest)  # JSDoc's {type}
                item, _, desc = rest.partition(" ")
                current.append(f"{item.strip('[]')}: {desc.strip().lstrip('- ')}")
            else:
                current.append(re.sub(r"^\{[^}]*\}\s*", "", rest))
        elif tag and tag.group(1).lower() in _DROP:
            current = None
            if tag.group(2).strip():
                prose.append(tag.group(2).strip())
        elif current is not None and line.strip():
            if current:
                current[-1] += " " + line.strip()
        else:
            current = None
            prose.append(line)
    text = "\n".join(prose).strip()
    for title, items in sections.items():
        text += f"\n\n{title}:\n" + "\n".join(f"    {item}" for item in items)
    return text.strip() or None
