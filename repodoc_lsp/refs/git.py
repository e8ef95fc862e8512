"""The files a change touches, from git's index and trees (`git` on the PATH; nothing else is run).

git runs nothing of the checkout's: a repository's `.git/config` and `.gitattributes` arrive with
archives and copied trees, and can name programs that git runs (an fsmonitor, hooks, a pager,
clean, smudge and process filters, diff drivers, textconv, the ssh command or credential helper
of a lazy fetch). So git is only asked about its own data (trees, the index, revisions), with
every such program switched off on the command line (`_SAFE`, above the repository's settings),
and git never reads a working-tree file: what changed in the working tree is found by hashing
the files here, as git would hash them without filters (a file a filter or line-ending
conversion stores differently counts as changed, which only widens the check).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import stat
import subprocess
from collections.abc import Iterable
from pathlib import Path

GIT_TIMEOUT = 60  # seconds for one git command

# Options before the command of every git call: no fsmonitor, hooks or pager, and no transport
# (a partial clone fetches a missing object through the remote the repository names, running its
# `core.sshCommand` or credential helper): a protocol allowed by the repository's own
# `protocol.<name>.allow` is refused again here, where the command line wins.
_PROTOCOLS = ("file", "git", "ssh", "http", "https", "ftp", "ftps", "ext", "fd")
_SAFE = ("--no-pager", "-c", "core.fsmonitor=false", "-c", f"core.hooksPath={os.devnull}",
         "-c", "core.pager=cat", "-c", "protocol.allow=never",
         *(arg for name in _PROTOCOLS for arg in ("-c", f"protocol.{name}.allow=never")))
# Diff options of every diff: no external diff or diff driver command, no textconv
_DIFF = ("--no-ext-diff", "--no-textconv", "--no-renames", "--name-only", "-z")
_ENV = {"GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0", "GIT_PAGER": "cat"}
_EMPTY_TREE = {"sha1": "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
               "sha256": "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321"}
_GITLINK, _SYMLINK = 0o160000, 0o120000
# an entry of `ls-files -s -v -z --debug`: its line, then the stat data the index keeps
_DEBUG = re.compile(r"(?P<tag>\S+) (?P<mode>[0-7]+) (?P<oid>[0-9a-f]+) (?P<stage>\d)\t(?P<name>[^\0]*)\0"
                    r"  ctime: (?P<cs>\d+):(?P<cn>\d+)\n  mtime: (?P<ms>\d+):(?P<mn>\d+)\n"
                    r"  dev: \d+\tino: (?P<ino>\d+)\n  uid: \d+\tgid: \d+\n  size: (?P<size>\d+)\tflags: [0-9a-f]+\n")


class GitError(Exception):
    """git is missing, ROOT is not in a repository, or the diff failed (the message says which)."""


def git_command(root: Path, *args: str) -> list[str]:
    """The argv of one git call in `root`, with the checkout's programs switched off."""
    git = shutil.which("git")
    if git is None:
        raise GitError("git is not on the PATH (--since and --staged need it)")
    return [git, *_SAFE, "-C", str(root), *args]


def _git(root: Path, *args: str) -> str:
    try:
        done = subprocess.run(git_command(root, *args), capture_output=True, timeout=GIT_TIMEOUT, check=False,
                              stdin=subprocess.DEVNULL, env={**os.environ, **_ENV})
    except subprocess.TimeoutExpired as exc:
        raise GitError(f"git {args[0]} took more than {GIT_TIMEOUT} s") from exc
    if done.returncode != 0:
        err = os.fsdecode(done.stderr).strip()
        raise GitError(err.splitlines()[-1] if err else f"git {args[0]} failed")
    return os.fsdecode(done.stdout)


def changed_files(root: Path, *, since: str | None = None, staged: bool = False) -> set[str]:
    """Paths relative to `root` (POSIX) of the files changed since `since` (committed or not: the
    working tree against that revision) or staged in the index; deleted files included."""
    root = root.resolve()
    try:
        top = Path(_git(root, "rev-parse", "--show-toplevel").strip()).resolve()
    except GitError as exc:
        raise GitError(f"{root} is not in a git repository ({exc})") from exc
    if since and since.startswith("-"):
        raise GitError(f"--since {since}: not a revision")
    algorithm = _git(root, "rev-parse", "--show-object-format").strip() or "sha1"
    if staged:
        head = _tree(root, "HEAD") or _EMPTY_TREE.get(algorithm, _EMPTY_TREE["sha1"])  # an unborn branch
        names = [n for n in _git(root, "diff-index", "--cached", *_DIFF, head, "--").split("\0") if n]
    else:
        tree = _tree(root, since or "HEAD")
        if tree is None:
            raise GitError(f"--since {since}: unknown revision")
        names = _worktree_changes(root, top, tree, algorithm)
    rels = set()
    for name in names:
        try:
            rels.add((top / name).relative_to(root).as_posix())
        except ValueError:
            continue  # outside ROOT
    return rels


def _tree(root: Path, rev: str) -> str | None:
    try:
        return _git(root, "rev-parse", "--verify", "--quiet", f"{rev}^{{tree}}").strip() or None
    except GitError:
        return None


