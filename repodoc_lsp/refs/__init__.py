"""Stale references in hand-written docs: Markdown, reST, plain text and Python docstrings.

Nothing is imported here: `repodoc check` loads `refs.command`, which imports the rest once the
pipeline is loaded.
"""
