"""The words that are code in a Markdown or reST document: what its keyword index lists of it.

Code is what the document marks as code: code blocks (Markdown fences; reST literal blocks after
`::`, code directives, doctest blocks), code spans (`` `x` `` in Markdown, ``` ``x`` ``` in reST), reST
roles' targets (`:func:`~pkg.name``) and API directives' arguments (`.. autoclass:: pkg.Name`). In
prose, headings and code blocks' output, only words shaped like code count: an inner capital
(`camelCase`, `JSONEncoder`), an underscore, a digit, or a dot between names (`app.config`); a
capitalised English word ("However", a sentence's first word, a heading's) is prose.
"""

from __future__ import annotations

import re

WORD = re.compile(r"(?<![0-9])[A-Za-z_][A-Za-z0-9_]{2,}")  # (not `x10fd` of `0x10fd`)
# prose tokens: names with their dots (`app.config`, not a sentence's closing dot)
_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_INNER_CAPITAL = re.compile(r"^_*[A-Za-z]+[a-z0-9][A-Z]|^_*[A-Z]{2,}[a-z]{2,}")  # camelCase, CamelCase, JSONEncoder
_URL = re.compile(r"\b(?:https?|ftp|mailto|file):\S*|\]\([^)\s]*\)|<[a-z]+://[^>\s]*>")
_MD_SPAN = re.compile(r"(`+)(.+?)\1")
_EMPHASIS = re.compile(r"^_[^_](?:.*[^_])?_$")  # Markdown's `_word_`
_REST_LITERAL = re.compile(r"``(.+?)``")
# :role:`target`, :py:func:`title <target>`; `interpreted` (the default role) when not a link (`text`_)
_REST_ROLE = re.compile(r":([\w.+-]+(?::[\w.+-]+)?):`([^`]+)`")
_MYST_FENCE = re.compile(r"^\s*(?:`{3,}|~{3,})\s*\{[^}]*\}")  # ```{autofunction} pkg.name
_MYST_ROLE = re.compile(r"\{([\w.+:-]+)\}`([^`]+)`")  # MyST's {role}`target`
_REST_DEFAULT = re.compile(r"(?<![:`\w])`([^`\s<>]+)`(?![_`\w])")
_PROSE_ROLES = frozenset({"doc", "ref", "term", "numref", "download", "pep", "rfc", "abbr", "guilabel",
                          "menuselection", "issue", "pr", "user", "gh", "ghissue", "ghpull", "bpo", "sub",
                          "sup", "emphasis", "strong", "title-reference", "math", "dfn", "file", "samp",
                          "mimetype", "kbd"})
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})\s*(\{[\w:-]+\}\s*[\w+.-]*|[\w+.-]*)")
_DIRECTIVE = re.compile(r"^(\s*)\.\.\s+(?:[\w-]+:)?([\w-]+)::(.*)$")
_REST_EXPLICIT = re.compile(r"^(\s*)\.\.(?:\s|$)")  # a comment, target or substitution: no prose
_CODE_DIRECTIVES = frozenset({"code", "code-block", "sourcecode", "doctest", "testcode", "testsetup",
                              "testcleanup", "testoutput", "ipython", "literalinclude", "jupyter-execute"})
_API_DIRECTIVES = frozenset({"module", "currentmodule", "autoclass", "autofunction", "automodule",
                             "automethod", "autoattribute", "autodata", "autoexception", "class",
                             "function", "method", "attribute", "data", "exception", "decorator",
                             "property", "classmethod", "staticmethod", "envvar", "program", "option"})
_PROSE_BLOCKS = frozenset({"text", "txt", "none", "markdown", "md", "rst", "restructuredtext", "output",
                           "pytb", "py3tb", "traceback"})  # (a traceback's message is prose)
