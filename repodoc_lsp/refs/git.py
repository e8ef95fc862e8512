"""The files a change touches, from git's own diff (`git` on the PATH; nothing else is run)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

GIT_TIMEOUT = 60  # seconds for one git command


class GitError(Exception):
    """git is missing, ROOT is not in a repository, or the diff failed (the message says which)."""


def _git(root: Path, *args: str) -> str:
    git = shutil.which("git")
    if git is None:
        raise GitError("git is not on the PATH (--since and --staged need it)")
    try:
        done = subprocess.run([git, "-C", str(root), *args], capture_output=True, text=True,
                              timeout=GIT_TIMEOUT, check=False)
    except subprocess.TimeoutExpired as exc:
        raise GitError(f"git {' '.join(args)} took more than {GIT_TIMEOUT} s") from exc
    if done.returncode != 0:
        raise GitError(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"git {args[0]} failed")
    return done.stdout


def changed_files(root: Path, *, since: str | None = None, staged: bool = False) -> set[str]:
    """Paths relative to `root` (POSIX) of the files changed since `since` (committed or not)
    or staged in the index; deleted files included."""
    root = root.resolve()
    try:
        top = Path(_git(root, "rev-parse", "--show-toplevel").strip()).resolve()
    except GitError as exc:
        raise GitError(f"{root} is not in a git repository ({exc})") from exc
    args = ["diff", "--name-only", "-z", "--no-renames"]
    args += ["--cached"] if staged else [since or "HEAD", "--"]
    if since and since.startswith("-"):
        raise GitError(f"--since {since}: not a revision")
    out = _git(root, *args)
    rels = set()
    for name in filter(None, out.split("\0")):
        try:
            rels.add((top / name).relative_to(root).as_posix())
        except ValueError:
            continue  # outside ROOT
    return rels


def old_text(root: Path, rev: str, rel: str) -> str | None:
    """The text of `rel` (relative to `root`) at revision `rev`; None when it was not there."""
    try:
        return _git(root, "show", f"{rev}:./{rel}")
    except GitError:
        return None
