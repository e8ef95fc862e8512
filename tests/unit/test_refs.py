"""refs.git (the files a change touches, from git's diff), refs.resolve (a reference -> resolved or
stale with a "did you mean") and refs.check (which files are docs, their stale references), on a
workspace scanned in this process."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from helpers import make_workspace

from repodoc_lsp.config import Settings
from repodoc_lsp.refs import check
from repodoc_lsp.refs import git as git_module
from repodoc_lsp.refs.extract import LINK, NAME, PATH, Ref
from repodoc_lsp.refs.git import GitError, changed_files
from repodoc_lsp.refs.namespace import binds
from repodoc_lsp.refs.outside import external
from repodoc_lsp.refs.resolve import Resolver
from repodoc_lsp.store.workspace import Workspace

FILES = {
    "shapes/__init__.py": '"""Shapes."""\nfrom shapes.core import Gadget\n',
    "shapes/core.py": ('"""Core: see :class:`shapes.core.Widget`."""\n\n\nclass Gadget:\n    """Drawn."""\n\n'
                       "    def draw(self):\n        pass\n\n\ndef helper():\n"
                       '    """Calls :meth:`Gadget.draw` and :func:`json.dumps`."""\n'),
    "README.md": ("# Shapes\n\nUse `shapes.core.Widget` and `shapes.core.Gadget`; see [the guide](guide/intro.rst),\n"
                  "[usage](#usage), [nothing](#nowhere) and `guide/missing.rst`.\n\n## Usage\n"),
    "guide/intro.rst": "Intro\n=====\n\nThe :class:`shapes.core.Gadget` class; :func:`shapes.core.helpr`.\n",
    "CHANGELOG.md": "Removed `shapes.core.Widget`.\n",
    "docs/notes.md": "Hand-written beside the pages: `shapes.core.Widget`.\n",
    "docs/page.md": '## class `Gadget`\n\n<a id="class-Gadget"></a>\n',
}


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    root = make_workspace(tmp_path_factory.mktemp("refs") / "ws", FILES)
    workspace = Workspace(root, Settings(), use_cache=False)
    workspace.scan(jobs=1)
    return workspace


def _where(report: check.Report) -> list[tuple[str, int, int, str, str]]:
    return [(s.rel, s.line, s.col, s.text, s.suggestion) for s in report.stale]


def test_every_stale_reference_of_docs_and_docstrings_once(ws: Workspace) -> None:
    report = check.check_workspace(ws)
    assert _where(report) == [
        ("README.md", 3, 5, "shapes.core.Widget", ""),  # Gadget is not close enough to be suggested
        ("README.md", 4, 27, "#nowhere", ""),
        ("README.md", 4, 42, "guide/missing.rst", "guide/intro.rst"),
        ("docs/notes.md", 1, 32, "shapes.core.Widget", ""),  # docs in the output folder too
        ("guide/intro.rst", 4, 46, "shapes.core.helpr", "shapes.core.helper"),
        ("shapes/core.py", 1, 21, "shapes.core.Widget", ""),  # located in the source
    ]
    widget = report.stale[0]
    assert widget.describe() == "`shapes.core.Widget`: `Widget` is not defined in shapes.core (shapes/core.py)"
    assert widget.about == "shapes/core.py"
    assert (report.files, report.references) == (6, 13)  # CHANGELOG.md: history, never checked


def test_only_the_files_a_change_touches(ws: Workspace) -> None:
    assert {s.rel for s in check.check_workspace(ws, only={"guide/intro.rst"}).stale} == {"guide/intro.rst"}
    about = check.check_workspace(ws, only={"shapes/core.py"}).stale  # references into a changed module
    assert {s.rel for s in about} == {"README.md", "docs/notes.md", "shapes/core.py", "guide/intro.rst"}


def test_docs_and_ignored_files() -> None:
    assert check.is_doc("README.md") and check.is_doc("guide/x.RST") and check.is_doc("notes.txt")
    assert not check.is_doc("CHANGES.rst") and not check.is_doc("changelog.d/1.md") and not check.is_doc("a.py")
    skip = check.ignored(Settings(refs_ignore=("vendor/**", "*.txt")))
    assert skip("vendor/x/README.md") and skip("notes.txt") and not skip("README.md")
    assert not check.ignored(Settings())("anything.md")


def test_resolver_verdicts(ws: Workspace) -> None:
    resolver = Resolver(ws, check.build_index(ws))

    def verdict(kind: str, text: str, place: str = "README.md", **extra: object) -> str | None:
        found = resolver.check(Ref(kind, text, 1, 0, **extra), place)  # type: ignore[arg-type]
        return None if found is None else found.message

    assert verdict(NAME, "shapes.core.Gadget.draw") is None
    assert verdict(NAME, "os.path.join") is None and verdict(NAME, "len") is None  # not the workspace's
    assert verdict(NAME, "self.widget.draw") is None  # starts with something unknown
    assert verdict(NAME, "shapes.core.Gadget.paint") == \
        "`shapes.core.Gadget.paint`: `paint` is not a member of Gadget (shapes/core.py)"
    assert verdict(NAME, "shapes.nothing") == \
        "`shapes.nothing`: `nothing` is not defined in shapes (shapes/__init__.py)"
    assert verdict(NAME, "Gizmo", explicit=True, role="class") == "`Gizmo` is not defined in the workspace"
    assert verdict(NAME, "Gizmo") is None  # a lone code-looking word without a role
    assert verdict(LINK, "guide/intro.rst") is None and verdict(LINK, "../elsewhere.md") is None
    assert verdict(LINK, "#usage") is None and verdict(LINK, "#Usage") is None
    assert verdict(LINK, "guide/gone.rst") == "link `guide/gone.rst`: guide/gone.rst does not exist"
    assert verdict(PATH, "guide/intro.rst") is None and verdict(PATH, "src/other/tree.py") is None
    # an HTML id keeps its case (ids are case-sensitive; GitHub's heading slugs are lower case)
    gone = resolver.check(Ref(LINK, "docs/page.md#class-Widget", 1, 0), "README.md")
    assert gone is not None and gone.suggestion == "docs/page.md#class-Gadget"
    assert verdict(PATH, "shapes/gone.py") == "`shapes/gone.py` does not exist in the workspace"


def test_binds_judges_each_occurrence_by_its_line() -> None:
    assert binds("import numpy as np\n", "np") and binds("for item, other in x:\n", "other")
    assert binds("    self.cache = {}\n", "cache") and binds("size: int = 1\n", "size")
    assert binds("config = {'verbose': 1}\n", "verbose") and binds("def run(self):\n", "run")
    assert not binds("x == size\n", "size") and not binds("print(sizes)\n", "size")
    assert not binds("obj.size = 1\n", "size")  # another object's attribute
    assert external("json") and external("os") and not external("shapes_no_such_module_xyz")


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def test_changed_files_from_git(tmp_path: Path) -> None:
    repo = make_workspace(tmp_path / "repo", {"ws/a.py": "x = 1\n", "ws/b.md": "# B\n", "other/c.py": "y = 2\n"})
    _git(repo, "init", "-q")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "add", ".")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    (repo / "ws/a.py").write_text("x = 2\n")
    (repo / "ws/b.md").unlink()
    (repo / "other/c.py").write_text("y = 3\n")  # outside the root asked about
    root = repo / "ws"
    assert changed_files(root, since="HEAD") == {"a.py", "b.md"}  # deleted files too
    assert changed_files(root, staged=True) == set()
    _git(repo, "add", "ws/a.py")
    assert changed_files(root, staged=True) == {"a.py"}
    with pytest.raises(GitError, match="not a revision"):
        changed_files(root, since="--output=/tmp/x")
    with pytest.raises(GitError, match=r"unknown revision|bad revision|ambiguous argument"):
        changed_files(root, since="no-such-ref")
    (tmp_path / "plain").mkdir()
    with pytest.raises(GitError, match="is not in a git repository"):
        changed_files(tmp_path / "plain")


def test_changed_files_are_what_git_diff_lists(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Working tree against a revision, hashed here (git reads no working-tree file): the same
    names as `git diff --name-only REF` for every kind of change a content comparison sees."""
    files = {f"ws/{name}": f"{name}\n" for name in ("same.py", "touched.py", "edited.md", "gone.md", "reverted.py",
                                                   "staged.py", "unstaged-delete.py", "sub/deep.md")}
    repo = make_workspace(tmp_path / "repo", {**files, "elsewhere.py": "x\n"})
    (repo / "ws/link").symlink_to("same.py")
    git = ["-c", "user.name=t", "-c", "user.email=t@t"]
    import os

    for path in repo.rglob("*.*"):
        os.utime(path, (1_000_000_000, 1_000_000_000), follow_symlinks=False)  # not racy: the stat decides
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, *git, "commit", "-qm", "one")
    ws = repo / "ws"
    os.utime(ws / "touched.py", (1_100_000_000, 1_100_000_000))  # stat-dirty, same bytes
    (ws / "edited.md").write_text("edited\n")
    (ws / "gone.md").unlink()
    (ws / "reverted.py").write_text("staged, then put back\n")
    _git(repo, "add", "ws/reverted.py")
    (ws / "reverted.py").write_text("reverted.py\n")
    (ws / "staged.py").write_text("staged\n")
    (ws / "new.py").write_text("new\n")
    _git(repo, "add", "ws/staged.py", "ws/new.py")
    _git(repo, "rm", "-q", "--cached", "ws/unstaged-delete.py")  # still on disk: deleted for git
    (ws / "untracked.md").write_text("untracked\n")
    (ws / "link").unlink()
    (ws / "link").symlink_to("touched.py")
    (ws / "sub" / "deep.md").write_text("deep, edited\n")
    (repo / "elsewhere.py").write_text("y\n")
    hashed: list[str] = []
    oid = git_module._Hasher.oid
    monkeypatch.setattr(git_module._Hasher, "oid",
                        lambda self, name, mode: hashed.append(name) or oid(self, name, mode))
    found = changed_files(ws, since="HEAD")
    assert "ws/touched.py" in hashed and "ws/same.py" not in hashed  # its stat is the index's: not read
    listed = subprocess.run(["git", "-C", str(ws), "diff", "--name-only", "--relative", "HEAD"], check=True,
                            capture_output=True, text=True).stdout.split()  # (it refreshes the index)
    expected = {"edited.md", "gone.md", "staged.py", "new.py", "unstaged-delete.py", "link", "sub/deep.md"}
    assert set(listed) == expected == found
    assert changed_files(ws, staged=True) == {"reverted.py", "staged.py", "new.py", "unstaged-delete.py"}
    # a folder of the index made a link out of the root: nothing is read through it
    outside = make_workspace(tmp_path / "outside", {"deep.md": "sub/deep.md\n"})
    shutil.rmtree(ws / "sub")
    (ws / "sub").symlink_to(outside)
    assert "sub/deep.md" in changed_files(ws, since="HEAD")  # deleted, as git sees it


def test_inside_follows_links_only_within_the_root(tmp_path: Path) -> None:
    from repodoc_lsp.refs.paths import inside

    root = make_workspace(tmp_path / "ws", {"a/b.md": "", "c.md": ""}).resolve()
    make_workspace(tmp_path, {"secret.md": ""})
    (root / "up").symlink_to("..")
    (root / "abs-out").symlink_to(tmp_path)
    (root / "abs-in").symlink_to(root / "a")
    (root / "rel-in").symlink_to("a/../a")
    (root / "loop").symlink_to("loop")
    assert inside(root, "a/b.md") == root / "a/b.md"
    assert inside(root, "a/missing/x.md") == root / "a/missing/x.md"
    assert inside(root, "abs-in/b.md") == root / "a/b.md" == inside(root, "rel-in/b.md")
    assert inside(root, "a/../c.md") == root / "c.md" and inside(root, ".") == root
    for out in ("up/secret.md", "up", "abs-out/secret.md", "../secret.md", "a/../../secret.md", "loop/x",
                "missing/../../secret.md"):
        assert inside(root, out) is None, out
