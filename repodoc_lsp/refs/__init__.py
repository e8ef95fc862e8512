"""Stale references in hand-written docs: Markdown, reST, plain text and Python docstrings."""

from repodoc_lsp.refs.check import Report, Stale, build_index, check_workspace, is_doc

__all__ = ["Report", "Stale", "build_index", "check_workspace", "is_doc"]
