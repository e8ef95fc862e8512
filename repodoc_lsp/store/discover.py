"""Which files are inputs: ignore files, settings, and never the output folder."""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from repodoc_lsp.config import Settings
from repodoc_lsp.output.modes import wider_reason
from repodoc_lsp.store.ignore import IgnoreFile, gitignore_spec
from repodoc_lsp.store.regular import read_inside

# Folders that are never inputs, whatever the ignore files say.
NEVER_DIRS = frozenset({
    ".git", ".hg", ".svn", "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache",
    ".tox", ".nox", ".eggs", "node_modules", ".venv", "venv", ".hypothesis", ".ipynb_checkpoints",
})
BINARY_SUFFIXES = frozenset({
    ".png", ".jpg", ".jpeg", ".gif", ".bmp", ".ico", ".webp", ".pdf", ".zip", ".gz", ".bz2",
    ".xz", ".tar", ".whl", ".egg", ".so", ".dylib", ".dll", ".exe", ".o", ".a", ".pyc", ".pyo",
    ".pyd", ".class", ".jar", ".woff", ".woff2", ".ttf", ".otf", ".eot", ".mp3", ".mp4", ".wav",
    ".ogg", ".avi", ".mov", ".pt", ".pth", ".bin", ".npy", ".npz", ".pkl", ".pickle", ".db",
    ".sqlite", ".sqlite3", ".vsix", ".onnx", ".safetensors", ".h5",
})


@dataclass(frozen=True, slots=True)
class Skipped:
    path: str
    reason: str


CAPPED = "."  # the path of the skip that says the walk stopped at max-workspace-files


def capped(skipped: list[Skipped]) -> Skipped | None:
    """The skip saying the workspace has more files than max-workspace-files, if it has."""
    return next((s for s in skipped if s.path == CAPPED), None)


@dataclass
class Discovery:
    """Inputs as POSIX paths relative to the root, sorted; folders include "" (the root)."""

    files: list[str] = field(default_factory=list)
    folders: list[str] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    # each input's size, modification and status change times (ns) and inode, as the walk found them
    stats: dict[str, tuple[int, int, int, int]] = field(default_factory=dict)


