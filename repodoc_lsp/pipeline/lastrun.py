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

import contextlib
import gzip
import hashlib
import json
import os
import tempfile
import zlib
from pathlib import Path

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
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_BYTES + 1)
        if len(raw) > MAX_BYTES:
            return None
        # bounded inflation: a small file that inflates past the bound is refused too
        inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
        text = inflater.decompress(raw, MAX_BYTES)
        if inflater.unconsumed_tail:
            return None
        data = json.loads(text)
    except (OSError, ValueError, EOFError, zlib.error, RecursionError):
        return None
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
    data = gzip.compress(json.dumps({"version": VERSION, "files": dict(sorted(digests.items()))},
                                    separators=(",", ":")).encode(), compresslevel=6, mtime=0)
    with contextlib.suppress(OSError):
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".state-", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(temporary, path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)

