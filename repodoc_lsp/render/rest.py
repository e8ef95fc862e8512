"""reST prose as Markdown: roles, hyperlinks, escapes, directives, literal blocks, doctests and
section titles; every other line made inert. Total: any text gives Markdown, never an error."""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterable

from repodoc_lsp.render.markdown import fence, inline

_ROLE = re.compile(r":(?:[A-Za-z][\w.+-]*:)*([A-Za-z][\w.+-]*):`([^`]+)`")
_LABEL_ROLES = frozenset({"ref", "doc", "term", "numref", "download", "envvar", "token", "keyword", "option"})
# A reference with a title: `Title <target>` (a role's, an epytext link's)
TITLED = re.compile(r"^(.*?)\s*<([^<>]+)>$", re.S)
_MAX_DEPTH = 8  # nested directives and indented blocks rendered as text; deeper ones fenced
_UNDERLINE = re.compile(r"([=\-~^\"'`#*+:.])\1{2,}")
_UNDERLINE_MARKS = frozenset("=-~^\"'`#*+:.")  # what `_UNDERLINE` starts with
DIRECTIVE = re.compile(r"^\.\.\s+([A-Za-z][\w:+-]*)::\s*(.*)$")
_CODE_DIRECTIVES = {"code", "code-block", "sourcecode", "testcode", "doctest", "testsetup", "testoutput",
                    "math", "highlight", "literalinclude", "parsed-literal"}


def _role_text(match: re.Match[str]) -> str:
    target = match.group(2).strip()
    titled = TITLED.match(target)
    if titled and titled.group(1):  # `Title <a.b.Target>`: the target, after the title when it says more
        title, target = titled.group(1), titled.group(2).strip()
        if match.group(1) in _LABEL_ROLES:  # `:ref:`the guide <guide-label>``: a label, not a name
            return " ".join(title.split())
        if says_more(title, target):  # a title of one word is code
            shown = title if any(c.isspace() for c in title) else f"``{title.replace('`', '')}``"
            return f"{shown} (``{target.lstrip('!~').replace('`', '')}``)"
    return "``" + target.lstrip("!~").replace("`", "") + "``"


_WORDS = re.compile(r"\w+")


def says_more(title: str, target: str) -> bool:
    """Whether a reference's title has a word its target lacks (`the adapter <a.B>`, not `B <a.B>`): then it
    is shown before the target, else the target alone."""
    return not set(_WORDS.findall(title)) <= set(_WORDS.findall(target))


def roles_as_literals(text: str) -> str:
    """reST roles (`:class:`~a.B``, `:func:`f``, `:math:`x``) as literals (``` ``a.B`` ```: the whole
    target, which says more on a page than Sphinx's short form; a title that says more than its
    target, `:class:`the adapter <a.B>``, kept before it: the adapter (``` ``a.B`` ```); of a label's
    role, `:ref:`the guide <guide-label>``, the title as text)."""
    return _ROLE.sub(_role_text, text) if ":`" in text else text


def clean(doc: str) -> str:
    """A docstring with tabs expanded, common indentation removed and edges stripped. A docstring that
    cleaning leaves as it is (most: the analysis keeps them cleaned, `ast.get_docstring`) is known so
    by `settled`, without cleaning it again."""
    if "\r" not in doc and "\t" not in doc and settled(doc):
        return doc
    return inspect.cleandoc(doc.expandtabs(8).replace("\r\n", "\n").replace("\r", "\n"))