def _read_ignore(root: Path, path: Path, problems: dict[str, str]) -> IgnoreFile | None:
    """The patterns of the ignore file at `path`; None when there is none, or when it is not read (a
    link out of the workspace, not a regular file, unreadable: git does not read it either): then
    `problems` gets the reason under its path relative to `root`, and its patterns ignore nothing.
    One too large to read ignores everything beside and below it."""
    try:
        data = read_inside(root, path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        why = f"ignore file not read: {exc.strerror or exc}"
        # git reads a larger one: what it ignores is unknown here, so the folder it is in is left out
        whole = exc.errno == errno.EFBIG
        with contextlib.suppress(ValueError):
            problems[path.relative_to(root).as_posix()] = why + ("; the files beside it are left out" if whole else "")
        return IgnoreFile(b"*\n") if whole else None
    rules = IgnoreFile(data)
    return rules if len(rules) else None


class InputFilter:
    """Decides whether a path relative to the root is an input."""

    def __init__(self, root: Path, settings: Settings) -> None:
        self.root = root
        self.settings = settings
        self.output_real = os.path.realpath(root / settings.output)
        self.include = gitignore_spec(settings.include)
        self.exclude = gitignore_spec(settings.exclude)
        self._ignores: dict[str, IgnoreFile | None] = {}
        # ignore files not read, by path relative to the root: the reason (`discover` reports them)
        self.problems: dict[str, str] = {}
        self._root_extra = _read_ignore(root, root / ".git" / "info" / "exclude", self.problems)

    def _ignore_for(self, folder: str) -> IgnoreFile | None:
        if folder not in self._ignores:
            self._ignores[folder] = _read_ignore(self.root, self.root / folder / ".gitignore", self.problems)
        return self._ignores[folder]

    def ignored(self, rel: str, is_dir: bool) -> bool:
        """Ignored as git decides for a path whose folders are not ignored (the walk leaves ignored
        folders out, `is_input` asks for each): the `.gitignore` nearest to it that has a line
        matching it decides (a deeper file overrides those above), then `.git/info/exclude`."""
        parts = rel.split("/")
        for depth in range(len(parts) - 1, -1, -1):
            rules = self._ignore_for("/".join(parts[:depth]))
            if rules is not None and (verdict := rules.decide("/".join(parts[depth:]), is_dir)) is not None:
                return verdict
        return self._root_extra is not None and self._root_extra.decide(rel, is_dir) is True

    def dir_excluded(self, rel: str, path: str) -> bool:
        name = rel.rsplit("/", 1)[-1]
        if name in NEVER_DIRS or name.endswith(".egg-info"):
            return True
        if os.path.realpath(path) == self.output_real:
            return True
        if os.path.exists(os.path.join(path, "pyvenv.cfg")):
            return True
        if self.exclude is not None and self.exclude.match_file(rel + "/"):
            return True
        return self.ignored(rel, is_dir=True)

    def file_excluded(self, rel: str) -> bool:
        if self.exclude is not None and self.exclude.match_file(rel):
            return True
        if self.include is not None and not self.include.match_file(rel):
            return True
        return self.ignored(rel, is_dir=False)

    def is_input(self, path: Path) -> bool:
        """For one file (a save in the editor): inside the root, not excluded, in no excluded folder."""
        try:
            rel = path.resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            return False
        parts = rel.split("/")
        for depth in range(1, len(parts)):
            folder = "/".join(parts[:depth])
            if self.dir_excluded(folder, str(self.root / folder)):
                return False
        return not self.file_excluded(rel) and not _binary_name(rel)


def _binary_name(rel: str) -> bool:
    return os.path.splitext(rel)[1].lower() in BINARY_SUFFIXES


def discover(root: Path, settings: Settings) -> Discovery:
    """Walk the root without following folder links; report what is left out and why. Only regular
    files are inputs; the walk stops after max-workspace-files files (a skip at CAPPED says so)."""
    root = root.resolve()
    flt = InputFilter(root, settings)
    found = Discovery()
    root_real = str(root)
    stack = [""]
    seen = 0
    while stack:
        folder = stack.pop()
        abs_folder = os.path.join(root_real, folder) if folder else root_real
        try:
            entries = sorted(os.scandir(abs_folder), key=lambda e: e.name)
        except OSError as exc:
            found.skipped.append(Skipped(folder or ".", f"unreadable folder: {exc.strerror or exc}"))
            continue
        for entry in entries:
            rel = f"{folder}/{entry.name}" if folder else entry.name
            try:
                if entry.is_symlink():
                    if entry.is_dir() or not os.path.exists(entry.path):
                        if entry.is_dir() and flt.dir_excluded(rel, entry.path):
                            continue
                        why = "symbolic link to a folder (not followed)" if entry.is_dir() \
                            else "broken symbolic link"
                        if not flt.file_excluded(rel):
                            found.skipped.append(Skipped(rel, why))
                        continue
                    target = os.path.realpath(entry.path)
                    if os.path.commonpath([target, root_real]) != root_real:
                        if not flt.file_excluded(rel):
                            found.skipped.append(Skipped(rel, "symbolic link to outside the workspace"))
                        continue
                    if target.startswith(flt.output_real + os.sep):
                        continue
                if entry.is_dir():
                    if not flt.dir_excluded(rel, entry.path):
                        stack.append(rel)
                    continue
                if not entry.is_file() or flt.file_excluded(rel):
                    continue  # FIFOs, devices and sockets too: never opened
                seen += 1
                if seen > settings.max_workspace_files:
                    found.skipped.append(Skipped(CAPPED, f"more than {settings.max_workspace_files:,} files: "
                                                         "the rest are left out (max-workspace-files)"))
                    stack.clear()
                    break
                if _binary_name(rel):
                    found.skipped.append(Skipped(rel, "binary (by extension)"))
                    continue
                st = entry.stat()
                size, private = st.st_size, wider_reason(st.st_mode)
            except OSError as exc:
                why = "symbolic link loop" if exc.errno == errno.ELOOP else f"unreadable: {exc.strerror or exc}"
                found.skipped.append(Skipped(rel, why))
                continue
            if private:
                found.skipped.append(Skipped(rel, private))
                continue
            if size > settings.max_file_bytes:
                found.skipped.append(Skipped(
                    rel, f"too large ({size:,} bytes; max-file-bytes is {settings.max_file_bytes:,})"))
                continue
            found.stats[rel] = (size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
    # an ignore file not read (besides its skip as an input, if it has one: a link out of the workspace)
    found.skipped += [Skipped(rel, why) for rel, why in flt.problems.items()]
    found.files = sorted(found.stats)
    found.folders = sorted(input_folders(found.stats))
    found.skipped.sort(key=lambda s: s.path)
    return found


def input_folders(*files: Iterable[str]) -> set[str]:
    """The folders holding `files` and their ancestors, the root ("") included: the folders that have
    pages (a folder holding only files read but skipped, binary content, has them too)."""
    return {""} | {f for rels in files for r in rels for f in _ancestors(r)}


def _ancestors(rel: str) -> Iterable[str]:
    parts = rel.split("/")[:-1]
    yield ""
    for i in range(1, len(parts) + 1):
        yield "/".join(parts[:i])


def rules_saved(root: Path, settings: Settings, rels: Iterable[str], held: Iterable[str]
                ) -> tuple[InputFilter, list[str], list[str]] | None:
    """A `.gitignore` among `rels` (saved in the editor) decides the inputs at once, as the next scan
    would: a filter that reads the rules again, the inputs not `held` and the `held` files no longer inputs."""
    if not any(rel.rsplit("/", 1)[-1] == ".gitignore" for rel in rels):
        return None
    found, kept = discover(root, settings).files, set(held)
    now = set(found)
    return InputFilter(root, settings), [rel for rel in found if rel not in kept], sorted(kept - now)
