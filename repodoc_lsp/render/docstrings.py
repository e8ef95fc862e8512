"""Docstrings (Google, NumPy, Sphinx/reST or plain) as Markdown: every paragraph kept, nothing escapes.

griffe's parsers split a docstring into sections (parameters, returns, raises, notes, warnings,
examples, deprecations, ...); the text between them, reST directives (`.. note::`), literal blocks
(`::`), doctests and roles (`:class:`x``) are rendered here. Every function is total: a docstring
that no parser understands is rendered as prose, never an error.
"""

from __future__ import annotations

import functools
import logging
import re
from typing import Any

from repodoc_lsp.render.epytext import epytext_as_rest, epytext_field
from repodoc_lsp.render.google_titles import titles_set
from repodoc_lsp.render.markdown import code, fence, inline
from repodoc_lsp.render.rest import DIRECTIVE, clean, indented_block, prose, roles_as_literals, settled

_GOOGLE_TITLE = re.compile(r"^(?:Args|Arguments|Parameters|Returns|Yields|Raises|Note|Warning|Examples?"
                           r"|Attributes):\s*$", re.M)
_TITLE_LINE = re.compile(r"^\s*(?:[A-Z][\w ]*:{1,2}|\.\. [\w:-]+::.*|([=\-~^\"'`#*+:.])\1{2,})\s*$")
# griffe's options of each docstring style (`_STYLES` picks the style)
_STYLE_OPTIONS = {"google": {"warnings": False, "returns_named_value": False}, "numpy": {"warnings": False},
                  "sphinx": {"warnings": False}}
_SECTION_TITLES = {"parameters": "Parameters", "other parameters": "Other Parameters",
                   "type parameters": "Type Parameters", "attributes": "Attributes", "raises": "Raises",
                   "warns": "Warns", "returns": "Returns", "yields": "Yields", "receives": "Receives",
                   "functions": "Functions", "classes": "Classes", "type aliases": "Type Aliases",
                   "modules": "Modules"}

logging.getLogger("griffe").setLevel(logging.CRITICAL)


def summary_line(doc: str | None) -> str:
    """A docstring's first sentence (of its first paragraph, as one line), its roles as literals:
    the summary of lists, brief entries and hovers."""
    return _summary(doc)[0] if doc else ""


def docstring_rest(doc: str | None) -> int:
    """How many lines of a docstring its summary leaves out (what a brief page leaves in the source),
    the line its first sentence ends on counted when more follows on it."""
    return _summary(doc)[1] if doc else 0


# A sentence's end: `.`, `!` or `?` (a closing quote or bracket may follow), then space and what may
# start a sentence, or the paragraph's end
_SENTENCE_END = re.compile(r"(\w*)[.!?][)\"']?(?=\s+[A-Z0-9`(\[\"'*]|$)")
_ABBREVIATIONS = frozenset({"e.g", "i.e", "etc", "vs", "cf", "resp", "approx", "fig", "eq", "no", "dr", "mr", "ms",
                            "st", "al", "ca", "incl", "min", "max", "ref", "sec", "ch", "pp", "vol"})
_FIELD_LINE = re.compile(r"^:[A-Za-z][\w ]*:(?!`)")  # `:param x:`, not a role (`:func:`f``)
_MAX_SENTENCE = 400  # a "sentence" with no end in sight is cut at a word after this many characters


