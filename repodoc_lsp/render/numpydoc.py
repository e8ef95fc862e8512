"""A NumPy-style docstring's sections as griffe's NumPy parser makes them (griffe 2's `parse_numpy`
with `warnings=False`, no parent object), read here for the sections pages show: text, admonitions
(`Notes`, `See Also`, ...), parameters, other parameters, returns, yields, receives, raises, warns and
examples. A docstring with any other section (`Attributes`, `Deprecated`, `Methods`, ...) is None:
griffe reads it. The same objects (griffe's classes), each annotation griffe's reading of it, made once
per text; `tests/unit/test_numpydoc.py` compares them with griffe's on the docstrings it generates.
"""

from __future__ import annotations

import functools
import re
from textwrap import dedent
from typing import Any

# griffe's NumPy section titles (its `_section_kind`), with those read here
_READ = ("parameters", "other parameters", "returns", "yields", "receives", "raises", "warns", "examples")
_TITLES = frozenset((*_READ, "deprecated", "type parameters", "attributes", "functions", "methods", "classes",
                     "type aliases", "modules"))

# griffe's expressions (`numpy.py`)
_NAME = r"\*{0,2}[_a-z][_a-z0-9]*"
_RETURNS = re.compile(rf"""
    (?:
        (?P<nt_name>{_NAME})\s*:\s*(?P<nt_type>.+)  # name and type
        |  # or
        (?P<name>{_NAME})\s*:\s*  # just name
        |  # or
        \s*:\s*$  # no name, no type
        |  # or
        (?::\s*)?(?P<type>.+)\s*  # just type
    )
    """, re.IGNORECASE | re.VERBOSE)
_PARAMETER = re.compile(rf"""
    (?P<names>{_NAME}(?:,\s{_NAME})*)
    (?:
        \s:\s
        (?:
            (?:\{{(?P<choices>.+)\}})|
            (?P<type>.+)
        )?
    )?
    """, re.IGNORECASE | re.VERBOSE)
_DEFAULT = re.compile(r"^(?P<annotation>.+),\s+default(?: |: |=)(?P<default>.+)$")
_DOCTEST_BLANKLINE = re.compile(r"^\s*<BLANKLINE>\s*$")
_DOCTEST_FLAGS = re.compile(r"(\s*#\s*doctest:.+)$")


@functools.cache
def _griffe() -> Any:
    import griffe

    return griffe


@functools.lru_cache(maxsize=4096)
def _annotation(text: str) -> Any:
    """griffe's reading of an annotation in a docstring without a parent (the same for the same text)."""
    griffe = _griffe()
    return griffe.parse_docstring_annotation(text, griffe.Docstring(""))


def _blank(line: str) -> bool:
    return not line or line.isspace()


def _dashes(line: str) -> bool:
    return "-" in line and _blank(line.replace("-", ""))


def numpy_sections(value: str) -> list[Any] | None:
    """griffe's NumPy sections of the docstring `value` (cleaned as griffe cleans it), or None when it
    has a section not read here."""
    griffe = _griffe()
    lines = value.split("\n")
    count = len(lines)
    sections: list[Any] = []
    current: list[str] = []
    admonition = ""
    in_code = False
    offset = 0
    while offset < count:
        line = lines[offset]
        fence = "```" in line and line.lstrip(" ").startswith("```")
        if in_code:
            in_code = not fence
            current.append(line)
        elif fence:
            in_code = True
            current.append(line)
        elif not line or line.isspace():
            current.append("")
        elif offset == count - 1:
            current.append(line)
            _append(griffe, sections, current, admonition)
            admonition, current = "", []
        elif "-" in (below := lines[offset + 1]) and _blank(below.replace("-", "")):
            _append(griffe, sections, current, admonition)
            current = []
            title = line.lower()
            if title in _TITLES:
                if title not in _READ:
                    return None
                admonition = ""
                section, offset = _read(griffe, title, lines, offset + 2)
                if section:
                    sections.append(section)
            else:
                admonition = line
                offset += 1
        else:
            current.append(line)
        offset += 1
    _append(griffe, sections, current, admonition)
    return sections


def _append(griffe: Any, sections: list[Any], current: list[str], admonition: str) -> None:
    if admonition:
        kind = admonition.lower().replace(" ", "-")
        kind = kind[:-1] if kind in ("warnings", "notes") else kind
        sections.append(griffe.DocstringSectionAdmonition(kind=kind, text="\n".join(current).rstrip("\n"),
                                                          title=admonition))
    elif current and any(current):
        sections.append(griffe.DocstringSectionText("\n".join(current).rstrip("\n")))


