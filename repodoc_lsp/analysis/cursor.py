"""What is under the cursor: the only module that talks to jedi.

jedi resolves names statically (it parses, it never runs the project's code);
it is not thread safe, so callers run every function here on one thread.
Lines are 1-based and columns are code points, as jedi counts them.
"""

from __future__ import annotations

import contextlib
import functools
import pickle
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import jedi
import parso.cache

from repodoc_lsp.analysis.source import normalise_newlines


@dataclass(frozen=True, slots=True)
class CursorInfo:
    name: str
    full_name: str
    jedi_type: str  # jedi's type: class, function, module, instance, statement, param, keyword, ...
    signatures: tuple[str, ...]
    docstring: str
    module_path: Path | None
    line: int | None  # of the definition, 1-based
    column: int | None


def _is_ident_char(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def word_at(source: str, line: int, column: int) -> str:
    """The identifier at (line, column) of `source` (1-based line, code-point column), or ""; its
    lines end at \\n, \\r\\n or \\r, as LSP, editors and jedi count them."""
    lines = normalise_newlines(source).split("\n")
    if not 1 <= line <= len(lines):
        return ""
    text = lines[line - 1]
    start = end = min(column, len(text))
    while start > 0 and _is_ident_char(text[start - 1]):
        start -= 1
    while end < len(text) and _is_ident_char(text[end]):
        end += 1
    word = text[start:end]
    return word if word.isidentifier() else ""


def _identifier_at(line_text: str, column: int) -> bool:
    return any(0 <= i < len(line_text) and _is_ident_char(line_text[i]) for i in (column, column - 1))


# What a first hover makes jedi do once per process (loading the builtins' and typing's stubs, parsing
# them, working out a class's signature from `object`): done ahead by `Cursor.warm_steps`.
WARM_SOURCE = '''class _Warm:
    """A class, as a hover shows one."""

    def __init__(self, name: str) -> None:
        self.name = name


_Warm("x").name.upper()
'''
WARM_NAMES = 30  # top-level names of an open file whose definitions are looked up ahead of its hovers
WARM_CHUNK = 5  # names per step: a hover waits for one step at most
CACHE_RETRY_PAUSE = 0.05  # s: time for another process to finish writing a parso cache file
# what jedi raises when a file of parso's disk cache is cut short or its folder is gone
CACHE_DAMAGE = (EOFError, pickle.UnpicklingError, FileNotFoundError)


class Cursor:
    """jedi's state for one folder: the project it keeps its caches on, and the environment
    whose libraries it resolves (default: the server's own interpreter). Owned by the server
    per root folder and dropped with it; used from one thread."""

    def __init__(self, root: Path, python_path: str = "", *, keep: bool = False) -> None:
        self.root = root
        self.python_path = python_path
        self.keep = keep  # told of every file changed on disk (`forget`): scripts may be kept
        self._project = jedi.Project(path=str(root), smart_sys_path=True)
        self._environment: object | None = None
        # the last hovered document's script, kept for the hovers that follow while neither that text
        # nor any file changes: its inference state remembers what the imports were worked out to
        # (a second hover over a call into a big package answers in a millisecond, not a tenth of a
        # second). jedi reads the other files from disk when first needed: `forget` drops it, so
        # it is kept only where every change is told (`keep`).
        self._kept: tuple[Path, str, jedi.Script] | None = None
        self._stale = False

    def _script(self, source: str, path: Path) -> jedi.Script:
        if self._environment is None:
            self._environment = (jedi.create_environment(self.python_path, safe=True) if self.python_path
                                 else jedi.InterpreterEnvironment())
        return jedi.Script(code=source, path=str(path), project=self._project, environment=self._environment)

    def forget(self) -> None:
        """A file changed on disk: the kept script's inference may be out of date (any thread)."""
        self._stale = True

    def _kept_script(self, source: str, path: Path) -> jedi.Script:
        kept = self._kept
        if self._stale:
            self._stale, kept = False, None
        if kept is None or kept[0] != path or kept[1] != source:  # an unchanged text: the same str, compared at once
            kept = (path, source, self._script(source, path))
        self._kept = kept if self.keep else None
        return kept[2]

    def prepare(self, source: str, path: Path) -> None:
        """Parse a file jedi will be asked about (an editor opened it), so that its first hover
        does not pay for the parse: jedi keeps the tree in its cache."""
        with contextlib.suppress(Exception):  # best effort: a hover reports its own failures
            self._script(source, path).get_names(all_scopes=False)

    def warm_steps(self, documents: list[tuple[str, Path]]) -> list[Callable[[], None]]:
        """Steps (each run on jedi's thread, one at a time: a hover goes between two) that do ahead
        what the first hovers would: the builtins' stubs, then the definitions of the top-level
        names of `documents` (source, path: the files open in the editor), their imports followed."""
        steps: list[Callable[[], None]] = [self._warm_builtins]
        for source, path in documents:
            steps += [functools.partial(self._warm_names, source, path, start)
                      for start in range(0, WARM_NAMES, WARM_CHUNK)]
        return steps

    def _warm_builtins(self) -> None:
        script = self._script(WARM_SOURCE, self.root / "__repodoc_warm__.py")
        line = WARM_SOURCE.count("\n")
        with contextlib.suppress(Exception):  # best effort, as `prepare`
            for name in script.infer(line, 0):
                name.get_signatures()
                name.docstring(raw=True)
            script.infer(line, WARM_SOURCE.splitlines()[-1].index("upper"))

    def _warm_names(self, source: str, path: Path, start: int) -> None:
        with contextlib.suppress(Exception):
            for name in self._script(source, path).get_names(all_scopes=False)[start:start + WARM_CHUNK]:
                name.goto(follow_imports=True)

    def _names(self, source: str, path: Path, line: int, column: int) -> list:
        script = self._kept_script(source, path)
        return script.infer(line, column) or script.goto(line, column, follow_imports=True)

    def describe(self, source: str, path: Path, line: int, column: int) -> CursorInfo | None:
        """The definition of the name at (line, column) of `source`, or None when there is no
        name there or jedi resolves none. jedi's own errors propagate (the caller logs them)."""
        lines = normalise_newlines(source).split("\n")  # jedi's lines too (parso ends one at a lone \\r)
        if not 1 <= line <= len(lines) or column > len(lines[line - 1]) or not _identifier_at(lines[line - 1], column):
            return None
        # through a damaged parso disk cache: parso writes its cache files in place, and every
        # editor's Python server on the machine shares them. A file read while another process
        # writes it is cut short (that process finishes it: asked again a moment later); one whose
        # writer was killed stays cut short (every later load of its module fails: the cache goes);
        # a cache folder another process removed meanwhile is made again on the next save.
        for attempt in range(2):
            try:
                return self._describe(source, path, line, column)
            except CACHE_DAMAGE:
                if attempt == 0:
                    time.sleep(CACHE_RETRY_PAUSE)
                else:
                    with contextlib.suppress(OSError):  # another process may be clearing it too
                        # jedi keeps its parso cache in its own folder, not parso's default one
                        parso.cache.clear_cache(cache_path=Path(jedi.settings.cache_directory))
        return self._describe(source, path, line, column)

    def _describe(self, source: str, path: Path, line: int, column: int) -> CursorInfo | None:
        names = self._names(source, path, line, column)
        if not names:
            return None
        name = names[0]
        try:
            signatures = tuple(s.to_string() for s in name.get_signatures())
        except CACHE_DAMAGE:
            raise
        except Exception:  # jedi's own failure on this name: no signature shown
            signatures = ()
        try:
            docstring = name.docstring(raw=True)
        except CACHE_DAMAGE:
            raise
        except Exception:
            docstring = ""
        return CursorInfo(name=name.name, full_name=name.full_name or name.name, jedi_type=name.type,
                          signatures=signatures, docstring=docstring, module_path=name.module_path,
                          line=name.line, column=name.column)