@functools.lru_cache(maxsize=4096)
def _summary(doc: str) -> tuple[str, int]:
    lines = clean(doc).splitlines()
    para: list[str] = []
    for line in lines:
        stripped = line.strip()
        if not stripped or (para and (stripped.startswith((">>>", "..")) or _FIELD_LINE.match(stripped)
                                      or _GOOGLE_TITLE.match(stripped)
                                      or (stripped[0] == "@" and epytext_field(stripped)))):
            break
        para.append(stripped)
    if not para:
        return "", 0
    joined = " ".join(para)
    end = len(joined)
    for m in _SENTENCE_END.finditer(joined):
        word = m.group(1)
        initial = len(word) == 1 and (word.isupper() or (m.start(1) > 0 and joined[m.start(1) - 1] == "."))
        if word.lower() in _ABBREVIATIONS or initial:  # `e.g.`, `X. Glorot`, `etc.`: no sentence ends
            continue
        end = m.end()
        break
    summary = joined[:end]
    if len(summary) > _MAX_SENTENCE:
        summary = summary[:_MAX_SENTENCE].rsplit(" ", 1)[0].rstrip(",;:") + " …"
        end = len(summary)
    # the lines the summary takes whole: those before the one it ends on, and that one when it ends there
    taken, seen = 0, 0
    for line in para:
        seen += len(line) + 1
        if seen - 1 <= end:
            taken += 1
        else:
            break
    summary = " ".join(summary.split())
    if "{" in summary:  # epytext's markup (`C{x}`; its fields end the paragraph)
        summary = epytext_as_rest(summary, summary=True)
    return roles_as_literals(summary), len(lines) - taken


def _join(text: str | None) -> str:
    return " ".join((text or "").split())


def _item(head: str, description: str) -> str:
    """A list entry: the description inline when it is one line, else indented under the entry."""
    body = prose(roles_as_literals(description)) if description.strip() else ""
    if not body:
        return f"- {head}"
    if "\n\n" not in body and not body.startswith(("`" * 3, "~" * 3, "**")):
        body = body.replace("\n", "\n  ")
        return f"- {head}: {body}" if head else f"- {body}"
    indented = "\n".join("  " + b if b else "" for b in body.split("\n"))
    return f"- {head}\n\n{indented}" if head else f"-\n{indented}"


def _type_text(annotation: object) -> str:
    """A type's text without its literal marks (`C{int}`, ```` ``int`` ````: `int`)."""
    return _join(str(annotation)).replace("``", "").strip("`") if annotation is not None else ""


def _type(annotation: object) -> str:
    text = _type_text(annotation)
    return code(text) if text else ""


def _element(element: object) -> str:
    name = _join(getattr(element, "name", "") or "")
    kind = _type(getattr(element, "annotation", None))
    head = " ".join(p for p in (code(name) if name else "", f"({kind})" if name and kind else kind) if p)
    return _item(head, str(getattr(element, "description", "") or ""))


def _section(section: object) -> str:
    kind = str(getattr(getattr(section, "kind", None), "value", ""))
    value = getattr(section, "value", None)
    title = getattr(section, "title", None)
    if isinstance(value, str):
        return prose(value)
    if kind == "examples" and isinstance(value, list):
        parts = [f"**{inline(title or 'Examples')}**"]
        for sub_kind, text in value:
            parts.append(fence(text, "pycon") if "examples" in str(getattr(sub_kind, "value", sub_kind))
                         else prose(str(text)))
        return "\n\n".join(p for p in parts if p)
    if kind == "admonition":
        return _admonition(_join(title), _join(str(getattr(value, "annotation", "") or "")),
                           str(getattr(value, "description", "") or ""))
    if kind == "deprecated":
        version = _join(str(getattr(value, "annotation", "") or getattr(value, "version", "") or ""))
        body = prose(roles_as_literals(str(getattr(value, "description", "") or "")))
        return f"**Deprecated{' ' + inline(version) if version else ''}**" + (f"\n\n{body}" if body else "")
    if isinstance(value, list):
        if kind in ("returns", "yields", "receives") and len(value) > 1:
            value = _joined_lines(value)
        rows = [_element(e) for e in value]
        label = inline(_join(title) or _SECTION_TITLES.get(kind, kind.capitalize() or "Section"))
        if kind in ("returns", "yields", "receives") and len(rows) == 1 and "\n" not in rows[0]:
            return f"**{label}**: {rows[0][2:]}"  # one value: on the label's line
        return f"**{label}**\n\n" + "\n".join(rows) if rows else ""
    return prose(str(value or ""))


class _Value:
    """A returned value made of several of griffe's items (`_joined_lines`)."""

    def __init__(self, name: str, annotation: object, description: str) -> None:
        self.name, self.annotation, self.description = name, annotation, description