def _indent_of(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def indented_block(lines: list[str], i: int, indent: int) -> tuple[list[str], int]:
    """The lines from `i` that are blank or indented more than `indent`, trailing blanks dropped."""
    block: list[str] = []
    while i < len(lines) and (not lines[i].strip() or _indent_of(lines[i]) > indent):
        block.append(lines[i])
        i += 1
    while block and not block[-1].strip():
        block.pop()
    return block, i


def _dedent(block: list[str]) -> str:
    indent = min((_indent_of(b) for b in block if b.strip()), default=0)
    return "\n".join(b[indent:] if b.strip() else "" for b in block).lstrip("\n")


def prose(text: str, depth: int = 0) -> str:
    """Docstring text as Markdown: doctests, literal blocks and code directives fenced, notes and
    other directives labelled, indented text kept as text (fenced below `_MAX_DEPTH` levels), every
    other line made inert."""
    out: list[str] = []
    lines = (text.expandtabs(8) if "\t" in text else text).splitlines()
    count = len(lines)
    i = 0
    literal_next = in_list = False
    while i < count:
        line = lines[i]
        stripped = line.strip()
        if not stripped:
            out.append("")
            in_list = False
            i += 1
            continue
        indent = len(line) - len(line.lstrip(" "))
        first = stripped[0]  # what a doctest or a directive starts with, looked at before the text
        if first == ">" and stripped.startswith(">>>"):
            block = []
            while i < len(lines) and lines[i].strip():
                block.append(lines[i][indent:] if _indent_of(lines[i]) >= indent else lines[i].strip())
                i += 1
            out += ["", fence("\n".join(block), "pycon"), ""]
            continue
        if first in "`~" and stripped.startswith(("```", "~~~")) and _FENCE_OPEN.fullmatch(stripped):
            code_text, i, info = _markdown_fence(lines, i, indent)
            out += ["", fence(code_text, info), ""]
            continue
        directive = DIRECTIVE.match(stripped) if first == "." and stripped.startswith("..") else None
        if directive:
            name, arg = directive.group(1).lower(), directive.group(2).strip()
            body, i = indented_block(lines, i + 1, indent)
            out += ["", *_directive(name, arg, _dedent(body), depth), ""]
            literal_next = False
            continue
        if indent > 0 and (not out or not out[-1]):
            indented, i = indented_block(lines, i, indent - 1)
            text_of = _dedent(indented)
            literal = literal_next or depth >= _MAX_DEPTH
            out += ["", fence(text_of, "") if literal else prose(text_of, depth + 1), ""]
            literal_next = False
            continue
        if stripped[-1] == ":" and stripped.endswith("::"):
            literal_next = True
            stripped = stripped[:-1] if len(stripped) > 2 and stripped[-3] != " " else stripped[:-2].rstrip()
            if not stripped:
                i += 1
                continue
        else:
            literal_next = False
        # a reST section title's underline starts with one of its marks (most lines have none after them)
        if i + 1 < count and lines[i + 1].lstrip()[:1] in _UNDERLINE_MARKS \
                and _is_underline(lines[i + 1], stripped, indent):
            out += ["", f"**{inline(roles_as_literals(stripped))}**", ""]  # a reST section title
            i += 2
            continue
        i += 1
        if "`" in stripped:  # a code span or literal left open here may close on a later line
            stripped, i = _spans_closed(lines, i, stripped)
        numbered = _NUMBERED.match(stripped) if first.isdigit() else None
        # a numbered list's item, kept one: after a blank line or an item, or a first item after `...:`
        if numbered and (in_list or not out or not out[-1]
                         or (out[-1][-1:] == ":" and numbered.group(1)[:2] in _FIRST)):
            out.append(numbered.group(1) + text_line(numbered.group(2)))
            in_list = True
            continue
        out.append(text_line(stripped))
    return _squeeze(out)


def _spans_closed(lines: list[str], i: int, line: str) -> tuple[str, int]:
    """`line`, holding a backtick, joined with the lines from `i` of its paragraph that close what it leaves
    open (a code span or reST link: an odd number of backticks; an inline literal: of ```` `` ````), and
    the line after those. Called for a line with a backtick only (most lines have none)."""
    joined = 0
    while line.count("`") % 2 and joined < 4 and i < len(lines) and lines[i].strip() \
            and not lines[i].lstrip().startswith(("..", ">>>")):
        line += " " + lines[i].strip()
        i += 1
        joined += 1
    if "``" in line and line.count("``") % 2:
        return _literal_closed(lines, i, line)
    return line, i


def _literal_closed(lines: list[str], i: int, line: str) -> tuple[str, int]:
    """`line` (which leaves an inline literal open: an odd number of ```` `` ````) joined with the lines
    from `i` of its paragraph up to the one closing the literal (reST's literals may cross lines), and
    the line after those; `line` and `i` as they are when none of the next 4 closes it."""
    joined, j = line, i
    while j < len(lines) and j - i < 4 and (next_line := lines[j].strip()) and not next_line.startswith(">>>") \
            and not (next_line.startswith("..") and next_line[2:3] in ("", " ")):  # `..., x``` is text
        joined += " " + next_line
        j += 1
        if not joined.count("``") % 2:
            return joined, j
    return line, i


# A numbered list's item (up to 3 digits: `2019. That year` is a sentence)
_NUMBERED = re.compile(r"(\d{1,3}[.)] +)(\S.*)$")
_FIRST = ("1.", "1)")  # a first item (the only one CommonMark starts a list with after a paragraph's line)


# A reST hyperlink: `text <https://url>`_ (or __, anonymous), or `<https://url>`_
_REST_LINK = re.compile(r"`([^`<>]*?)\s*<((?:https?|ftp)://[^<>`\s]+)>`__?")
# A reST reference to a named target, `Text`_ (the target's link is elsewhere): its text
_REST_REF = re.compile(r"(?<![`\\])`([^`<>]+)`__?(?![\w`])")
# reST escapes a text keeps as text: `\ ` (nothing: ``x``\ s is "xs") and a backslash right after an
# inline literal before a letter (``Tensor``\s)
_REST_ESCAPE = re.compile(r"\\ |(?<=`)\\(?=[A-Za-z])")


def text_line(line: str) -> str:
    """One line of reST prose as Markdown: roles as literals, hyperlinks as links, reST's escapes
    resolved, everything else made inert (`inline`)."""
    line = roles_as_literals(line)
    if "\\" in line:
        line = _REST_ESCAPE.sub("", line)
    if "`_" not in line:
        return inline(line)
    line = _REST_REF.sub(lambda m: m.group(1), line)
    out: list[str] = []
    last = 0
    for m in _REST_LINK.finditer(line):
        out.append(_piece(line[last:m.start()], last))
        title, url = m.group(1).strip() or m.group(2), m.group(2)
        out.append(f"[{_piece(title, 1)}]({url.replace('(', '%28').replace(')', '%29')})")
        last = m.end()
    out.append(_piece(line[last:], last))
    return "".join(out)


def _piece(text: str, at: int) -> str:
    """`inline` of a piece of a line starting at `at`: after the line's start, its edges' spaces kept
    and nothing escaped for being at a line's start."""
    if not at:
        return inline(text)
    body = text.strip(" ")
    done = inline("x" + body)[1:] if body else ""
    return text[: len(text) - len(text.lstrip(" "))] + done + (" " if body and text.endswith(" ") else "")


_FENCE_OPEN = re.compile(r"(`{3,}|~{3,})[ \t]*([^`]*?)[ \t]*$")


def _markdown_fence(lines: list[str], i: int, indent: int) -> tuple[str, int, str]:
    """A Markdown fenced block (docstrings written for mkdocstrings) opening at line `i`: its body (the
    opening line's indentation taken off), the line after its closing fence (or after the text, as
    CommonMark closes an unclosed fence), and its info string (its language, and attributes such as
    mkdocs' `test="skip"`)."""
    opened = _FENCE_OPEN.fullmatch(lines[i].strip())
    assert opened is not None  # `prose` looked
    mark = opened.group(1)
    body: list[str] = []
    j = i + 1
    while j < len(lines):
        line = lines[j]
        if line.strip().startswith(mark[0] * len(mark)) and not line.strip().strip(mark[0]):
            j += 1
            break
        body.append(line[indent:] if _indent_of(line) >= indent else line.lstrip(" "))
        j += 1
    return "\n".join(body), j, opened.group(2)


def _is_underline(line: str, title: str, indent: int) -> bool:
    """Whether `line` underlines `title` as a reST section title (`Title` over `~~~~~`)."""
    mark = line.strip()
    return len(mark) >= len(title) and _indent_of(line) == indent and bool(_UNDERLINE.fullmatch(mark))


_BLANK_LINES = re.compile(r"\n{3,}")


def _squeeze(lines: Iterable[str]) -> str:
    """Lines joined with at most one blank line between blocks, none at the edges (most texts have no
    two blank lines in a row: then nothing is replaced, found without `re.sub`)."""
    text = "\n".join(lines)
    return (_BLANK_LINES.sub("\n\n", text) if "\n\n\n" in text else text).strip("\n")


def _directive(name: str, arg: str, body: str, depth: int) -> list[str]:
    """A reST directive: code-like ones fenced, admonitions as a bold label, others named in code."""
    if name in _CODE_DIRECTIVES:
        lang = arg if name in ("code", "code-block", "sourcecode") and re.fullmatch(r"[\w+-]+", arg) else \
            ("pycon" if name == "doctest" else "")
        content = body if body.strip() else arg
        return [fence(content, lang)] if content.strip() else []
    label = name.replace("-", " ").replace("seealso", "see also").capitalize()
    if name in ("versionadded", "versionchanged", "deprecated", "deprecated-removed"):
        label = {"versionadded": "New in version", "versionchanged": "Changed in version"}.get(name, "Deprecated")
        label += f" {arg}" if arg else ""
        arg = ""
    head = f"**{inline(label)}**" + (f": {inline(roles_as_literals(arg))}" if arg else "")
    if depth >= _MAX_DEPTH:
        return [head, "", fence(body, "")] if body.strip() else [head]
    return [head, "", prose(body, depth + 1)] if body.strip() else [head]


def settled(text: str) -> bool:
    """`inspect.cleandoc(text.rstrip()) == text` (griffe's cleaning leaves `text` as it is) without
    cleaning it again (`docstring_markdown` cleaned it already): `cleandoc` only takes characters
    away, and takes none exactly when `text` neither starts nor ends with whitespace and, if it has
    more than one line, one of its other lines starts with a character that is not whitespace
    (their common indentation is none). A text with a tab (which `cleandoc` expands) is cleaned."""
    if "\t" in text:
        return inspect.cleandoc(text.rstrip()) == text
    if not text:
        return True
    if text[0].isspace() or text[-1].isspace():
        return False
    # a line after the first starting with a character that is not whitespace (`\S`: not `isspace`),
    # found where it is, the text not split into its lines (three times for each docstring)
    return "\n" not in text or _UNINDENTED_LINE.search(text) is not None


_UNINDENTED_LINE = re.compile(r"\n\S")
