"""Hand-written docs -> the code-like references in them (names, links, paths), with positions.

Markdown is read with markdown-it-py (code blocks, HTML and prose are never references; only code
spans, MyST roles and links are looked at). reStructuredText, plain text and docstrings are read
by a line scanner that knows literal blocks (`::`, code directives, doctest lines) and roles:
docutils would parse reST fully but cannot read Sphinx roles and directives without Sphinx
registering them (unknown ones become error nodes without reliable positions), and costs far
more per docstring than this scan over a large project's 100,000 of them.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING

from repodoc_lsp.refs.examples import PYTHON_FENCES, code_imports, star_uses
from repodoc_lsp.refs.model import LINK, NAME, PATH, Ref

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

DESCRIBED = "described:"  # the role of what a description written by hand names (`described:py:function`)
# Sphinx roles (and MyST's {role}) whose target is a Python object
PY_ROLES = frozenset({"class", "func", "meth", "mod", "attr", "exc", "data", "obj", "const", "function",
                      "method", "module", "attribute", "exception"})
AUTODOC = re.compile(r"auto(class|function|method|module|attribute|exception|data|decorator)$")
# a dotted Python name, optionally called: `pkg.mod.Class.method()`
DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?:\(\))?")
# one CamelCase name (a class, as people write them): `Widget`, `HTTPServer`; not `README`
CAMEL = re.compile(r"_?[A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*(?:\(\))?")
# a relative path to a file: `src/pkg/mod.py`, `docs/guide.md` (no spaces, no wildcards)
FILE_PATH = re.compile(r"(?:\./)?[\w.-]+(?:/[\w.-]+)*/[\w-][\w.-]*\.[A-Za-z0-9]{1,8}")
FILE_SUFFIXES = frozenset({"py", "pyi", "pyx", "md", "rst", "txt", "toml", "cfg", "ini", "json", "yaml", "yml",
                           "html", "js", "ts", "sh", "c", "h", "cpp", "cc", "hpp", "cu", "so", "whl", "gz", "zip",
                           "tar", "lock", "in", "csv", "log", "xml", "env", "sql", "exe", "dll", "pth", "pt"})


# History names what is gone on purpose: changelogs, release notes and announcements, upgrade and
# migration guides, deprecation pages are not checked
HISTORY = re.compile(r"(^|/)(changes|changelog|history|news|release[-_ ]?notes|whatsnew|what[-_]s[-_]new"
                     r"|versions|version[-_]?history|historical([-_ ]?notes)?"
                     r"|upgrad(e|ing)|migrat(e|ion|ions|ing)|deprecat(ed|ion|ions)|porting|announce(ment)?s?)"
                     r"([-_.][^/]*)?$|(^|/)(changelog|changes|whatsnew|release[-_]?notes|releases|announce(ment)?s?"
                     r"|upgrad(e|ing)|migrat(ion|ions|ing))(\.d)?/", re.IGNORECASE)
# metasyntactic names: a span holding one is an example, not a reference
PLACEHOLDERS = frozenset({"foo", "bar", "baz", "qux", "quux", "spam", "eggs", "ham", "func", "function", "method",
                          "meth", "class", "cls", "klass", "obj", "myclass", "myfunc", "mymodule", "mypackage",
                          "my_module", "my_package", "example", "xxx", "yyy", "someclass", "some_function",
                          "something", "whatever", "attribute", "module", "package", "name"})


def classify(body: str, line: int, col: int, *, role: str = "", module: str = "", cls: str = "") -> Ref | None:
    """A code span or role target -> a reference, or None when it is not code-like (or an example:
    `attrs.Foo`, `mod.func()`)."""
    if any(p.lower() in PLACEHOLDERS for p in re.split(r"[./()]", body.lstrip("~!."))):
        return None
    if role:
        if role.split(":")[-1] not in PY_ROLES:
            return None
        if "<" in body and body.rstrip().endswith(">"):  # `title <target>`
            start = body.rindex("<") + 1
            col, body = col + start, body[start:-1]
        stripped = body.lstrip("~!.")
        col += len(body) - len(stripped)
        if not re.fullmatch(r"[A-Za-z_][\w.]*(?:\(\))?", stripped):
            return None
        return Ref(NAME, stripped.removesuffix("()"), line, col, explicit=True, role=role, module=module, cls=cls)
    if DOTTED.fullmatch(body) and not FILE_PATH.fullmatch(body):
        if body.rsplit(".", 1)[-1].lower() in FILE_SUFFIXES:
            return None  # `setup.py`, `conf.py`: a file name, not a name
        return Ref(NAME, body.removesuffix("()"), line, col, module=module)
    if CAMEL.fullmatch(body):
        return Ref(NAME, body.removesuffix("()"), line, col, module=module)
    if FILE_PATH.fullmatch(body) and not body.startswith(("/", "~")):
        return Ref(PATH, body, line, col)
    return None


# -- Markdown -------------------------------------------------------------------------------
@functools.cache
def _markdown() -> MarkdownIt:
    """The Markdown parser, made when a Markdown file is first read (importing markdown-it-py was a
    twentieth of a check that reads none)."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table")