def _worktree_changes(root: Path, top: Path, tree: str, algorithm: str) -> list[str]:
    """Paths (relative to `top`) under `root` whose working-tree file differs from `tree`'s, as
    `git diff TREE` lists them: what the index holds but the working tree lacks is deleted, what
    git does not look at (skip-worktree, assume-unchanged entries, submodules) is the index's."""
    then: dict[str, str] = {}
    for record in filter(None, _git(root, "ls-tree", "-r", "-z", "--full-name", tree).split("\0")):
        meta, _, name = record.partition("\t")
        then[name] = meta.split()[2]
    now: dict[str, tuple[str, int, str] | None] = {}  # None: unmerged
    same: set[str] = set()  # the file's stat is the index's: its content is the index's (git's rule)
    index = root / _git(root, "rev-parse", "--git-path", "index").strip()
    try:
        written = os.stat(index).st_mtime_ns
    except OSError:
        written = 0
    for m in _DEBUG.finditer(_git(root, "ls-files", "-s", "-v", "-z", "--debug", "--full-name")):
        tag, octal, oid, stage, name = m.group("tag", "mode", "oid", "stage", "name")
        now[name] = (tag, int(octal, 8), oid) if stage == "0" else None
        if stage == "0" and _stat_unchanged(top / name, m, written):
            same.add(name)
    hasher = _Hasher(root, top, algorithm)
    changed = []
    for name in sorted(then.keys() | now.keys()):
        entry = now.get(name, ())
        if entry is None:
            changed.append(name)
            continue
        if not entry:
            current = None  # not in the index: deleted, whatever the working tree has there
        else:
            tag, mode, oid = entry
            looked_at = mode != _GITLINK and tag != "S" and not tag.islower() and name not in same
            current = hasher.oid(name, mode) if looked_at else oid
        if current != then.get(name):
            changed.append(name)
    return changed


def _stat_unchanged(path: Path, m: re.Match[str], written: int) -> bool:
    """Whether the file's stat (times, inode, size: as the index keeps them, 32 bits) is what the
    index recorded, and not racy (changed in the index's last second): then git takes the
    content as the index's, and so does this, without reading the file."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    mtime = st.st_mtime_ns // 10**9, st.st_mtime_ns % 10**9
    ctime = st.st_ctime_ns // 10**9, st.st_ctime_ns % 10**9
    mask = 0xFFFFFFFF
    recorded = tuple(int(m.group(k)) for k in ("ms", "mn", "cs", "cn", "ino", "size"))
    return (recorded == (mtime[0] & mask, mtime[1], ctime[0] & mask, ctime[1], st.st_ino & mask, st.st_size & mask)
            and st.st_mtime_ns // 10**9 < written // 10**9)


class _Hasher:
    """git's object id of a working-tree file, read here (no filter), never through a link: a path
    whose folders are not real folders under `root` is as good as deleted."""

    def __init__(self, root: Path, top: Path, algorithm: str) -> None:
        self.root, self.top, self.algorithm = root, top, algorithm
        self._folders: dict[Path, bool] = {root: True}

    def _real_folder(self, folder: Path) -> bool:
        """True when `folder` and each folder above it up to `root` is a folder, not a link."""
        unknown = []
        while folder not in self._folders and folder != folder.parent:
            unknown.append(folder)
            folder = folder.parent
        real = self._folders.get(folder, False)
        for each in reversed(unknown):
            if real:
                try:
                    real = stat.S_ISDIR(os.lstat(each).st_mode)
                except OSError:
                    real = False
            self._folders[each] = real
        return real

    def oid(self, name: str, mode: int) -> str | None:
        """The object id of `name` as the index's `mode` says it is stored; None: not there (or
        of another type); "unreadable": there, but not read (counts as changed)."""
        path = self.top / name
        try:
            path.relative_to(self.root)
        except ValueError:
            return None  # not asked about (and not read)
        if not self._real_folder(path.parent):
            return None
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            return None
        except OSError:
            return "unreadable"
        if mode == _SYMLINK:
            if not stat.S_ISLNK(st.st_mode):
                return None
            try:
                target = os.fsencode(os.readlink(path))
            except OSError:
                return "unreadable"
            return self._hash(len(target), [target])
        if not stat.S_ISREG(st.st_mode):
            return None
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
            with os.fdopen(fd, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                return self._hash(size, iter(lambda: f.read(1 << 20), b""))
        except OSError:
            return "unreadable"

    def _hash(self, size: int, chunks: Iterable[bytes]) -> str:
        h = hashlib.new(self.algorithm)
        h.update(b"blob %d\0" % size)
        for chunk in chunks:
            h.update(chunk)
        return h.hexdigest()


def old_text(root: Path, rev: str, rel: str) -> str | None:
    """The text of `rel` (relative to `root`) at revision `rev`; None when it was not there.
    `cat-file blob` prints the stored bytes: no filter or textconv runs."""
    try:
        return _git(root, "cat-file", "blob", f"{rev}:./{rel}")
    except GitError:
        return None
