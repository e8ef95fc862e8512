"""Epytext (pydoctor's docstring format: Twisted and its ecosystem) as the reST `docstrings.py` renders.

Fields (`@param x:`, `@type x:`, `@return:`, `@rtype:`, `@raise E:`, `@ivar x:`, ...) become the
Sphinx fields griffe parses (`:param x:`, ...), other known fields (`@see:`, `@since:`, `@note:`, ...)
directives (`.. seealso::`); inline markup becomes reST: `C{x}` and `L{x}` literals (so that workspace
names are linked as other code spans are), `I{x}` and `B{x}` emphasis, `U{url}` a link. Doctests and
literal blocks are left as they are. Every word of the docstring is kept.
"""

from __future__ import annotations

import re

from repodoc_lsp.render.rest import TITLED, says_more

# Field tags read as Sphinx fields, and the Sphinx field each is (`type` is `vartype` for a variable)
_AS_FIELD = {"param": "param", "parameter": "param", "arg": "param", "argument": "param", "type": "type",
             "keyword": "keyword", "kwarg": "keyword", "kwparam": "keyword", "return": "returns",
             "returns": "returns", "rtype": "rtype", "returntype": "rtype", "raise": "raises", "raises": "raises",
             "except": "raises", "exception": "raises", "ivar": "ivar", "cvar": "cvar", "var": "var"}
# Field tags of no argument shown as a directive of this name (labelled, its text below)
_AS_DIRECTIVE = {"see": "seealso", "warn": "warning", "since": "versionadded",
                 **{tag: tag for tag in ("seealso", "note", "warning", "deprecated", "author", "organization",
                                         "copyright", "license", "contact", "version", "todo", "change", "requires",
                                         "precondition", "postcondition", "invariant", "bug", "attention",
                                         "summary")}}
_FIELD = re.compile(r"^([ \t]*)@(" + "|".join(sorted({*_AS_FIELD, *_AS_DIRECTIVE}, key=len, reverse=True))
                    + r")\b([ \t]+[^:\n]*?)?[ \t]*:(?!\S)", re.M)
# Inline markup: a capital letter right before a brace (not after a word character or a backslash:
# `\N{DASH}`, `f"C{x}"`), innermost first (no brace inside)
_MARKUP = re.compile(r"(?<![\w\\$])([BCILMUX])\{([^{}]*)\}")
_ESCAPE = re.compile(r"(?<![\w\\$])E\{(lb|rb)\}")
_URL = re.compile(r"(?:https?|ftp)://\S+|mailto:\S+")
# What makes a docstring epytext, each pattern starting with a character (`{`, `@`) that `re` finds by a
# fast scan, not trying a match at every position: a tag (then checked to start its line), or a code,
# link or URL markup (`C{x}`, `L{x}`, `U{x}`; not `I{` nor `B{`: `B{k}(z)` is a formula's, bench/README.md)
_BRACE = re.compile(r"\{(?<=[CLU]\{)(?<![\w\\$][A-Z]\{)[^{}]*\}")
_TAG = re.compile(r"@(?:" + "|".join(sorted({*_AS_FIELD, *_AS_DIRECTIVE}, key=len, reverse=True)) + r")\b")


def epytext_as_rest(text: str, *, summary: bool = False) -> str:
    """`text` (a cleaned docstring) with its epytext fields and markup as reST, or as it is when it has
    none. Cheap for other docstrings: most hold neither `@` nor `{` (two substring checks); the others
    one search. A `summary` is one line shown as Markdown, not reST: a `U{url}` there is its text."""
    if not _has_epytext(text):
        return text
    if "::" not in text and ">>>" not in text:  # no literal block nor doctest (most): all of it at once
        return _converted(text, summary)
    out: list[str] = []
    plain: list[str] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.lstrip()
        doctest = stripped.startswith(">>>")
        opener = "" if doctest or not stripped else _literal_opener(out, plain)
        if not doctest and (not opener or len(line) - len(stripped) <= len(opener) - len(opener.lstrip())):
            plain.append(line)
            i += 1
            continue
        # a doctest (to its blank line) or a literal block (its lines indented more): kept as they are
        if plain:
            out.append(_converted("\n".join(plain), summary))
            plain = []
        indent = len(opener) - len(opener.lstrip())
        while i < len(lines) and (lines[i].strip() if doctest
                                  else not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > indent):
            out.append(lines[i])
            i += 1
    if plain:
        out.append(_converted("\n".join(plain), summary))
    return "\n".join(out)


def epytext_field(line: str) -> bool:
    """Whether the stripped `line` is an epytext field's first line (`@param x: ...`)."""
    return line[:1] == "@" and _FIELD.match(line) is not None


def _has_epytext(text: str) -> bool:
    """Whether `text` is epytext: has a field (a tag starting its line) or a code, link or URL markup."""
    if "{" in text and _BRACE.search(text):
        return True
    if "@" in text:
        for m in _TAG.finditer(text):
            if not text[text.rfind("\n", 0, m.start()) + 1:m.start()].strip(" \t"):
                return True
    return False