MARKUP_SUFFIXES = (".md", ".markdown", ".rst", ".txt")  # a page of hand-written docs
_MYST_ROLE = re.compile(r"\{([\w:.+-]+)\}$")
_MYST_LABEL = re.compile(r"^\(([^()\s]+)\)=\s*$", re.MULTILINE)


def markdown_refs(text: str) -> list[Ref]:
    lines = text.split("\n")
    out: list[Ref] = []
    block = _Block("", -1)
    runs: list[tuple[int, list[str]]] = []  # each Python code block: (1-based first line, its lines)
    for token in _markdown().parse(text):
        if token.type in ("fence", "code_block") and token.map is not None \
                and token.info.strip().split(" ")[0].lower() in PYTHON_FENCES:
            first_line = token.map[0] + (1 if token.type == "fence" else 0)
            last = token.map[1] - (1 if token.type == "fence" else 0)
            runs.append((first_line + 1, lines[first_line:last]))
            out.extend(code_imports(lines[first_line : token.map[1]], first_line + 1))
        if token.type != "inline" or token.map is None or not token.children:
            continue
        first = token.map[0]
        if first != block.first or token.map[1] != block.last:  # a table's cells share their row
            block = _Block("\n".join(lines[first : token.map[1]]), first, token.map[1])
        previous: Token | None = None
        linked = False  # inside a link to a page of the project's docs: `[`QueryParams`](requests.md#query)`
        for child in token.children:
            if child.type == "code_inline":
                line, col = block.line_col(block.code_span(child.content, len(child.markup)))
                role = ""
                if previous is not None and previous.type == "text" and (m := _MYST_ROLE.search(previous.content)):
                    role = m.group(1)
                if (ref := classify(child.content, line, col, role=role)) is not None:
                    # a name linked to its documentation is a cross-reference, as a role is
                    out.append(replace(ref, explicit=True) if linked and ref.kind == NAME else ref)
            elif child.type == "link_open" and child.markup not in ("autolink", "linkify"):
                raw, where = block.link(str(child.attrs.get("href", "")))
                linked = _is_relative(raw) and raw.split("#")[0].lower().endswith(MARKUP_SUFFIXES)
                if _is_relative(raw):
                    line, col = block.line_col(where)
                    out.append(Ref(LINK, raw, line, col, explicit=True))
            elif child.type == "link_close":
                linked = False
                block.after_link()
            if child.type not in ("softbreak", "hardbreak"):
                previous = child
    out.extend(star_uses(runs))
    return out


_BACKTICKS = re.compile(r"`+")
_LINK_TARGET = re.compile(r"\]\(\s*<?([^)\s>]+)")
_NEAR = 512  # characters searched past the cursor for a span or link markdown-it rewrote


