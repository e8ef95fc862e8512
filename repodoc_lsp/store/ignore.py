"""A workspace's gitignore-style patterns: `[tool.repodoc]`'s include, exclude and refs-ignore
(`gitignore_spec`, pathspec's reading), and ignore files (`IgnoreFile`: `.gitignore` files and
`.git/info/exclude`, read and matched as git does, however long), compiled once for discovery,
settings and the references check."""

from __future__ import annotations

import importlib.util
import os
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pathspec

# RE2 (google-re2, a dependency) matches in time linear in the path: Python's `re` backtracks, and a
# workspace's pattern (`.gitignore`, `[tool.repodoc]`) such as `a*a*a*a*a*b` took 23 s to fail on one
# 200-character name. An install without it (an environment made before it was a dependency) has Python's.
PATTERN_BACKEND = "re2" if importlib.util.find_spec("re2") is not None else "simple"


def _compiled(lines: list[str]) -> pathspec.PathSpec | None:
    if not lines:
        return None
    import pathspec  # when a setting holds patterns: most runs have none (importing it was 3% of a check)

    return pathspec.GitIgnoreSpec.from_lines(lines, backend=PATTERN_BACKEND)


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


# ---------------------------------------------------------------------------------------------------
# Ignore files (`.gitignore`, `.git/info/exclude`), read and matched as git reads and matches them.
#
# pathspec compiles all of a file's patterns into one RE2 set, which RE2 refuses past about 2,000
# lines: the file was then dropped whole, and what git ignores (`.env`, credentials) became pages.
# Here each pattern becomes one regular expression over the path's bytes (git's wildmatch, as
# `dir.c` calls it: basename or path, `**`, classes, escapes), and the expressions are compiled in
# sets of at most `_SET_SIZE`: any number of lines is matched, the last matching pattern deciding.

_SET_SIZE = 256  # patterns per RE2 set: each set's automaton stays small, and quick to match
_LONG_LINE_BUDGET = 64 << 20  # RE2's memory bound for one line too long for the default (8 MB)
_DIR = "\\x00"  # a folder's probe ends with a NUL byte, which no path and no pattern holds
_ANY = "[^\\x00]"  # any byte of a path (`**`)
_ONE = "[^/\\x00]"  # any byte of one path segment (`*`, `?`)
_LITERAL = [chr(b) if chr(b).isascii() and chr(b).isalnum() else f"\\x{b:02x}" for b in range(256)]
_SPECIAL = re.compile(rb"[*?\[\\]")