def _joined_lines(items: list[Any]) -> list[Any]:
    """griffe reads each line of a Google `Returns:` block as a value of its own; a line that names
    no type (none, or words: `and continues here`) continues the value above it."""
    out: list[Any] = []
    for item in items:
        annotation = getattr(item, "annotation", None)
        text = str(annotation) if annotation is not None else ""
        continues = not text or (re.search(r"\s", re.sub(r"\[.*?\]|\(.*?\)", "", text)) is not None
                                 and text[:1].islower())
        if out and continues:
            prev = out[-1]
            line = ": ".join(part for part in (text, str(item.description or "")) if part)
            out[-1] = _Value(prev.name, prev.annotation, f"{prev.description}\n{line}".strip())
        else:
            out.append(_Value(str(getattr(item, "name", "") or ""), annotation,
                              str(getattr(item, "description", "") or "")))
    return out


def _admonition(title: str, kind: str, description: str) -> str:
    """`Note:` (kind `note`, title `Note`) as **Note**; `name: text` (kind `name`) as **name**: text."""
    slug = re.sub(r"\W+", "-", title.lower()).strip("-")
    if not title or slug.rstrip("s") == kind.rstrip("s"):  # `Notes` (NumPy) is of kind `note`
        head = f"**{inline(title or kind.capitalize() or 'Note')}**"
    else:
        head = f"**{inline(kind.replace('-', ' ').capitalize() if '-' in kind else kind)}**: {inline(title)}"
    body = prose(roles_as_literals(description))
    return head + (f"\n\n{body}" if body else "")


@functools.cache
def _griffe_docstring() -> Any:
    """griffe's `Docstring`, imported on first use (not paid at start-up). Outside any
    `try`: a missing griffe is an installation error, never hidden by the prose fallback."""
    from griffe import Docstring

    return Docstring


# A docstring's style as griffe's `parser="auto"` detects it (`infer_docstring_style`, its heuristics
# with Google as the default): the first style whose pattern (griffe's: a line naming a section in
# any case) matches somewhere.
_SECTION_PATTERNS = (
    ("sphinx", r"\n[ \t]*:{}([ \t]+\w+)*:([ \t]+.+)?\n",
     ("arg", "argument", "cvar", "except", "exception", "ivar", "key", "keyword", "param", "parameter", "raise",
      "raises", "return", "returns", "rtype", "type", "var", "vartype")),
    ("google", r"\n[ \t]*{}:([ \t]+.+)?\n[ \t]+.+",
     ("args", "arguments", "attributes", "classes", "example", "examples", "functions", "exceptions", "keyword args",
      "keyword arguments", "methods", "modules", "note", "other args", "other arguments", "other params",
      "other parameters", "params", "parameters", "raises", "returns", "receives", "warns", "warning", "warnings",
      "yields")),
    ("numpy", r"\n[ \t]*{}\n[ \t]*---+\n",
     ("attributes", "classes", "deprecated", "example", "functions", "methods", "note", "modules", "other parameters",
      "parameters", "raises", "receives", "returns", "warning", "warns", "yields")),
)
# Each style's pattern as griffe compiles it (`re.IGNORECASE`: a long s, U+017F, is an `s` too), and
# as it matches an ASCII text in lower case (the same answer: an ASCII character is an ASCII letter of
# the section names in any case only as that letter in upper or lower case), faster (bench/README.md,
# "Docstrings").
_STYLES = tuple((style, re.compile(pattern.format("(?:" + "|".join(map(re.escape, words)) + ")"), flags | re.MULTILINE))
                for flags in (re.IGNORECASE, 0) for style, pattern, words in _SECTION_PATTERNS)
_ANY_CASE, _LOWER_CASE = _STYLES[:3], _STYLES[3:]


def _style(text: str) -> str:
    """The style griffe's `parser="auto"` parses `text` in (`tests/unit/test_docstrings.py` checks it)."""
    styles, text = (_LOWER_CASE, text.lower()) if text.isascii() else (_ANY_CASE, text)
    return next((style for style, pattern in styles if pattern.search(text)), "google")