class _Block:
    """One inline block's source (its lines joined), where its code spans and links are: each
    found after the previous one (`cursor`), in time linear in the block's size however many there
    are (markdown-it gives no positions inside a block)."""

    def __init__(self, text: str, first: int, last: int = -1) -> None:
        self.text, self.first, self.last = text, first, last
        self.cursor = 0
        self._link_end = 0  # the end of the open link's target: its text comes first
        self._line_starts = [0, *(m.end() for m in re.finditer("\n", text))]
        self._spans = _code_spans(text)  # (content start, content end) in order
        self._span_at = 0
        self._target: re.Match[str] | None = None
        self._target_from = -1

    def line_col(self, offset: int) -> tuple[int, int]:
        """1-based line of the file and 0-based column of `offset` (-1: the block's first line)."""
        if offset < 0:
            return self.first + 1, 0
        i = bisect.bisect_right(self._line_starts, offset) - 1
        return self.first + 1 + i, offset - self._line_starts[i]

    def code_span(self, content: str, ticks: int) -> int:
        """Where the next code span holding `content` starts (-1: not found)."""
        spans = self._spans
        i = self._span_at
        while i < len(spans) and spans[i][0] < self.cursor:
            i += 1
        self._span_at = i
        wanted = _squeezed(content)
        for j in range(i, min(i + 8, len(spans))):  # the next one, unless a backtick was text
            start, end = spans[j]
            source = self.text[start:end]
            if _squeezed(source) == wanted:  # markdown-it turns a line break into a space
                self._span_at = j + 1
                self.cursor = end + ticks
                return start + (1 if source[:1] == " " and content[:1] != " " else 0)
        # a backtick the scan paired differently (in HTML, a link destination): near the cursor
        at = self.text.find(content, self.cursor, self.cursor + _NEAR + len(content)) if content else -1
        if at >= 0:
            self.cursor = at + len(content)
        return at

    def after_link(self) -> None:
        self.cursor = max(self.cursor, self._link_end)

    def link(self, href: str) -> tuple[str, int]:
        """The link target as written (markdown-it percent-encodes it) and where it starts: the next
        `](target` of the block (-1 and `href`: a reference link, whose target is elsewhere)."""
        if self._target_from < 0 or self.cursor < self._target_from or \
                (self._target is not None and self.cursor > self._target.start()):
            self._target = _LINK_TARGET.search(self.text, self.cursor)  # each found once: a miss holds to the end
            self._target_from = self.cursor
        m = self._target
        if m is not None and _unquote(m.group(1)) == _unquote(href):
            self._link_end = m.end(1)
            return m.group(1), m.start(1)
        at = self.text.find(href, self.cursor, self.cursor + _NEAR + len(href)) if href else -1
        if at >= 0:
            self.cursor = at + len(href)
        return href, at


def _squeezed(text: str) -> str:
    return re.sub(r"[\s>]+", "", text)


def _code_spans(text: str) -> list[tuple[int, int]]:
    """The code spans of CommonMark's rule, as (content start, content end): a run of backticks
    opens one, closed by the next run of the same length (a backslash before the opener makes
    its first backtick text; none closes it: text)."""
    runs = [(m.start(), m.end() - m.start()) for m in _BACKTICKS.finditer(text)]
    by_length: dict[int, list[int]] = {}
    for i, (_, n) in enumerate(runs):
        by_length.setdefault(n, []).append(i)
    spans = []
    i = 0
    while i < len(runs):
        at, n = runs[i]
        before = at
        while before and text[before - 1] == "\\":
            before -= 1
        if (at - before) % 2:
            at, n = at + 1, n - 1
        same = by_length.get(n, [])
        k = bisect.bisect_right(same, i)
        if n == 0 or k == len(same):
            i += 1
            continue
        close = same[k]
        spans.append((at + n, runs[close][0]))
        i = close + 1
    return spans


def _unquote(s: str) -> str:
    from urllib.parse import unquote

    return unquote(s)


