"""discover(): which files of a workspace are inputs, and why the others are left out."""

from __future__ import annotations

import os
from pathlib import Path

from helpers import make_workspace

from repodoc_lsp.config import Settings, load_settings
from repodoc_lsp.discover import CAPPED, capped, discover


def test_gitignore_and_never_inputs(tmp_path: Path) -> None:
    """.gitignore files (each folder's own), version control, virtual environments, caches and
    node_modules are never inputs, and leaving them out is not a skip."""
    root = make_workspace(tmp_path / "ws", {
        ".gitignore": "build/\n*.log\n", "a.py": "x = 1\n", "build/gen.py": "x\n", "run.log": "log\n",
        "sub/.gitignore": "secret.txt\n", "sub/secret.txt": "s\n", "sub/ok.txt": "ok\n",
        ".git/config": "[core]\n", "venv/pyvenv.cfg": "home = /usr\n", "venv/lib/x.py": "x\n",
        "pkg/__pycache__/a.cpython-311.pyc": b"\x00\x01", "node_modules/m/index.js": "x\n",
    })
    found = discover(root, Settings())
    assert found.files == [".gitignore", "a.py", "sub/.gitignore", "sub/ok.txt"]
    assert found.folders == ["", "sub"]
    assert found.skipped == []


def test_the_output_folder_is_never_an_input(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", {"a.py": "x = 1\n", "docs/notes.md": "mine\n", "site/b.md": "b\n"})
    assert discover(root, Settings()).files == ["a.py", "site/b.md"]
    assert discover(root, Settings(output="site")).files == ["a.py", "docs/notes.md"]


def test_a_file_over_max_file_bytes_is_skipped(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", {"pyproject.toml": "[tool.repodoc]\nmax-file-bytes = 100\n",
                                            "big.py": "x = 1\n" * 100, "small.py": "x = 1\n"})
    settings, problems = load_settings(root, {})
    assert problems == []
    found = discover(root, settings)
    assert [(s.path, s.reason) for s in found.skipped] == [("big.py", "too large (600 bytes; max-file-bytes is 100)")]
    assert found.files == ["pyproject.toml", "small.py"]


def test_links_binaries_and_other_files_are_left_out_with_a_reason(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", {"ok.py": "x = 1\n", "image.png": b"\x89PNG\r\n",
                                            "inside/t.py": "y = 2\n"})
    os.symlink(root / "loop", root / "loop")
    os.symlink("/etc/hostname", root / "outside.txt")
    os.symlink(root / "missing", root / "dangling.py")
    os.symlink(root / "inside", root / "folder_link")
    os.symlink(root / "inside/t.py", root / "alias.py")  # a link inside the workspace is an input
    os.mkfifo(root / "pipe.py")  # never opened, never a skip
    found = discover(root, Settings())
    assert {s.path: s.reason for s in found.skipped} == {
        "image.png": "binary (by extension)",
        "outside.txt": "symbolic link to outside the workspace",
        "loop": "symbolic link loop",
        "dangling.py": "broken symbolic link",
        "folder_link": "symbolic link to a folder (not followed)",
    }
    assert found.files == ["alias.py", "inside/t.py", "ok.py"]


def test_the_walk_stops_at_max_workspace_files(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", {f"m{i:02}.py": "x = 1\n" for i in range(12)})
    found = discover(root, Settings(max_workspace_files=5))
    assert len(found.files) == 5
    cap = capped(found.skipped)
    assert cap is not None and cap.path == CAPPED
    assert cap.reason == "more than 5 files: the rest are left out (max-workspace-files)"
    assert capped(discover(root, Settings()).skipped) is None
