"""Which folders become roots: the person's workspace folders, never the file system root, the home
folder, a system folder or a folder inside a repodoc output folder. Files elsewhere get hover only."""

from __future__ import annotations

from pathlib import Path

from repodoc_lsp.output.manifest import has_manifest

SYSTEM_FOLDERS = (Path("/proc"), Path("/sys"), Path("/dev"))


def refusal(folder: Path) -> str:
    """Why `folder` cannot be a root ("" when it can); decided without listing it."""
    real = folder.resolve()
    if real.parent == real:
        return f"{folder} is the root of the file system"
    home = Path.home().resolve()
    if real == home:
        return f"{folder} is your home folder"
    if real in home.parents:
        return f"{folder} holds your home folder"
    if any(real == s or s in real.parents for s in SYSTEM_FOLDERS):
        return f"{folder} is a system folder"
    output = output_folder_around(real)
    if output is not None:
        return f"{folder} is inside the repodoc output folder {output}"
    return ""


def output_folder_around(real: Path) -> Path | None:
    """The repodoc output folder (it holds a manifest) that is `real` or holds it, if any."""
    for folder in (real, *real.parents):
        if has_manifest(folder):
            return folder
    return None


PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")


def project_folder(path: Path) -> Path:
    """The folder jedi resolves imports from for a file outside every root (hover only): the
    nearest folder with a project marker that could be a root, else the file's folder."""
    start = path.parent.resolve()
    for folder in (start, *start.parents):
        if any((folder / marker).exists() for marker in PROJECT_MARKERS):
            return folder if not refusal(folder) else start
    return start