def _literal_opener(out: list[str], plain: list[str]) -> str:
    """The line ending with `::` that opens a literal block at the line after `plain` (or, `plain`
    empty, `out`): the last line before it that is not blank, blank lines between (at least one);
    else ""."""
    if plain and plain[-1].strip():
        return ""
    for chunk in (reversed(plain) if plain else (line for c in reversed(out) for line in reversed(c.split("\n")))):
        if chunk.strip():
            return chunk if chunk.rstrip().endswith("::") else ""
    return ""


def _converted(text: str, summary: bool) -> str:
    if "@" in text:
        text = _fields(text)
    if "{" in text:
        for _ in range(4):  # nested markup, innermost first
            text, n = _MARKUP.subn(lambda m: _markup(m.group(1), m.group(2), summary), text)
            if not n or "{" not in text:  # nothing was inside another, or no brace is left
                break
        text = _ESCAPE.sub(lambda m: "{" if m.group(1) == "lb" else "}", text)
    return text


def _fields(text: str) -> str:
    """Epytext fields as Sphinx fields or directives; `@type x:` of a variable (`@ivar x`, no
    `@param x`) as `:vartype x:`."""
    found = list(_FIELD.finditer(text))
    if not found:
        return text
    named = {kind: {(m.group(3) or "").strip() for m in found if _AS_FIELD.get(m.group(2)) in kinds}
             for kind, kinds in (("param", ("param", "keyword")), ("var", ("ivar", "cvar", "var")))}
    out: list[str] = []
    last = 0
    for m in found:
        indent, tag, arg = m.group(1), m.group(2), " ".join((m.group(3) or "").split())
        out.append(text[last:m.start()])
        last = m.end()
        if tag in _AS_FIELD:
            field = _AS_FIELD[tag]
            if field == "type" and arg:
                out.append(_type_field(indent, arg, named["param"], named["var"]))
                continue
            out.append(f"{indent}:{field}{' ' + arg if arg else ''}:")
        elif arg:  # a field of no argument given one: left as it is
            out.append(m.group(0))
        else:
            while last < len(text) and text[last] in " \t":
                last += 1
            rest_end = text.find("\n", last)
            first = text[last:] if rest_end < 0 else text[last:rest_end]
            name = _AS_DIRECTIVE[tag]
            if name == "versionadded" and len(first.split()) <= 2:
                out.append(f"{indent}.. {name}:: ")  # `@since: 12.0`: "New in version 12.0"
            else:  # its text as the directive's body, below it
                out.append(f"{indent}.. {name}::\n{indent}    " if first.strip() else f"{indent}.. {name}::")
    out.append(text[last:])
    return "".join(out)


def _type_field(indent: str, name: str, params: set[str], variables: set[str]) -> str:
    """`@type name:` as a Sphinx field: of a parameter (`:type`), of a variable (`:vartype`); of a name no
    other field names, of a parameter given an empty field (of a variable in a docstring of variables
    only): griffe's parser drops a type whose parameter or variable has no field."""
    if name in params:
        return f"{indent}:type {name}:"
    if name in variables:
        return f"{indent}:vartype {name}:"
    if variables and not params:
        return f"{indent}:ivar {name}:\n{indent}:vartype {name}:"
    return f"{indent}:param {name}:\n{indent}:type {name}:"


def _markup(kind: str, body: str, summary: bool) -> str:
    """One piece of inline markup as reST (Markdown's emphasis: `prose` keeps `*` as it is)."""
    if kind == "X":  # an index term: its text
        return body
    flat = " ".join(body.split())  # a literal or a link may not cross lines
    if not flat:
        return ""
    if kind in "CM":
        return _literal(flat)
    if kind == "L":
        titled = TITLED.match(flat)
        if titled and titled.group(1):  # `L{the reactor <twisted.internet.reactor>}`: both kept
            title, target = titled.group(1), titled.group(2).strip()
            if not says_more(title, target):  # `L{SSHChannel<ssh.SSHChannel>}`
                return _literal(target)
            return f"{title} ({_literal(target)})"
        return _literal(flat.removesuffix("()"))
    if kind == "U":
        titled = TITLED.match(flat)
        title, url = (titled.group(1) or titled.group(2), titled.group(2).strip()) if titled else (flat, flat)
        if summary or not _URL.fullmatch(url):
            return title if title == url else f"{title} ({url})"
        return f"`{title} <{url}>`_"
    mark = "*" if kind == "I" else "**"
    return f"{mark}{body.strip()}{mark}" if "*" not in body else body


def _literal(text: str) -> str:
    """`text` as a reST literal (as `roles_as_literals` writes a role's target)."""
    return f"``{text}``" if "`" not in text else text