_MARKUP_BLOCKS = ("html", "jinja", "xml", "django", "svg")
_PROMPT = re.compile(r"^\s*(?:>>>|\.\.\.(?:\s|$)|[$%>]\s|In \[\d+\]:)")
_TRIPLE_QUOTES = re.compile(r"\"\"\"|'''")
_STRING = re.compile(r"\"[^\"\n]*\"|'[^'\n]*'")
# a string of words, not of code: a space and no `(` or `;`, or three plain words in a row
_MESSAGE = re.compile(r"^.[^();]* [^();]*.$|.*\b[a-z]+ [a-z]+ [a-z]+\b")
_OPTION = re.compile(r"^\s*:[\w-]+:")  # a directive's option (`:caption: app.py`: a file's name is code)
_COMMENT = re.compile(r"(?:^|\s)(?:#|//)(?!include|define|!).*$|<!--.*?(?:-->|$)|\{#.*?(?:#\}|$)")
_TAG = re.compile(r"<[^<>]*>?|\{[{%].*?(?:[}%]\}|$)")


def code_like(word: str) -> bool:
    """A word of prose that is shaped like code: an underscore, a digit, an inner capital or a dot."""
    return ("_" in word.strip("_") or word.startswith("_") or "." in word or any(c.isdigit() for c in word)
            or bool(_INNER_CAPITAL.match(word)))


def prose_words(text: str) -> set[str]:
    """Words of prose (URLs left out) shaped like code, dotted names as their parts."""
    found: set[str] = set()
    for token in _TOKEN.findall(_URL.sub(" ", text)):
        token = token[1:-1] if _EMPHASIS.match(token) else token
        if code_like(token):
            found.update(w for w in WORD.findall(token) if "." in token or code_like(w))
    return found


def code_words(line: str, lang: str) -> set[str]:
    """The names of one line of a code block in language `lang` ("" if unsaid): its strings with a
    space (messages) and URLs left out, its comments read as prose; markup's text between tags is prose."""
    lang = lang.lower()
    if lang in _PROSE_BLOCKS:
        return prose_words(line)
    if any(m in lang for m in _MARKUP_BLOCKS) or (not lang and line.lstrip().startswith(("<", "{%", "{{"))):
        return code_words(" ".join(m.group(0) for m in _TAG.finditer(line)), "markup-code") \
            | prose_words(_TAG.sub(" ", line))
    line = _STRING.sub(lambda m: " " if _MESSAGE.match(m.group(0)) else m.group(0), _URL.sub(" ", line))
    found: set[str] = set()
    for comment in _COMMENT.finditer(line):
        found |= {w for span in _MD_SPAN.finditer(comment.group(0)) for w in span_words(span.group(2))}
        found |= prose_words(_MD_SPAN.sub(" ", comment.group(0)))
    return found | set(WORD.findall(_COMMENT.sub(" ", line)))


# `ValueError: message`, `pkg.errors.Bad: message` (not `Instance: /path` of a command's output)
_EXCEPTION_LINE = re.compile(r"^\s*((?:\w+\.)*\w*(?:Error|Exception|Warning|Exit|Interrupt|Iteration)|(?:\w+\.)+\w+): ")
_REPR = re.compile(r"\w\(|[\[{=<]")  # a call (`C(x=1)`), a list, a dict, an `=`, a `<...>`


def _output_words(line: str) -> set[str]:
    """What a session's output line (no prompt) names: a repr's names (`C(x=1)`, `False`), an
    exception's name (its message is prose); other output is prose."""
    exception = _EXCEPTION_LINE.match(line)
    if line.lstrip().startswith("Traceback ("):
        return set()
    if exception:
        message = line[exception.end():]  # a repr (`('x', 1)`), or prose
        return set(WORD.findall(exception.group(1))) | (
            code_words(message, "python") if message.lstrip()[:1] in "([{<" else prose_words(message))
    return code_words(line, "python") if _REPR.search(line) or " " not in line.strip() else prose_words(line)


