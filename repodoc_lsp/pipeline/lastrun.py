"""What the last complete `repodoc generate` of a workspace knew: the content digest of each file it
documented, and each file's stat as its scan found it (`store.scan.Seen`: the next scan reads only the
files whose stat moved). Kept next to the facts cache (one small file per workspace and output folder), so that
the next run finds the files changed since and re-plans only the pages they can alter, as the
language server does for a save (`generate.Job.since`).

The file is data only (gzip-compressed JSON), versioned and read up to a bound, and untrusted: an
unreadable, damaged, foreign or forged one is ignored (a full run follows). A state is only used when
the manifest of the output folder vouches for it: its inputs stamp is the stamp of exactly these
digests (`generate.run`), so a state that is not the tree's makes a full run, never a wrong page; its
digests by stat are trusted as the facts cache beside it is (both in the person's private cache folder).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from repodoc_lsp.store import kept
from repodoc_lsp.store.scan import Seen, Stat, as_stat

VERSION = 1
FOLDER = "runs"  # inside the facts cache folder
MAX_BYTES = 16 << 20  # a state file read past this is ignored (about 60 bytes a file)
MAX_FILES = 500_000


def state_path(cache: Path, root: Path, out: Path) -> Path:
    """The state file of the tree of `root` written to `out`, in the cache folder `cache`."""
    name = hashlib.blake2b(f"{root.as_posix()}\0{out.as_posix()}".encode("utf-8", "surrogateescape"),
                           digest_size=16).hexdigest()
    return cache / FOLDER / f"{name}.json.gz"


def cache_of(state: Path) -> Path:
    """The cache folder that holds the state file `state` (`state_path`)."""
    return state.parent.parent


@dataclass(frozen=True, slots=True)
class LastRun:
    files: dict[str, str]  # file -> content digest as the last complete run documented them
    seen: Seen  # those digests by each file's stat as its scan found them (none: every file is read)
    touched: int = 0  # the day the facts cache's rows of these files were last marked used (`generate`)


def load(path: Path) -> LastRun | None:
    """What the last complete run documented; None when there is no usable state (missing, unreadable,
    too large, another version, or not of the expected form). Stats not of that form are left out."""
    data = kept.read(path, MAX_BYTES)
    if not isinstance(data, dict) or data.get("version") != VERSION:
        return None
    files = data.get("files")
    if not isinstance(files, dict) or len(files) > MAX_FILES:
        return None
    if not all(isinstance(rel, str) and isinstance(key, str) and len(key) <= 128 for rel, key in files.items()):
        return None
    touched = data.get("touched")
    return LastRun(files, _seen(files, data.get("stats"), data.get("began")), touched if type(touched) is int else 0)


def _seen(files: dict[str, str], stats: object, began: object) -> Seen:
    """The stats the state holds of `files`, each four ints, and when their scan began."""
    if not (isinstance(stats, dict) and type(began) is int):
        return Seen(files, {}, 0)
    return Seen(files, {rel: st for rel, raw in stats.items() if rel in files and (st := as_stat(raw)) is not None},
                began)


def save(path: Path, digests: dict[str, str], stats: dict[str, Stat] | None = None, began: int = 0,
         touched: int = 0) -> None:
    """Record `digests` (file -> content digest) as the last complete run's, with the `stats` its scan
    found of them, begun at `began` (`time.time_ns()`), and the day their cache rows were `touched`,
    atomically; a failure (a read-only cache folder) only means the next run is a full one."""
    kept.write(path, {"version": VERSION, "files": dict(sorted(digests.items())), "began": began, "touched": touched,
                      "stats": {rel: list(st) for rel, st in sorted((stats or {}).items()) if rel in digests}},
               level=6)

