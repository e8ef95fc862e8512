"""What changed on disk since the last look: files by size, modification time and mode, folders by
modification time (a file added to or removed from a folder changes it). A look costs a `stat`
per file and folder; links are not followed (a file replaced by a link is a change)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

FileStat = tuple[int, int, int]  # (size, mtime_ns, mode): a chmod may make a file private (no input)


def file_stats(root: Path, rels: Iterable[str]) -> dict[str, FileStat]:
    """(size, mtime_ns, mode) of each of `rels` that exists (as itself, links not followed)."""
    found = {}
    base, stat = f"{root}/", os.stat
    for rel in rels:
        try:
            st = stat(base + rel, follow_symlinks=False)
        except OSError:
            continue
        found[rel] = (st.st_size, st.st_mtime_ns, st.st_mode)
    return found


def folder_stats(root: Path, folders: Iterable[str]) -> dict[str, int]:
    """mtime_ns of each of `folders` ("" is the root) that exists."""
    found = {}
    base, stat = f"{root}/", os.stat
    for folder in folders:
        try:
            found[folder] = stat(base + folder if folder else str(root), follow_symlinks=False).st_mtime_ns
        except OSError:
            continue
    return found


class Disk:
    """The files and folders of a workspace as last seen. Used on one thread (the root's)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.files: dict[str, FileStat] = {}
        self.folders: dict[str, int] = {}

    def see(self, files: Iterable[str], folders: Iterable[str]) -> None:
        """Remember these files and folders as they are now."""
        self.files, self.folders = file_stats(self.root, files), folder_stats(self.root, folders)

    def changed_files(self) -> list[str]:
        """Files whose size or modification time is not the one last seen (or that are gone)."""
        now = file_stats(self.root, self.files)
        return [rel for rel, seen in self.files.items() if now.get(rel) != seen]

    def changed_folders(self) -> list[tuple[str, list[str]]]:
        """Folders changed since last seen, each with the names it holds now (none: gone); they are
        forgotten (seen again by `follow`)."""
        now = folder_stats(self.root, self.folders)
        changed = []
        for folder, seen in list(self.folders.items()):
            if now.get(folder) == seen:
                continue
            del self.folders[folder]
            try:
                names = sorted(os.listdir(self.root / folder)) if folder in now else []
            except OSError:
                names = []
            changed.append((folder, names))
        return changed

    def follow(self, changed: list[str], files: Iterable[str], folders: Iterable[str]) -> None:
        """After the workspace took `changed`: remember them (those it holds: `files`) and the files
        and folders it holds that were not seen yet."""
        held = set(files)
        self.files.update(file_stats(self.root, (rel for rel in changed if rel in held)))
        for rel in changed:
            if rel not in held:
                self.files.pop(rel, None)
        self.files.update(file_stats(self.root, (rel for rel in held if rel not in self.files)))
        self.folders.update(folder_stats(self.root, (f for f in folders if f not in self.folders)))

    def unchanged(self, files: dict[str, FileStat], folders: dict[str, int]) -> bool:
        """Every one of these files and folders is as given (none gone, none changed)."""
        return file_stats(self.root, files) == files and folder_stats(self.root, folders) == folders