def _read(griffe: Any, title: str, lines: list[str], offset: int) -> tuple[Any, int]:
    if title == "examples":
        return _examples(griffe, lines, offset)
    items, offset = _items(lines, offset)
    if title in ("parameters", "other parameters"):
        parameters = _parameters(griffe, items)
        if not parameters:
            return None, offset
        kind = griffe.DocstringSectionParameters if title == "parameters" else griffe.DocstringSectionOtherParameters
        return kind(parameters), offset
    if not items:
        return None, offset
    if title in ("raises", "warns"):
        element, kind = ((griffe.DocstringRaise, griffe.DocstringSectionRaises) if title == "raises"
                         else (griffe.DocstringWarn, griffe.DocstringSectionWarns))
        return kind([element(annotation=_annotation(item[0]), description=dedent("\n".join(item[1:])))
                     for item in items]), offset
    element, kind = {"returns": (griffe.DocstringReturn, griffe.DocstringSectionReturns),
                     "yields": (griffe.DocstringYield, griffe.DocstringSectionYields),
                     "receives": (griffe.DocstringReceive, griffe.DocstringSectionReceives)}[title]
    values: list[Any] = []
    for item in items:
        match = _RETURNS.match(item[0])
        if not match:
            continue
        name = match.group("nt_name") or match.group("name")
        annotation = match.group("nt_type") or match.group("type")
        values.append(element(name=name or "", annotation=_annotation(annotation) if annotation is not None else None,
                              description=dedent("\n".join(item[1:]))))
    return kind(values), offset


def _items(lines: list[str], offset: int) -> tuple[list[list[str]], int]:
    """griffe's `_read_block_items`: the items of a section, each its first line and what follows it."""
    count = len(lines)
    if offset >= count:
        return [], offset
    while _blank(lines[offset]):
        offset += 1
    items: list[list[str]] = []
    current = [lines[offset]]
    offset += 1
    while offset < count:
        line = lines[offset]
        if not line or line.isspace():
            current.append("")
        elif line[0] == " ":
            current.append(line[4:] if line.startswith("    ") else line.lstrip())
        elif offset + 1 < count and _dashes(lines[offset + 1]):
            break
        else:
            items.append(current)
            current = [line]
        offset += 1
    if current:
        items.append(current)
    return items, offset - 1


def _parameters(griffe: Any, items: list[list[str]]) -> list[Any]:
    parameters: list[Any] = []
    for item in items:
        match = _PARAMETER.match(item[0])
        if not match:
            continue
        annotation = match.group("type") or None
        choices = match.group("choices")
        default = None
        if choices:
            annotation = choices
            default = choices.split(", ", 1)[0]
        elif annotation and (with_default := _DEFAULT.match(annotation)):
            default, annotation = with_default.group("default"), with_default.group("annotation")
        if annotation and annotation.endswith(", optional"):
            annotation = annotation[:-10]
        description = "\n".join(item[1:]).rstrip() if len(item) > 1 else ""
        read = _annotation(annotation) if annotation is not None else None
        parameters.extend(griffe.DocstringParameter(name, value=default, annotation=read, description=description)
                          for name in match.group("names").split(", "))
    return parameters


def _block(lines: list[str], offset: int) -> tuple[str, int]:
    """griffe's `_read_block`: the lines up to the next section."""
    count = len(lines)
    if offset >= count:
        return "", offset
    while _blank(lines[offset]):
        offset += 1
    start = offset
    while offset < count:
        line = lines[offset]
        if (not line or line.isspace()) and ((offset < count - 1 and _dashes(lines[offset + 1]))
                                             or (offset < count - 2 and _dashes(lines[offset + 2]))):
            break
        offset += 1
    return "\n".join(lines[start:offset]).rstrip("\n"), offset - 1


def _examples(griffe: Any, lines: list[str], offset: int) -> tuple[Any, int]:
    """griffe's Examples section: text and doctests (their `doctest:` flags and `<BLANKLINE>` taken out)."""
    text, offset = _block(lines, offset)
    kinds = griffe.DocstringSectionKind
    parts: list[tuple[Any, str]] = []
    in_example = in_code = False
    prose: list[str] = []
    example: list[str] = []
    for line in text.split("\n"):
        if not line or line.isspace():
            if in_example:
                if example:
                    parts.append((kinds.examples, "\n".join(example)))
                    example = []
                in_example = False
            else:
                prose.append(line)
        elif in_example:
            example.append(_trimmed(line, blank=True))
        elif line.startswith("```"):
            in_code = not in_code
            prose.append(line)
        elif in_code:
            prose.append(line)
        elif line.startswith(">>>"):
            if prose:
                parts.append((kinds.text, "\n".join(prose).rstrip("\n")))
                prose = []
            in_example = True
            example.append(_trimmed(line, blank=False))
        else:
            prose.append(line)
    if prose:
        parts.append((kinds.text, "\n".join(prose).rstrip("\n")))
    elif example:
        parts.append((kinds.examples, "\n".join(example)))
    return (griffe.DocstringSectionExamples(parts) if parts else None), offset


def _trimmed(line: str, blank: bool) -> str:
    """An example's line without its doctest flags (and `<BLANKLINE>`), as griffe trims it: the
    expressions only on a line that holds what they look for."""
    if "doctest:" in line:
        line = _DOCTEST_FLAGS.sub("", line)
    if blank and "<BLANKLINE>" in line:
        line = _DOCTEST_BLANKLINE.sub("", line)
    return line
