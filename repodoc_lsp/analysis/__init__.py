"""File -> facts. `analyse_file` picks the analyser for a file by its name."""

from repodoc_lsp.analysis.model import (
    FileFacts,
    Finding,
    FindingCategory,
    Import,
    KeywordKind,
    Language,
    Symbol,
    SymbolKind,
    SyntaxProblem,
)
from repodoc_lsp.analysis.source import SourceText, analyse_source, language_for

__all__ = [
    "FileFacts",
    "Finding",
    "FindingCategory",
    "Import",
    "KeywordKind",
    "Language",
    "SourceText",
    "Symbol",
    "SymbolKind",
    "SyntaxProblem",
    "analyse_source",
    "language_for",
]