def _sections(text: str) -> list[object]:
    """griffe's sections of `text`, in the style it detects; Google's when that found no section
    but the text has a Google section title (a reST underline can make it guess NumPy)."""
    text, starred = _starred_fields(text)
    docstring = _docstring(titles_set(text))
    # griffe's detection reads the value (cleaned, so stripped): its patterns want a line break before
    # and after a field, so a docstring whose one field is its first or last line (`:param f: ...`)
    # would be read as Google's
    style = "sphinx" if starred else _style(f"\n{docstring.value}\n")
    if style == "sphinx":
        docstring.value = _rtype_kept(docstring.value)
    sections: list[object] = list(docstring.parse(style, **_STYLE_OPTIONS[style]))
    if len(sections) <= 1 and style != "google" and _GOOGLE_TITLE.search(text):
        sections = list(docstring.parse("google", **_STYLE_OPTIONS["google"]))
    return sections


# A Sphinx field of a starred parameter, `:param \\*\\*kwargs:` (reST's escapes, as Sphinx wants them)
# or `:param *args:`: its marker (and type) before the stars, and the stars
# (written to start with `:`: `re` then looks for one, not a match at every line; `_starred_fields` checks
# that the field starts its line)
_STARRED_FIELD = re.compile(r"(:(?:param|parameter|arg|argument|key|keyword|type)[ \t]+(?:[^:\n]*?[ \t])?)"
                            r"((?:\\{0,2}\*){1,2})(?=\w)")  # `\\*` too: the escape doubled


def _starred_fields(text: str) -> tuple[str, bool]:
    """`text` with the names of its starred parameters' Sphinx fields unescaped (`\\*\\*kwargs` as
    `**kwargs`, the name griffe gives the parameter), and whether it has such a field: griffe's detection
    (`_style`) wants a field's name to be a word, so that alone would not make the docstring Sphinx's."""
    if "*" not in text or not (":param" in text or ":arg" in text or ":key" in text or ":type" in text):
        return text, False  # most docstrings: no star or no such field, found without the expression
    found = False

    def unescaped(m: re.Match[str]) -> str:
        nonlocal found
        if text[text.rfind("\n", 0, m.start()) + 1:m.start()].strip(" \t"):  # not at its line's start
            return m.group(0)
        found = True
        return m.group(1) + m.group(2).replace("\\", "")

    return _STARRED_FIELD.sub(unescaped, text), found


_RTYPE = re.compile(r"^([ \t]*):rtype:", re.M)
_RETURNS = re.compile(r"^[ \t]*:returns?:", re.M)


def _rtype_kept(text: str) -> str:
    """`text` with an empty `:returns:` before its `:rtype:` when it has none: griffe's Sphinx parser
    keeps `:rtype:` only as the type of a `:returns:` field, and drops it otherwise."""
    if ":rtype:" not in text or _RETURNS.search(text):
        return text
    return _RTYPE.sub(r"\1:returns:\n\1:rtype:", text, count=1)


def _docstring(text: str) -> Any:
    """griffe's `Docstring` of `text`. It cleans its value (`inspect.cleandoc` of it stripped on the
    right); a text that cleaning leaves as it is (`settled`: most, cleaned by `docstring_markdown`
    already) is given as its value, not cleaned again."""
    Docstring = _griffe_docstring()
    if not settled(text):
        return Docstring(text)
    docstring = Docstring("")
    docstring.value = text
    return docstring


def _one_text(text: str) -> bool:
    """Whether griffe's sections of the cleaned docstring `text` are one text section holding `text`
    as it is, so that `docstring_markdown` is `prose(text)` without parsing it: no `:` (no role,
    Google section or admonition, Sphinx field; nor `_GOOGLE_TITLE`), no `---` (no NumPy section
    underline: the style detected is then the default, Google), and griffe's own cleaning of it
    (`inspect.cleandoc` of it stripped on the right) leaves it as it is. Its rendering would then be
    `prose(text)`, and a text `_loses_text` rejects is shown as `prose(text)` too.
    `tests/unit/test_docstrings.py` checks the shortcut against the parse."""
    return ":" not in text and "---" not in text and settled(text)