_CLASSES: dict[bytes, frozenset[int]] = {  # git's own ctype: ASCII only, whatever the locale
    b"alnum": frozenset(b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"),
    b"alpha": frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"),
    b"blank": frozenset(b" \t"),
    b"cntrl": frozenset([*range(32), 127]),
    b"digit": frozenset(b"0123456789"),
    b"graph": frozenset(range(33, 127)),
    b"lower": frozenset(b"abcdefghijklmnopqrstuvwxyz"),
    b"print": frozenset(range(32, 127)),
    b"punct": frozenset(b"!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"),
    b"space": frozenset(b" \t\n\r"),
    b"upper": frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ"),
    b"xdigit": frozenset(b"0123456789ABCDEFabcdef"),
}
_SEGMENT_BYTES = frozenset(range(256)) - {0, ord("/")}


def _byte_class(chosen: set[int] | frozenset[int]) -> str:
    """A class of these bytes, as ranges; one that matches nothing when there are none."""
    if not chosen:
        return "[^\\x00-\\xff]"
    ranges: list[str] = []
    ordered = sorted(chosen)
    first = last = ordered[0]
    for b in [*ordered[1:], -2]:
        if b == last + 1:
            last = b
            continue
        ranges.append(f"\\x{first:02x}" if first == last else f"\\x{first:02x}-\\x{last:02x}")
        first = last = b
    return "[" + "".join(ranges) + "]"
def _bracket(pat: bytes, i: int) -> tuple[str, int] | None:
    """The class of the bracket expression starting at pat[i] (`[`) and the index after it; None when
    wildmatch aborts on it (never closed, an unknown `[:class:]`): the pattern then matches nothing."""
    n = len(pat)
    i += 1
    if i >= n:
        return None
    negated = pat[i] in b"!^"
    if negated:
        i += 1
        if i >= n:
            return None
    members: set[int] = set()
    prev = 0
    ch = pat[i]
    while True:
        if ch == ord("\\"):
            i += 1
            if i >= n:
                return None
            ch = pat[i]
            members.add(ch)
        elif ch == ord("-") and prev and i + 1 < n and pat[i + 1] != ord("]"):
            i += 1
            ch = pat[i]
            if ch == ord("\\"):
                i += 1
                if i >= n:
                    return None
                ch = pat[i]
            members.update(range(prev, ch + 1))
            ch = 0
        elif ch == ord("[") and i + 1 < n and pat[i + 1] == ord(":"):
            start = end = i + 2
            while end < n and pat[end] != ord("]"):
                end += 1
            if end >= n:
                return None
            if end - start - 1 < 0 or pat[end - 1] != ord(":"):  # no `:]`: a `[` like any other
                members.add(ch)
                i = start - 2
            else:
                named = _CLASSES.get(pat[start : end - 1])
                if named is None:
                    return None
                members.update(named)
                i, ch = end, 0
        else:
            members.add(ch)
        prev = ch
        i += 1
        if i >= n:
            return None
        ch = pat[i]
        if ch == ord("]"):
            break
    return _byte_class((_SEGMENT_BYTES - members) if negated else (members & _SEGMENT_BYTES)), i + 1


def _wildmatch(pat: bytes, *, pathname: bool, prefix: int = 0) -> str | None:
    """git's wildmatch of `pat` as a regular expression over Latin-1 bytes (a full match); None when
    it never matches. With `pathname`, `*` and `?` stay in one segment and `**` between slashes
    crosses them; `prefix` is where git cut the pattern's literal start off before matching (a `**`
    there counts as at the start)."""
    out: list[str] = []
    n = len(pat)
    i = 0
    while i < n:
        ch = pat[i]
        if ch == ord("*"):
            j = i
            while j < n and pat[j] == ord("*"):
                j += 1
            at_start = i == 0 or i == prefix or pat[i - 1] == ord("/")
            at_end = j == n or pat[j] == ord("/") or pat[j : j + 2] == b"\\/"
            if pathname and j - i >= 2 and at_start and at_end:
                if j < n and pat[j] == ord("/"):
                    out.append(f"(?:{_ANY}*/)?")  # `**/`: no folder, or any folders
                    j += 1
                else:
                    out.append(f"{_ANY}*")
            else:
                out.append(f"{_ONE}*")
            i = j
        elif ch == ord("?"):
            out.append(_ONE)
            i += 1
        elif ch == ord("["):
            found = _bracket(pat, i)
            if found is None:
                return None
            cls, i = found
            out.append(cls)
        elif ch == ord("\\"):
            if i + 1 >= n:
                return None  # a trailing backslash matches nothing
            out.append(_LITERAL[pat[i + 1]])
            i += 2
        else:
            special = _SPECIAL.search(pat, i)
            stop = n if special is None else special.start()
            out.append("".join([_LITERAL[b] for b in pat[i:stop]]))
            i = stop
    return "".join(out)


def _simple_length(pat: bytes) -> int:
    return next((k for k, b in enumerate(pat) if b in b"*?[\\"), len(pat))


def ignore_lines(data: bytes) -> list[bytes]:
    """The pattern lines of an ignore file as git takes them: after a UTF-8 BOM, split at LF, a line's
    CR and unescaped trailing spaces dropped, comments (`#` first) and empty lines left out."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    lines = []
    for line in data.split(b"\n"):
        if not line or line.startswith(b"#"):
            continue
        line = line.removesuffix(b"\r").split(b"\0", 1)[0]
        if not line.endswith(b" "):
            lines.append(line)
            continue
        last_space = -1
        k = 0
        while k < len(line):
            b = line[k]
            if b == ord(" "):
                if last_space < 0:
                    last_space = k
            elif b == ord("\\"):
                k += 1
                last_space = -1
            else:
                last_space = -1
            k += 1
        if last_space >= 0:
            line = line[:last_space]
        if line:
            lines.append(line)
    return lines


def pattern_regex(line: bytes) -> tuple[str | None, bool, bool]:
    """One ignore-file line as git matches it (`dir.c`: parse_path_pattern, match_basename,
    match_pathname): a regular expression over Latin-1 bytes (a folder's followed by NUL; None: the
    line matches nothing), whether the line re-includes (`!`), and whether it is matched against
    the last segment of the path (no `/` but a trailing one), else against the path relative to the
    ignore file's folder."""
    negative = line.startswith(b"!")
    if negative:
        line = line[1:]
    must_be_dir = line.endswith(b"/")
    if must_be_dir:
        line = line[:-1]
    basename = b"/" not in line
    if not line:
        return None, negative, basename
    if basename:
        regex = _wildmatch(line, pathname=False)
    else:
        if line.startswith(b"/"):
            line = line[1:]
        regex = _wildmatch(line, pathname=True, prefix=_simple_length(line))
    if regex is None:
        return None, negative, basename
    return regex + (_DIR if must_be_dir else _DIR + "?"), negative, basename


class _Patterns:
    """Regular expressions (by their line's index), each matched against the whole of a probe: in
    RE2 sets of at most `_SET_SIZE`; a line RE2 does not compile alone by Python's `re`."""

    def __init__(self, members: list[tuple[int, str]]) -> None:
        self._sets: list[tuple[Any, list[int]]] = []  # the set, the line of each of its members
        self._single: list[tuple[int, re.Pattern[bytes]]] = []
        for start in range(0, len(members), _SET_SIZE):
            self._compile(members[start : start + _SET_SIZE])
        self._single.sort(key=lambda item: -item[0])

    def _compile(self, members: list[tuple[int, str]], budget: int = 8 << 20) -> None:
        """Compile `members` as one set of at most `budget` bytes (RE2's default), else in halves; a
        line alone past it has a larger one, then Python's `re`."""
        if PATTERN_BACKEND != "re2":
            self._single += [(k, re.compile(r.encode("latin-1"), re.DOTALL)) for k, r in members]
            return
        import re2

        options = re2.Options()
        options.encoding = re2.Options.Encoding.LATIN1
        options.log_errors = False
        options.never_capture = True
        options.max_mem = budget
        regex_set = re2.Set.FullMatchSet(options)
        try:
            for _, regex in members:
                regex_set.Add(regex.encode("latin-1"))
            regex_set.Compile()
        except re2.error:
            if len(members) > 1:
                half = len(members) // 2
                self._compile(members[:half], budget)
                self._compile(members[half:], budget)
            elif budget < _LONG_LINE_BUDGET:
                self._compile(members, _LONG_LINE_BUDGET)
            else:  # a line longer than RE2 takes
                k, regex = members[0]
                self._single.append((k, re.compile(regex.encode("latin-1"), re.DOTALL)))
            return
        self._sets.append((regex_set, [k for k, _ in members]))

    def last(self, probe: bytes, after: int = -1) -> int:
        """The last line past `after` that matches `probe`; `after` when none does."""
        for regex_set, lines in reversed(self._sets):
            if lines[-1] <= after:
                break
            found = regex_set.Match(probe)
            if found:
                after = max(after, max(lines[m] for m in found))
                break
        for k, compiled in self._single:
            if k <= after:
                break
            if compiled.fullmatch(probe):
                return k
        return after


class IgnoreFile:
    """The patterns of one ignore file, matched as git matches them (the last matching line decides;
    `!` re-includes; a trailing `/` only folders; a `/` before the end anchors the line to the
    file's folder), however many lines it has."""

    def __init__(self, data: bytes) -> None:
        self._negative: list[bool] = []
        base: list[tuple[int, str]] = []
        path: list[tuple[int, str]] = []
        for k, line in enumerate(ignore_lines(data)):
            regex, negative, basename = pattern_regex(line)
            self._negative.append(negative)
            if regex is not None:
                (base if basename else path).append((k, regex))
        self._base = _Patterns(base)
        self._path = _Patterns(path)

    def __len__(self) -> int:
        return len(self._negative)

    def decide(self, rel: str, is_dir: bool) -> bool | None:
        """True when the last line matching `rel` (POSIX, relative to the file's folder) ignores it,
        False when it re-includes it, None when no line matches it."""
        mark = b"\0" if is_dir else b""
        name = os.fsencode(rel)
        last = self._base.last(name.rsplit(b"/", 1)[-1] + mark)
        last = self._path.last(name + mark, last)
        return None if last < 0 else not self._negative[last]
