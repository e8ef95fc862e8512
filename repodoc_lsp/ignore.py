"""A workspace's gitignore-style patterns (`.gitignore` files, `[tool.repodoc]`'s include, exclude
and refs-ignore), compiled once for discovery, settings and the references check."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable

import pathspec

# RE2 (google-re2, a dependency) matches in time linear in the path: Python's `re` backtracks, and a
# workspace's pattern (`.gitignore`, `[tool.repodoc]`) such as `a*a*a*a*a*b` took 23 s to fail on one
# 200-character name. An install without it (an environment made before it was a dependency) has Python's.
PATTERN_BACKEND = "re2" if importlib.util.find_spec("re2") is not None else "simple"


def _compiled(lines: list[str]) -> pathspec.PathSpec | None:
    return pathspec.GitIgnoreSpec.from_lines(lines, backend=PATTERN_BACKEND) if lines else None


def _compiles(line: str) -> bool:
    try:
        _compiled([line])
    except ImportError:  # google-re2 is a dependency: not the pattern's fault
        raise
    except Exception:  # pathspec's ValueError, re.error, RE2's own: the pattern is none
        return False
    return True


def gitignore_spec(lines: Iterable[str]) -> pathspec.PathSpec | None:
    """The gitignore-style patterns of `lines`, matched by RE2; a line that is no valid pattern
    matches nothing (as git leaves it: `[z-a]`, a trailing `\\`), it does not stop the run.
    ValueError when the patterns are more than RE2 compiles together (about 3,000 lines)."""
    kept = [ln for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]
    try:
        return _compiled(kept)
    except ImportError:
        raise
    except Exception:  # one line is no pattern: the others are kept
        pass
    try:
        return _compiled([ln for ln in kept if _compiles(ln)])
    except ImportError:
        raise
    except Exception:  # every line is a pattern, yet together more than RE2 compiles (its memory bound)
        raise ValueError(f"{len(kept):,} patterns: more than can be matched together") from None