@functools.lru_cache(maxsize=2048)
def docstring_markdown(doc: str | None) -> str:
    """A docstring as Markdown: its summary, text, sections and examples, all of it (kept for
    the same text: a page over the size limit is rendered again, and docstrings repeat)."""
    if not doc or not doc.strip():
        return ""
    text = clean(doc)
    if "@" in text or "{" in text:  # maybe epytext (most docstrings hold neither)
        text = epytext_as_rest(text)
    if _one_text(text):  # most docstrings: what griffe would make of it
        return prose(text)
    return _parsed(text)


def _parsed(text: str) -> str:
    """`docstring_markdown` of the cleaned docstring `text`, through griffe's sections; directives
    at the docstring's own level after its first field or section (`.. versionchanged::` under
    Sphinx fields) are shown after the sections, whole, not inside the last field."""
    text, notes = _notes_after_fields(text)
    literal = roles_as_literals(text)
    _griffe_docstring()
    try:
        sections = _sections(literal)
        rendered = "\n\n".join(r for r in (_section(s) for s in sections) if r)
    except Exception:  # a parser's failure on odd text: the docstring is still shown, as prose
        rendered = prose(text)
    else:
        if _loses_text(_without_doctest_marks(literal), rendered):
            rendered = prose(text)
    return "\n\n".join(p for p in (rendered, *(prose(n) for n in notes)) if p)


@functools.lru_cache(maxsize=1024)
def docstring_attributes(doc: str) -> tuple[str, tuple[tuple[str, str, str], ...]]:
    """A class's docstring as Markdown without its Attributes section, and that section's entries as
    (name, type, description: Markdown that follows the name on its list item), so that a page listing
    the class's attributes shows one list. Without such a section: `(docstring_markdown(doc), ())`."""
    whole = docstring_markdown(doc)
    if "**Attributes**" not in whole:
        return whole, ()
    text, notes = _notes_after_fields(epytext_as_rest(clean(doc)))
    literal = roles_as_literals(text)
    try:
        sections = _sections(literal)
        rendered = [_section(s) for s in sections]
    except Exception:  # shown as `docstring_markdown` shows it
        return whole, ()
    if _loses_text(literal, "\n\n".join(r for r in rendered if r)):
        return whole, ()
    kinds = [str(getattr(getattr(s, "kind", None), "value", "")) for s in sections]
    entries = tuple((_join(getattr(e, "name", "") or ""), _type_text(getattr(e, "annotation", None)),
                     _item("@", str(getattr(e, "description", "") or ""))[3:])
                    for s, kind in zip(sections, kinds, strict=True) if kind == "attributes"
                    for e in (getattr(s, "value", None) or ()))
    if not entries:
        return whole, ()
    kept = [r for r, kind in zip(rendered, kinds, strict=True) if kind != "attributes" and r]
    return "\n\n".join([*kept, *(p for p in (prose(n) for n in notes) if p)]), entries


# The first line of a field list or of a section (Sphinx `:param x:`, Google `Args:`, a NumPy title)
_FIELDS_START = re.compile(r"^(?::[A-Za-z][^:\n]*:|(?:Args|Arguments|Parameters|Returns|Yields|Raises|Attributes"
                           r"|Keyword Args|Keyword Arguments|Other Parameters)(?::\s*|\n-{3,})$)", re.M)


def _notes_after_fields(text: str) -> tuple[str, list[str]]:
    """`text` without the directives at its first column that follow its first field or section,
    and those directives (each with its indented body)."""
    start = _FIELDS_START.search(text) if ("\n.." in text) else None
    if start is None:
        return text, []
    lines = text.split("\n")
    first = text.count("\n", 0, start.start())
    kept, notes = lines[:first + 1], []
    i = first + 1
    while i < len(lines):
        line = lines[i]
        if line.startswith("..") and DIRECTIVE.match(line):
            body, j = indented_block(lines, i + 1, 0)
            notes.append("\n".join([line, *body]))
            i = j
            continue
        kept.append(line)
        i += 1
    return ("\n".join(kept).rstrip(), notes) if notes else (text, [])