def _block_words(body: list[str], lang: str) -> set[str]:
    """A code block's words: with prompts (`>>>`, `$`), the lines without one are output; the lines
    of a docstring (between triple quotes) are prose."""
    prompted = any(_PROMPT.match(line) for line in body)
    found: set[str] = set()
    in_docstring = False
    for line in body:
        quotes = len(_TRIPLE_QUOTES.findall(line))
        if in_docstring:  # (and the line that closes it)
            found |= prose_words(line)
            in_docstring = quotes % 2 == 0
        elif quotes % 2:  # a docstring opens: code, then prose
            head, tail = _TRIPLE_QUOTES.split(line, 1)
            found |= code_words(_PROMPT.sub(" ", head), lang) | prose_words(tail)
            in_docstring = True
        elif prompted and not _PROMPT.match(line):
            found |= _output_words(line)
        else:
            found |= code_words(_PROMPT.sub(" ", line), "console" if lang.lower() in _PROSE_BLOCKS else lang) \
                if prompted else code_words(line, lang)
    return found


def span_words(text: str) -> set[str]:
    """The names in a code span or a role's target (`~pkg.mod.Name` -> pkg, mod, Name); of an
    exception with its message (`ValueError: bad input`), its name."""
    exception = _EXCEPTION_LINE.match(text)
    if exception and " " in text[exception.end():].strip():
        return set(WORD.findall(exception.group(1))) | prose_words(text[exception.end():])
    return set(WORD.findall(text))


# the lines (0-based) of a document's code blocks, each with its block: (first line, language)
CodeLines = dict[int, tuple[int, str]]


def markdown_code_lines(lines: list[str]) -> CodeLines:
    """Markdown: the lines of fenced code blocks (the fences as language "-")."""
    code: CodeLines = {}
    fence: tuple[str, int, str] | None = None
    for i, line in enumerate(lines):
        marker = _FENCE.match(line)
        if fence is not None:
            closes = marker is not None and marker.group(1)[0] == fence[0][0] \
                and len(marker.group(1)) >= len(fence[0]) and not marker.group(2)
            code[i] = (i, "-") if closes else (fence[1], fence[2])
            fence = None if closes else fence
        elif marker:
            fence = (marker.group(1), i, _fence_language(marker.group(2)))
            code[i] = (i, "api" if fence[2] == "api" else "-")
    # a prose directive's body is Markdown, its options (`:start-after: x`) no prose
    return {i: (i, "-") if where[1] == "{prose}" else where for i, where in code.items()
            if where[1] != "{prose}" or lines[i].lstrip().startswith(":")}


def _fence_language(info: str) -> str:
    """A fence's language; a MyST directive's (```` ```{code-block} python ````): its language if it holds
    code, "api" for an API directive (its argument), else "{prose}" (its body is Markdown)."""
    if not info.startswith("{"):
        return info
    name, _, language = info[1:].partition("}")
    name = name.split(":")[-1].lower()
    if name in _CODE_DIRECTIVES:
        return language.strip() or "python"
    return "api" if name in _API_DIRECTIVES else "{prose}"


def _blocks_words(blocks: dict[tuple[int, str], list[str]]) -> set[str]:
    found: set[str] = set()
    for (_, lang), body in blocks.items():
        found |= span_words(" ".join(body)) if lang in ("api", "caption") else _block_words(body, lang)
    return found


def _paragraphs(lines: list[str], code: CodeLines, blocks: dict[tuple[int, str], list[str]]) -> list[str]:
    """The prose of a document, a paragraph a string (a span or literal may go on over a line's end);
    its code blocks' lines gathered in `blocks`, its API directives' and captions' lines as code."""
    paragraphs, para = [], []
    for i, line in enumerate(lines):
        where = code.get(i)
        if (where is None or where[1] == "argument") and line.strip():
            para.append(_DIRECTIVE.sub(r"\3", line).strip())
            continue
        if para:
            paragraphs.append(" ".join(para))
            para = []
        if where is not None and where[1] in ("api", "caption"):
            blocks.setdefault(where, []).append(_DIRECTIVE.sub(r"\3", _OPTION.sub(" ", _MYST_FENCE.sub(" ", line))))
        elif where is not None and where[1] != "-":
            blocks.setdefault(where, []).append(line)
    return [*paragraphs, " ".join(para)] if para else paragraphs


