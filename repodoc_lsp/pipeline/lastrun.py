"""What the last complete `repodoc generate` of a workspace knew: the content digest of each file it
documented. Kept next to the facts cache (one small file per workspace and output folder), so that
the next run finds the files changed since and re-plans only the pages they can alter, as the
language server does for a save (`generate.Job.since`).

The file is data only (gzip-compressed JSON), versioned and read up to a bound, and untrusted: an
unreadable, damaged, foreign or forged one is ignored (a full run follows). A state is only used when
the manifest of the output folder vouches for it: its inputs stamp is the stamp of exactly these
digests (`generate.run`), so a state that is not the tree's makes a full run, never a wrong page.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from repodoc_lsp.store import kept

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


def load(path: Path) -> dict[str, str] | None:
    """file -> content digest as the last complete run documented them; None when there is no usable
    state (missing, unreadable, too large, another version, or not of the expected form)."""
    data = kept.read(path, MAX_BYTES)
    if not isinstance(data, dict) or data.get("version") != VERSION:
        return None
    files = data.get("files")
    if not isinstance(files, dict) or len(files) > MAX_FILES:
        return None
    if not all(isinstance(rel, str) and isinstance(key, str) and len(key) <= 128 for rel, key in files.items()):
        return None
    return files


def save(path: Path, digests: dict[str, str]) -> None:
    """Record `digests` (file -> content digest) as the last complete run's, atomically; a failure
    (a read-only cache folder) only means the next run is a full one."""
    kept.write(path, {"version": VERSION, "files": dict(sorted(digests.items()))}, level=6)

