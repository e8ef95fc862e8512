"""discover(): which files of a workspace are inputs, and why the others are left out."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pathspec
from helpers import make_workspace
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from repodoc_lsp.config import Settings, load_settings
from repodoc_lsp.store.discover import CAPPED, capped, discover
from repodoc_lsp.store.ignore import gitignore_spec


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


def test_patterns_that_are_none_match_nothing_and_the_others_still_apply(tmp_path: Path) -> None:
    """A workspace's `.gitignore` line that is no pattern (`[z-a]`, a lone `\\`) is left as git leaves
    it: it matches nothing. Before, the walk raised (re.error, GitIgnorePatternError) and `repodoc
    generate` ended in a traceback. A POSIX class (`[[:alpha:]]x`) matches as in git: `zx` is ignored."""
    root = make_workspace(tmp_path / "ws", {
        ".gitignore": "[z-a]\n*.log\n\\\n[[:alpha:]]x\n", "a.py": "x = 1\n", "run.log": "l\n", "zx": "z\n",
        "sub/.gitignore": "\\\n", "sub/b.py": "y = 2\n",
        "pyproject.toml": '[tool.repodoc]\nexclude = ["[b-a]", "sub/c.py"]\n', "sub/c.py": "z = 3\n"})
    settings, _ = load_settings(root)
    found = discover(root, settings)
    assert found.files == [".gitignore", "a.py", "pyproject.toml", "sub/.gitignore", "sub/b.py"]


def test_a_pattern_that_backtracks_in_python_s_re_does_not_hold_the_walk(tmp_path: Path) -> None:
    """`a*a*a*a*a*a*a*a*b` against a 200-character name of `a`s: Python's `re` backtracks for
    hours (23 s at 4 stars); RE2 answers at once. In a process of its own, with a deadline."""
    root = make_workspace(tmp_path / "ws", {".gitignore": "a" + "*a" * 8 + "*b\n", "a" * 200 + ".py": "x = 1\n",
                                            "pyproject.toml": '[tool.repodoc]\nexclude = ["' + "**/x/" * 8 + 'zz"]\n',
                                            "x/" * 30 + "y.py": "y = 1\n"})
    code = ("import sys\nfrom pathlib import Path\nfrom repodoc_lsp.config import load_settings\n"
            "from repodoc_lsp.store.discover import discover\nroot = Path(sys.argv[1])\n"
            "print(len(discover(root, load_settings(root)[0]).files))\n")
    done = subprocess.run([sys.executable, "-c", code, str(root)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "4"


_PIECES = st.sampled_from(["a", "b", "*", "**", "?", "/", "[ab]", "[!a]", "!", "\\*", ".", "-", "x"])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(patterns=st.lists(st.lists(_PIECES, min_size=1, max_size=5).map("".join), min_size=1, max_size=3),
       paths=st.lists(st.lists(st.sampled_from(["a", "b", "ab", "x", "a.b", "*", "-"]), min_size=1, max_size=4)
                      .map("/".join), min_size=1, max_size=4))
def test_re2_matches_as_python_s_re_does(patterns: list[str], paths: list[str]) -> None:
    """The patterns as RE2 matches them (gitignore_spec) against pathspec's own Python-regex
    reading, on short patterns and paths (where backtracking is cheap)."""
    try:
        python = pathspec.GitIgnoreSpec.from_lines(patterns, backend="simple")
    except Exception:  # not a pattern for pathspec either: gitignore_spec keeps the others
        return
    ours = gitignore_spec(patterns)
    assert ours is not None
    for path in paths:
        assert ours.match_file(path) == python.match_file(path), (patterns, path)