def _role_words(role: str, target: str) -> set[str]:
    """A role's target names code unless the role is of prose (`:doc:`, `:ref:`, ...)."""
    if role.split(":")[-1].lower() in _PROSE_ROLES:
        return set()
    return span_words(target.rsplit("<", 1)[1] if target.endswith(">") and "<" in target else target)


def markdown_words(lines: list[str], code: CodeLines) -> set[str]:
    found: set[str] = set()
    blocks: dict[tuple[int, str], list[str]] = {}
    for para in _paragraphs(lines, code, blocks):
        for role in _MYST_ROLE.finditer(para):
            found |= _role_words(role.group(1), role.group(2))
        para = _MYST_ROLE.sub(" ", para)
        for span in _MD_SPAN.finditer(para):
            found |= span_words(span.group(2))
        found |= prose_words(_MD_SPAN.sub(" ", para))
    return found | _blocks_words(blocks)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


_LIST_MARKER = re.compile(r"\s*(?:[-*+•]|\(?(?:\d+|[#a-zA-Z])[.)])\s+")


def _text_indent(line: str) -> int:
    """Where a line's text starts, past a list item's marker: a literal block in an item is indented
    from there."""
    marker = _LIST_MARKER.match(line)
    return marker.end() if marker else _indent(line)


def rest_code_lines(lines: list[str]) -> CodeLines:
    """reST: the lines of literal blocks (after `::`), code directives and doctest blocks; explicit
    markup that is no prose (comments, targets, code directives' lines) as language "-", API
    directives' lines as "api"."""
    code: CodeLines = {}
    block: tuple[int, int, str] | None = None  # (indent the body must exceed, first line, language)
    for i, line in enumerate(lines):
        stripped = line.strip()
        if block is not None:
            if not stripped or _indent(line) > block[0]:
                option = _OPTION.match(line) if code.get(i - 1, (0, ""))[1] == "-" else None  # a code directive's
                if stripped:
                    code[i] = (i, "caption" if option and option.group(0).strip() == ":caption:" else "-") \
                        if option else block[1:]
                continue
            block = None
        if not stripped:
            continue
        directive = _DIRECTIVE.match(line)
        explicit = _REST_EXPLICIT.match(line)
        if directive:
            name = directive.group(2).lower()
            if name in _CODE_DIRECTIVES:
                block = (_text_indent(line), i, directive.group(3).strip() or "python")
                code[i] = (i, "-")
            else:  # an API directive names code; another's argument (`.. note:: Use ``x``.`) is prose
                code[i] = (i, "api" if name in _API_DIRECTIVES else "argument")
        elif explicit and not stripped.startswith(".. ["):
            block = (_indent(line), i, "-")
            code[i] = (i, "-")
        elif stripped.startswith(">>>"):
            code[i] = (i, "pycon")
        elif stripped.endswith("::"):
            block = (_text_indent(line), i + 1, "")
    return code


def rest_words(lines: list[str], code: CodeLines) -> set[str]:
    found: set[str] = set()
    blocks: dict[tuple[int, str], list[str]] = {}
    for para in _paragraphs(lines, code, blocks):
        for role in _REST_ROLE.finditer(para):
            found |= _role_words(role.group(1), role.group(2))
        for literal in _REST_LITERAL.finditer(para):
            found |= span_words(literal.group(1))
        rest = _REST_LITERAL.sub(" ", _REST_ROLE.sub(" ", para))
        for default in _REST_DEFAULT.finditer(rest):
            found |= span_words(default.group(1))
        found |= prose_words(_REST_DEFAULT.sub(" ", rest))
    return found | _blocks_words(blocks)