def _is_relative(href: str) -> bool:
    if not href or href.startswith(("//", "/", "{", "<", "$")) or re.match(r"[A-Za-z][\w+.-]*:", href):
        return False
    path = href.split("#", 1)[0].split("?", 1)[0]
    if path and "/" not in path and path.rsplit(".", 1)[-1].lower() not in FILE_SUFFIXES:
        return False  # `attrs.frozen`, `genindex`: a MyST or Sphinx cross-reference, not a file
    return not path.lower().endswith((".html", ".htm")) and "*" not in path


def markdown_anchors(text: str) -> set[str]:
    """The anchors a Markdown file has: GitHub's heading slugs, MyST `(label)=`, HTML ids and names."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    tokens = _markdown().parse(text)
    for i, token in enumerate(tokens):
        if token.type == "heading_open" and i + 1 < len(tokens):
            inline = tokens[i + 1]
            words = "".join(c.content for c in inline.children or () if c.type in ("text", "code_inline"))
            slug = github_slug(words)
            n = seen.get(slug, 0)
            seen[slug] = n + 1
            found.add(slug if n == 0 else f"{slug}-{n}")
    found.update(m.group(1) for m in _MYST_LABEL.finditer(text))
    found.update(re.findall(r"""\b(?:id|name)=["']([^"']+)["']""", text))
    return found


def github_slug(title: str) -> str:
    return re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")


# -- reStructuredText, plain text, docstrings ----------------------------------------------------
_ROLE = re.compile(r"(?<![\w`]):((?:[\w+-]+:)?[\w+-]+):`([^`]+)`(?!`)")
_LITERAL = re.compile(r"(?<![`\w])``([^`]+?)``(?![`\w])")
_INTERPRETED = re.compile(r"(?<![`:\w])`([^`<>]+)`(?![`_\w])")
_RST_LINK = re.compile(r"`[^`<]*<([^`<>]+)>`__?")
_TITLED = re.compile(r"(?<![`:\w])`[^`<]*<([^`<>]+)>`(?![`_\w])")
_DIRECTIVE = re.compile(r"^(\s*)\.\.\s+([\w:-]+)::\s*(.*)$")
_CODE_DIRECTIVES = frozenset({"code-block", "code", "sourcecode", "doctest", "testcode", "testoutput",
                              "testsetup", "testcleanup", "literalinclude", "math", "raw", "parsed-literal",
                              "productionlist", "highlight", "ipython", "jupyter-execute", "plot", "graphviz",
                              "autoprogram", "click", "tabularcolumns", "csv-table", "only"})
# history on purpose inside a page: what changed, was added or is deprecated (names gone since are fine)
_HISTORY_DIRECTIVES = frozenset({"versionchanged", "versionadded", "versionremoved", "deprecated",
                                 "deprecated-removed"})
_MODULE_DIRECTIVES = frozenset({"module", "currentmodule", "py:module", "py:currentmodule", "automodule"})
_MEMBERS_OPTION = re.compile(r"^\s+:members:\s*(\S.*)$")
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
# Sphinx's Python descriptions written by hand (`.. function:: name(args)`)
_DESCRIPTIONS = frozenset({"function", "class", "method", "attribute", "data", "exception", "decorator",
                           "classmethod", "staticmethod", "property"})
# descriptions whose content is read in a class's context: a class's own, and its members' (`Class.name`)
_CLASS_DIRECTIVES = frozenset({"class", "autoclass", "exception", "autoexception"})
_MEMBER_DIRECTIVES = frozenset({"method", "attribute", "property", "classmethod", "staticmethod", "automethod",
                                "autoattribute", "autoproperty"})


def rest_refs(text: str, default_role: str = "", history: bool = False, descriptions: bool = True) -> list[Ref]:
    """`default_role`: the role of interpreted text without one (Sphinx's `default_role` when it
    names Python objects: `any`, `obj`, `py:class`, ...; "" when it is `code` or unset);
    `history`: versionadded/versionchanged/deprecated blocks are read too; `descriptions`: what a
    description written by hand names under a current module is a reference (not in a docstring,
    where one describes a protocol the code never defines; without a module, one describes the
    reader's own callback: `.. function:: my_stop(retry_state)`)."""
    out: list[Ref] = []
    module = ""
    classes: list[tuple[int, str]] = []  # (indent of the description, its class), innermost last
    code: list[str] = []  # the run of code lines being read (an import's names may go on over lines)
    runs: list[tuple[int, list[str]]] = []  # every run read: (1-based first line, its lines)
    for lineno, line, in_code in _rest_lines(text, history):
        if in_code:
            code.append(line)
            continue
        if code:
            runs.append((lineno - len(code), code))
            out.extend(code_imports(code, lineno - len(code)) if any("import" in c for c in code) else ())
            code = []
        while classes and line.strip() and _indent(line) <= classes[-1][0]:
            classes.pop()  # out of the description
        d = _DIRECTIVE.match(line)
        if d:
            name, arg = d.group(2), d.group(3).strip()
            if name in _MODULE_DIRECTIVES and re.fullmatch(r"[\w.]+", arg):
                module = arg if arg != "None" else ""
            arg = re.sub(r"\(.*\)$", "", arg).strip()  # `.. autoclass:: pkg.Stream()`: its signature
            if AUTODOC.match(name.removeprefix("py:")) and re.fullmatch(r"[\w.]+", arg):
                out.append(Ref(NAME, arg, lineno, d.start(3), explicit=True, role=name, module=module))
            elif descriptions and module and name.removeprefix("py:") in _DESCRIPTIONS \
                    and re.fullmatch(r"[A-Za-z_][\w.]*", signed := arg.split("(")[0].strip()):
                # a description written by hand names what it describes, as autodoc's do
                out.append(Ref(NAME, signed, lineno, d.start(3), explicit=True, role=f"{DESCRIBED}{name}",
                               module=module, cls=classes[-1][1] if classes else ""))
                arg = signed
            if (context := _class_context(name.removeprefix("py:"), arg)):
                classes.append((len(d.group(1)), context))
            continue
        members = _MEMBERS_OPTION.match(line)
        if members and classes:  # autodoc's `:members: popitem, timer`: the class's members by name
            out.extend(Ref(NAME, m.group(), lineno, m.start(), explicit=True, role="meth", module=module,
                           cls=classes[-1][1]) for m in _IDENTIFIER.finditer(line, members.start(1)))
            continue
        out.extend(_inline_rest(line, lineno, module, default_role, classes[-1][1] if classes else ""))
    if code:
        runs.append((len(text.split("\n")) - len(code) + 1, code))
        out.extend(code_imports(code, runs[-1][0]) if any("import" in c for c in code) else ())
    out.extend(star_uses(runs))
    return out


def _class_context(directive: str, arg: str) -> str:
    """The class a description's content is read in, as Sphinx sets `py:class`: a class's own
    name, a member's class (`.. method:: Template.render`: `Template`)."""
    if not re.fullmatch(r"[A-Za-z_][\w.]*", arg):
        return ""
    if directive in _CLASS_DIRECTIVES:
        return arg
    return arg.rpartition(".")[0] if directive in _MEMBER_DIRECTIVES else ""


def rest_code_lines(text: str, history: bool = False) -> set[int]:
    """The 1-based lines of a reST text that are code, comments or (without `history`) history
    blocks: no reference is read there."""
    return {i for i, _line, in_code in _rest_lines(text, history) if in_code}


def _inline_rest(line: str, lineno: int, module: str, default_role: str = "", cls: str = "") -> Iterator[Ref]:
    if "`" not in line:  # every role, link and literal has one (most lines of prose have none)
        return
    taken = bytearray(len(line) + 1)  # 1: inside a role, link or literal already read

    def take(a: int, b: int) -> None:
        taken[a:b] = b"\1" * (b - a)

    for m in _ROLE.finditer(line):
        take(*m.span())
        ref = classify(m.group(2), lineno, m.start(2), role=m.group(1), module=module, cls=cls)
        if ref is not None:
            yield ref
    for m in _RST_LINK.finditer(line):
        take(*m.span())
        if _is_relative(m.group(1)) and "/" in m.group(1):
            yield Ref(LINK, m.group(1), lineno, m.start(1), explicit=True)
    for m in _TITLED.finditer(line):  # `title <pkg.Class.method>`: the default role's target
        if taken[m.start()]:
            continue
        take(*m.span())
        ref = classify(m.group(1), lineno, m.start(1), role=default_role, module=module)
        if ref is not None and ref.kind == NAME:
            yield ref
    for pattern in (_LITERAL, _INTERPRETED):
        role = default_role if pattern is _INTERPRETED else ""
        for m in pattern.finditer(line):
            if taken[m.start()]:
                continue
            take(*m.span())
            ref = classify(m.group(1), lineno, m.start(1), role=role, module=module)
            if ref is not None:
                yield ref


# a section adornment: one punctuation character repeated (reST allows any of these)
_ADORNMENT = re.compile(r"""([!-/:-@\[-`{-~])\1{2,}""")


def _is_adornment(lines: list[str], i: int) -> bool:
    """Whether line `i` (0-based, made of one repeated punctuation character) underlines the title
    above it or overlines the one below (`Title` then ``` ````` ```: a section, not a code fence)."""
    mark = lines[i].strip()
    above = lines[i - 1].strip() if i > 0 else ""
    below = lines[i + 1].strip() if i + 1 < len(lines) else ""
    if above and len(mark) >= len(above) and not _ADORNMENT.fullmatch(above):
        return True  # an underline (as long as its title at least: a shorter ``` is a fence)
    after = lines[i + 2].strip() if i + 2 < len(lines) else ""
    return bool(below) and len(mark) >= len(below) and after == mark  # an overline, its underline below


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _rest_lines(text: str, history: bool = False) -> Iterator[tuple[int, str, bool]]:
    """Each line (1-based) and whether it is code: literal blocks after `::`, bodies of code
    directives and comments, doctest blocks (`>>>` to the next blank line) and fenced blocks."""
    lines = text.split("\n")
    skip_deeper: int | None = None  # lines indented more than this are code
    doctest = False
    fence = ""
    for i, line in enumerate(lines, start=1):
        stripped = line.strip()
        if not fence and skip_deeper is None and _ADORNMENT.fullmatch(stripped) and _is_adornment(lines, i - 1):
            yield i, "", False  # a section title's underline or overline (of backticks too): no fence
            continue
        if fence:
            if stripped.startswith(fence):
                fence = ""
            yield i, line, True
            continue
        if skip_deeper is not None:
            if not stripped or _indent(line) > skip_deeper:
                yield i, line, True
                continue
            skip_deeper = None
        if doctest:
            if stripped:
                yield i, line, True
                continue
            doctest = False
        if stripped.startswith((">>>", "$ ", "% ")):
            doctest = True
            yield i, line, True
            continue
        if stripped.startswith(("```", "~~~")):
            fence = stripped[:3]
            yield i, line, True
            continue
        d = _DIRECTIVE.match(line)
        if d:
            if d.group(2) in _CODE_DIRECTIVES \
                    or (not history and d.group(2).removeprefix("py:") in _HISTORY_DIRECTIVES):
                skip_deeper = len(d.group(1))
            yield i, line, False
            continue
        if stripped.startswith("..") and not stripped.startswith(".. _") and not stripped.startswith(".. |"):
            skip_deeper = _indent(line)  # a comment, with what is indented under it
            yield i, line, True
            continue
        if stripped.endswith("::"):
            skip_deeper = _indent(line)
            before = stripped[:-2].rstrip()
            yield i, line if before else "", False
            continue
        yield i, line, False
