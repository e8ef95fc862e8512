"""What the command line prints: each message one line, none a CI runner's workflow command.

Paths and names come from the checkout (file names, the output folder of `[tool.repodoc]`) and
may hold line breaks: printed raw, a name `x\\n::error::...` would put a line of its own on
standard output or error, which GitHub Actions reads as a command (an annotation, a mask, a
group) anywhere in a step's log, and any `##[command]` inside a line too (the runner's older
syntax). So every line repodoc prints goes through `say`: control characters and line
separators become escapes (`\\n`, `\\x1b`), `##[` is broken, and a line cannot start with `::`.
repodoc's own annotations (`repodoc check --format github`) are printed as they are, their
values escaped by GitHub's rules (`refs/command.py`).
"""

from __future__ import annotations

import logging
import sys
from typing import TextIO

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_ESCAPES = {c: _NAMED.get(chr(c), f"\\x{c:02x}") for c in [*range(0x20), 0x7F, *range(0x80, 0xA0)]}
_ESCAPES.update({0x2028: "\\u2028", 0x2029: "\\u2029"})


def printable(text: str) -> str:
    """`text` as one line that names no workflow command: control characters and line separators
    escaped, `##[` broken."""
    return text.translate(_ESCAPES).replace("##[", "#\\x23[")


def line(text: str) -> str:
    """One line of repodoc's own: `printable`, and not starting with `::` (after spaces, as the
    runner reads it)."""
    text = printable(text)
    if text.lstrip().startswith("::"):
        text = text.replace(":", "\\x3a", 1)
    return text


def say(text: str, file: TextIO | None = None) -> None:
    """Print `text` as one line (standard output unless `file`)."""
    print(line(text), file=file if file is not None else sys.stdout)


def json_text(text: str) -> str:
    """JSON as `json.dumps` wrote it (ensure_ascii: no control character is raw), with `##[`
    written `#\\u0023[` (the same JSON; it can only be inside a string)."""
    return text.replace("##[", "#\\u0023[")


class _Lines(logging.Handler):
    """Warnings of the package's loggers (a damaged manifest, an unusable cache) on standard error
    as `say` prints: the message on one line, each line of a traceback on its own."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            say(record.getMessage(), sys.stderr)
            if record.exc_info:
                for each in logging.Formatter().formatException(record.exc_info).split("\n"):
                    say(each, sys.stderr)
        except Exception:  # logging's rule: a handler never raises
            self.handleError(record)


_HANDLER = _Lines(logging.WARNING)


def print_warnings() -> None:
    """The command line's handler of the package's warnings (once; nothing else of logging changes)."""
    logger = logging.getLogger("repodoc_lsp")
    if _HANDLER not in logger.handlers:
        logger.addHandler(_HANDLER)