_WORD = re.compile(r"\w+")
# What griffe's parsers leave out of examples (`trim_doctest_flags`, as Sphinx's output does): not text lost
_DOCTEST_MARKS = re.compile(r"[ \t]*#[ \t]*doctest:.+$|^[ \t]*<BLANKLINE>[ \t]*$", re.M)


def _without_doctest_marks(text: str) -> str:
    """`text` without `_DOCTEST_MARKS`, the pattern run only on a text holding one (it tries a match at every
    character: 3.7% of the render phase, bench/README.md)."""
    return _DOCTEST_MARKS.sub("", text) if "doctest:" in text or "<BLANKLINE>" in text else text
# Words a parser rightly turns into structure: field markers, directive and section names.
_MARKUP = frozenset({"param", "parameter", "arg", "argument", "key", "keyword", "type", "rtype", "returns", "return",
                     "raises", "raise", "except", "exception", "yields", "yield", "ivar", "cvar", "var", "vartype",
                     "optional", "note", "warning", "seealso", "deprecated", "versionadded", "versionchanged", "code",
                     "block", "_", "__", "or"})
# (`_`: a reST hyperlink's end, `text <url>`_, a Markdown link once rendered; `or`: of a field's type,
# `int or None`, which griffe's Sphinx parser writes `int | None`)


# Every ASCII character that `\w` does not match, as a space (`_words`).
_NOT_WORD = str.maketrans(dict.fromkeys((c for c in map(chr, range(128)) if not (c.isalnum() or c == "_")), " "))
# The same but for the ASCII characters that end a line for `str.splitlines` (kept as they are).
_NOT_WORD_LINES = str.maketrans(dict.fromkeys((c for c in map(chr, range(128))
                                               if not (c.isalnum() or c == "_" or c.splitlines() == [""])), " "))


# `_NOT_WORD` for the bytes of an ASCII text (`_lacking`).
_NOT_WORD_BYTES = bytes(c if c < 128 and (chr(c).isalnum() or c == 95) else 32 for c in range(256))


def _words(text: str) -> set[str]:
    """The words (`_WORD`) of `text`: of an ASCII text (most docstrings) found by `str.split` once
    every other character is a space, the same words faster than the expression."""
    return set(text.translate(_NOT_WORD).split()) if text.isascii() else set(_WORD.findall(text))


def _lacking(source: str, rendered: str) -> set[str]:
    """The words of `source` that `rendered` lacks, markup words aside. Of two ASCII texts (most) found
    in their bytes, `_words`'s way (`bytes.translate` is faster than `str.translate`)."""
    if source.isascii() and rendered.isascii():  # the rendered words taken from the source's as they come
        lost = set(source.encode().translate(_NOT_WORD_BYTES).split())
        lost.difference_update(rendered.encode().translate(_NOT_WORD_BYTES).split())
        return {word for w in lost if (word := w.decode()).lower() not in _MARKUP}
    return {w for w in _words(source) - _words(rendered) if w.lower() not in _MARKUP}


def _loses_text(source: str, rendered: str) -> bool:
    """Whether some line of `source` (section titles and markup aside) has a word `rendered` lacks:
    the parser dropped text it could not place, so the docstring is better shown as prose."""
    # The words of `source` that `rendered` lacks, all lines at once: most docstrings lose none
    # (then no line is looked at); else only the lines holding such a word are.
    lacking = _lacking(source, rendered)
    if not lacking:
        return False
    # Each line's words as `_words` finds them, of an ASCII text all lines at once (its line
    # breaks kept: the lines are `source`'s, one for one); the title check only for a line with
    # such a word (most have none: a Google docstring lacks only its `Args` and `Returns`).
    ascii_text = source.isascii()
    words_of = source.translate(_NOT_WORD_LINES).splitlines() if ascii_text else None
    for i, line in enumerate(source.splitlines()):
        words = words_of[i].split() if words_of is not None else _WORD.findall(line)
        if not lacking.isdisjoint(words) and not _TITLE_LINE.match(line):
            return True
    return False
