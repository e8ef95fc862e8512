"""Bytes -> text -> facts: decoding rules and the choice of analyser."""

from __future__ import annotations

import codecs
import io
import tokenize
from dataclasses import dataclass

from repodoc_lsp.analysis.common import NotText, TooComplex
from repodoc_lsp.analysis.model import FileFacts, Language

PYTHON_SUFFIXES = (".py", ".pyi", ".pyw")
TREE_SITTER = frozenset({Language.C, Language.CPP, Language.CUDA, Language.JAVASCRIPT, Language.TYPESCRIPT,
                         Language.GO, Language.RUST, Language.JAVA})
MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdx", ".rst")
REST_SUFFIX = ".rst"  # a document read as reST (code blocks after `::`, roles), not Markdown

_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


@dataclass(frozen=True, slots=True)
class SourceText:
    """Decoded text with universal newlines, and how it was decoded."""

    text: str
    encoding: str
    note: str = ""


def language_for(name: str) -> Language:
    lower = name.lower()
    if lower.endswith(PYTHON_SUFFIXES):
        return Language.PYTHON
    if lower.endswith(MARKDOWN_SUFFIXES):
        return Language.MARKDOWN
    from repodoc_lsp.analysis.treesitter import spec_for

    spec = spec_for(lower)
    return spec.language if spec is not None else Language.TEXT


def analyser_for(name: str) -> str:
    """All that `analyse_source` reads of a file's name: the analyser its suffix chooses, and for
    tree-sitter the grammar (`.c` is C, `.h` C++; `.ts` and `.tsx` two grammars of TypeScript). Facts
    are cached by it beside the content: an empty `__init__.py` is Python, an empty `py.typed` text."""
    lower = name.lower()
    if lower.endswith(PYTHON_SUFFIXES):
        return Language.PYTHON.value
    if lower.endswith(REST_SUFFIX):
        return "rest"
    if lower.endswith(MARKDOWN_SUFFIXES):
        return Language.MARKDOWN.value
    from repodoc_lsp.analysis.treesitter import grammar_for

    return grammar_for(lower) or Language.TEXT.value


def normalise_newlines(text: str) -> str:
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def decode(data: bytes, language: Language) -> SourceText:
    """Decode a file's bytes, or raise NotText with the reason.

    Byte-order marks win; then a NUL byte means binary; Python files follow
    PEP 263 (coding cookie, else UTF-8); anything that is not valid in its
    declared encoding is decoded as Latin-1 and says so.
    """
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                return SourceText(normalise_newlines(data.decode(encoding)), encoding)
            except UnicodeDecodeError as exc:
                raise NotText(f"invalid {encoding} after its byte-order mark") from exc
    if b"\x00" in data:
        raise NotText("binary (contains NUL bytes)")
    encoding = "utf-8"
    if language is Language.PYTHON:
        try:
            encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        except SyntaxError:
            encoding = "utf-8"
    try:
        return SourceText(normalise_newlines(data.decode(encoding)), encoding)
    except (UnicodeDecodeError, LookupError):
        return SourceText(
            normalise_newlines(data.decode("latin-1")),
            "latin-1",
            f"not valid {encoding}; decoded as Latin-1",
        )


def analyse_source(name: str, data: bytes) -> FileFacts:
    """Facts for a file called `name` with content `data` (raises NotText)."""
    language = language_for(name)
    source = decode(data, language)
    if language is Language.PYTHON:
        from repodoc_lsp.analysis.python import analyse_python

        facts = analyse_python(source.text)
    elif language in TREE_SITTER:
        from repodoc_lsp.analysis.treesitter import Skipped, analyse_tree_sitter

        try:
            facts = analyse_tree_sitter(name, source.text)
        except Skipped as exc:
            raise TooComplex(str(exc)) from exc
    else:
        from repodoc_lsp.analysis.text import analyse_text

        facts = analyse_text(source.text, language, rest=name.lower().endswith(REST_SUFFIX))
    facts.encoding = source.encoding
    facts.encoding_note = source.note
    return facts
