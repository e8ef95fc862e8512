"""`repodoc check`: stale references in a README, a reST page and a docstring after a rename, for real."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from helpers import cli_here, make_workspace, run_cli

BEFORE = {
    "shapes/__init__.py": '"""Shapes."""\nfrom shapes.core import Widget\n',
    "shapes/core.py": (
        '"""Core shapes: see :class:`shapes.core.Widget`."""\n\n\n'
        "class Widget:\n"
        '    """Something to draw."""\n\n'
        "    def draw(self):\n"
        '        """Draw it."""\n\n\n'
        "def helper():\n"
        '    """Calls :meth:`Widget.draw` and :func:`json.dumps`, like `os.path.join`.\n\n'
        "    Example::\n\n"
        "        Nothing(here).is_checked\n"
        '    """\n'
    ),
    "README.md": (
        "# Shapes\n\n"
        "Draw with `shapes.core.Widget` (or `Widget.draw()`); see the [guide](guide/intro.rst)\n"
        "and [usage](#usage). Run `pip install shapes`, then `self.widget.draw()`.\n\n"
        "```python\nfrom shapes.core import Widget\nNowhere(here).is_checked\n```\n\n"
        "## Usage\n\nThe code is in `shapes/core.py`.\n"
    ),
    "guide/intro.rst": (
        "Intro\n=====\n\n"
        ".. currentmodule:: shapes.core\n\n"
        "The :class:`Widget` class, and :func:`~shapes.core.helper` in :mod:`shapes.core`.\n\n"
        ".. code-block:: python\n\n"
        "   shapes.core.Missing()\n"
    ),
}


def _rename(root: Path) -> None:
    """Widget becomes Gadget in the code only: the docs still name Widget."""
    for rel in ("shapes/__init__.py", "shapes/core.py"):
        path = root / rel
        text = path.read_text()
        text = text.replace("class Widget:", "class Gadget:").replace("import Widget", "import Gadget")
        text = text.replace(":class:`shapes.core.Widget`", ":class:`shapes.core.Gadget`")
        path.write_text(text)


@pytest.fixture
def renamed(tmp_path: Path) -> Path:
    root = make_workspace(tmp_path / "ws", BEFORE)
    _rename(root)
    return root


def test_before_the_rename_nothing_is_stale(tmp_path: Path, cache_env: dict[str, str]) -> None:
    root = make_workspace(tmp_path / "ws", BEFORE)
    proc = cli_here("check", str(root), "--no-pages", env=cache_env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 stale" in proc.stdout


def test_rename_is_reported_in_readme_rest_and_docstring(renamed: Path, cache_env: dict[str, str]) -> None:
    proc = run_cli("check", ".", "--no-pages", env=cache_env, cwd=renamed)
    assert proc.returncode == 1, proc.stderr
    lines = [line for line in proc.stdout.splitlines() if not line.startswith("repodoc:")]
    by_place = {line.split(": ", 1)[0]: line for line in lines}
    # the README: line 3, column of the name in its code span (1-based)
    readme = by_place["README.md:3:12"]
    assert "`shapes.core.Widget`" in readme
    assert "did you mean" not in proc.stdout  # Gadget is not close to Widget: no guess (git would say: --since)
    assert "`Widget.draw`" not in readme  # `Widget.draw()` in a code span: an unknown head is not judged
    rest = by_place["guide/intro.rst:6:13"]
    assert "`Widget`" in rest
    doc = by_place["shapes/core.py:12:21"]
    assert "`Widget.draw`: `Widget` is not defined" in doc
    # the example's import, as Python imports it (the rest of the example is not judged)
    assert "`Widget`: `Widget` is not defined in shapes.core" in by_place["README.md:7:25"]
    # nothing else: links, paths, stdlib names, shell commands, code blocks all resolve or are not references
    assert len(lines) == 4, proc.stdout


def test_stale_links_anchors_and_paths(renamed: Path, cache_env: dict[str, str]) -> None:
    (renamed / "README.md").write_text(
        "# Shapes\n\n[guide](guide/intro.md), [gone](#usages), `shapes/old.py`, [ok](guide/intro.rst)\n\n"
        "## Usage\n")
    (renamed / "shapes/core.py").write_text("class Gadget:\n    pass\n")
    (renamed / "guide/intro.rst").write_text("Intro\n=====\n")
    proc = cli_here("check", str(renamed), "--no-pages", env=cache_env, cwd=renamed)
    out = proc.stdout
    assert proc.returncode == 1
    assert "README.md:3:9: link `guide/intro.md`: guide/intro.md does not exist (did you mean `guide/intro.rst`?)" \
        in out
    assert "README.md:3:33: link `#usages`: no heading `#usages` in README.md (did you mean `#usage`?)" in out
    assert "README.md:3:44: `shapes/old.py` does not exist in the workspace (did you mean `shapes/core.py`?)" in out
    assert "3 stale" in out


def test_github_format(renamed: Path, cache_env: dict[str, str]) -> None:
    proc = cli_here("check", ".", "--no-pages", "--format", "github", env=cache_env, cwd=renamed)
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert len(lines) == 4 and all(line.startswith("::warning file=") for line in lines)
    assert "::warning file=README.md,line=3,col=12::`shapes.core.Widget`: `Widget` is not defined in shapes.core" \
        in proc.stdout
    assert "repodoc:" in proc.stderr  # the summary stays out of the annotations


def test_stale_pages_fail_and_pass_after_generate(renamed: Path, cache_env: dict[str, str]) -> None:
    for rel in ("README.md", "guide/intro.rst"):
        (renamed / rel).write_text(BEFORE[rel].replace("Widget", "Gadget"))
    (renamed / "shapes/core.py").write_text((renamed / "shapes/core.py").read_text().replace("Widget", "Gadget"))
    proc = cli_here("check", str(renamed), env=cache_env)
    assert proc.returncode == 1 and "stale page" in proc.stdout, proc.stdout
    assert cli_here("generate", str(renamed), env=cache_env).returncode == 0
    proc = cli_here("check", str(renamed), env=cache_env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 stale, 0 pages stale" in proc.stdout


def test_bad_root_and_git_errors(tmp_path: Path, renamed: Path, cache_env: dict[str, str]) -> None:
    proc = run_cli("check", str(tmp_path / "missing"), env=cache_env)
    assert proc.returncode == 2 and "not a folder" in proc.stderr
    proc = run_cli("check", str(renamed), "--since", "HEAD", "--no-pages", env=cache_env)
    assert proc.returncode == 2 and "not in a git repository" in proc.stderr
    no_git = {**cache_env, "PATH": str(tmp_path / "empty-bin")}
    proc = run_cli("check", str(renamed), "--staged", "--no-pages", env=no_git)
    assert proc.returncode == 2 and "git is not on the PATH" in proc.stderr
    proc = run_cli("check", str(renamed), "--staged", "--since", "HEAD", env=cache_env)
    assert proc.returncode == 2  # one or the other


def _git(root: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, env=env, timeout=60)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_staged_and_since_check_only_what_a_change_touches(tmp_path: Path, cache_env: dict[str, str]) -> None:
    root = make_workspace(tmp_path / "repo", {**BEFORE, "other.md": "See `shapes.core.Widget`.\n",
                                              "lonely.md": "Old: `shapes.extra.Lost`.\n",
                                              "shapes/extra.py": "def extra():\n    pass\n"})
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "first")
    # nothing staged: nothing to report, whatever is stale elsewhere (lonely.md names shapes/extra.py)
    proc = cli_here("check", ".", "--staged", "--no-pages", env=cache_env, cwd=root)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 files changed" in proc.stdout
    # stage the rename: the docs naming the renamed class are reported, lonely.md is not
    _rename(root)
    _git(root, "add", "shapes")
    proc = cli_here("check", ".", "--staged", "--no-pages", env=cache_env, cwd=root)
    assert proc.returncode == 1
    assert "other.md:1:6: `shapes.core.Widget`" in proc.stdout
    assert "README.md:3:12:" in proc.stdout and "lonely.md" not in proc.stdout
    # fixing the docs (staged too) makes the hook pass
    for rel in ("README.md", "guide/intro.rst", "other.md", "shapes/core.py"):
        (root / rel).write_text((root / rel).read_text().replace("Widget", "Gadget"))
    _git(root, "add", "-A")
    proc = cli_here("check", ".", "--staged", "--no-pages", env=cache_env, cwd=root)
    assert proc.returncode == 0, proc.stdout
    _git(root, "commit", "-q", "-m", "rename")
    # --since the first commit: the same change, committed
    _git(root, "tag", "renamed")
    (root / "other.md").write_text("See `shapes.core.Widget` again.\n")
    proc = cli_here("check", ".", "--since", "renamed", "--no-pages", env=cache_env, cwd=root)
    assert proc.returncode == 1 and "other.md:1:6:" in proc.stdout and "lonely.md" not in proc.stdout
    proc = cli_here("check", ".", "--since", "no-such-ref", "--no-pages", env=cache_env, cwd=root)
    assert proc.returncode == 2 and "repodoc: error:" in proc.stderr


def _hook_entries() -> dict[str, list[str]]:
    """id -> entry argv of .pre-commit-hooks.yaml (read as lines: no YAML library needed for two keys)."""
    import re

    from helpers import REPO

    text = (REPO / ".pre-commit-hooks.yaml").read_text()
    ids = re.findall(r"^- id: (\S+)$", text, re.MULTILINE)
    entries = re.findall(r"^  entry: (.+)$", text, re.MULTILINE)
    return {i: e.split() for i, e in zip(ids, entries, strict=True)}


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_pre_commit_hooks_fail_then_pass_after_the_fix(tmp_path: Path, cache_env: dict[str, str]) -> None:
    hooks = _hook_entries()
    assert set(hooks) == {"repodoc-pages", "repodoc-refs"}
    assert all(argv[0] == "repodoc" for argv in hooks.values())
    root = make_workspace(tmp_path / "repo", BEFORE)
    assert run_cli("generate", str(root), env=cache_env).returncode == 0
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "first")
    _rename(root)
    _git(root, "add", "-A")
    for argv in hooks.values():  # what pre-commit runs, in the repository
        proc = run_cli(*argv[1:], env=cache_env, cwd=root)
        assert proc.returncode == 1, (argv, proc.stdout, proc.stderr)
    for rel in ("README.md", "guide/intro.rst", "shapes/core.py"):
        (root / rel).write_text((root / rel).read_text().replace("Widget", "Gadget"))
    assert run_cli("generate", str(root), env=cache_env).returncode == 0
    _git(root, "add", "-A")
    for argv in hooks.values():
        proc = run_cli(*argv[1:], env=cache_env, cwd=root)
        assert proc.returncode == 0, (argv, proc.stdout, proc.stderr)


def test_refs_ignore_setting_leaves_files_alone(renamed: Path, cache_env: dict[str, str]) -> None:
    (renamed / "pyproject.toml").write_text('[tool.repodoc]\nrefs-ignore = ["guide/", "shapes/*.py"]\n')
    proc = cli_here("check", ".", "--no-pages", env=cache_env, cwd=renamed)
    assert proc.returncode == 1
    assert [line.split(":", 1)[0] for line in proc.stdout.splitlines() if not line.startswith("repodoc:")] \
        == ["README.md", "README.md"]
    (renamed / "pyproject.toml").write_text('[tool.repodoc]\nrefs-ignore = ["**"]\n')
    proc = cli_here("check", ".", "--no-pages", env=cache_env, cwd=renamed)
    assert proc.returncode == 0 and "0 stale" in proc.stdout
    (renamed / "pyproject.toml").write_text('[tool.repodoc]\nrefs-ignore = 3\n')
    proc = cli_here("check", ".", "--no-pages", env=cache_env, cwd=renamed)
    assert proc.returncode == 2 and "refs-ignore" in proc.stderr  # a bad setting names its key


def test_the_checker_looks_at_nothing_through_a_link_out_of_the_workspace(tmp_path: Path,
                                                                         cache_env: dict[str, str]) -> None:
    """A checked-in `up -> ..` (and a link to an absolute path): links and paths through it are
    not judged, so nothing outside is stat'ed or read, and no "did you mean" quotes an outside
    file's headings or ids; the same links inside the workspace still are."""
    outside = make_workspace(tmp_path / "outside", {
        "PRIVATE.md": "# Secret plans of the neighbour\n\n<a id=\"TopSecretId\"></a>\n",
        "notes/todo.md": "# Hidden\n"})
    root = make_workspace(outside / "ws", {
        "pkg/__init__.py": "",
        "INSIDE.md": "# Inside heading\n",
        "README.md": ("# Readme\n\n"
                      "[a](up/PRIVATE.md#secret-plan), [b](up/PRIVATE.md#TopSecret), [c](up/gone.md),\n"
                      "[d](abs/PRIVATE.md#secret), `up/notes/todo.md`, `up/notes/gone.py`, `pkg/../up/x.py`,\n"
                      "[e](INSIDE.md#inside-headin), [f](pkg/gone.md)\n")})
    (root / "up").symlink_to("..")
    (root / "abs").symlink_to(outside)
    proc = run_cli("check", ".", "--no-pages", env=cache_env, cwd=root)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "Secret" not in out and "secret" not in out.replace("#secret", "") and "todo" not in out, out
    assert "up/" not in out and "abs/" not in out, out
    assert "README.md:5:5: link `INSIDE.md#inside-headin`: no heading" in out and "#inside-heading" in out, out
    assert "README.md:5:35: link `pkg/gone.md`: pkg/gone.md does not exist" in out, out
    assert "2 stale" in out, out


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_since_finds_every_mention_of_a_renamed_name_and_suggests_the_new_one(
        tmp_path: Path, cache_env: dict[str, str]) -> None:
    """Issue 34: after renaming `echo_via_pager` in a module the package re-exports, `--since HEAD`
    said 0 stale while the docs named it under `.. currentmodule::` and as a bare name."""
    files = {
        "pager/__init__.py": "from .term import echo_via_pager as echo_via_pager\n",
        "pager/term.py": "def echo_via_pager(text):\n    return text.upper()\n\n\ndef other():\n    pass\n",
        "docs/api.rst": ("API\n===\n\n.. currentmodule:: pager\n\n"
                         "Use :func:`echo_via_pager`; call ``echo_via_pager()`` for long text.\n\n"
                         ".. versionchanged:: 2.0\n    ``echo_via_pager()`` pages.\n"),  # history: not reported
        "README.md": "Page with `pager.echo_via_pager` or `echo_via_pager`.\n",
    }
    root = make_workspace(tmp_path / "repo", files)
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "first")
    for rel in ("pager/__init__.py", "pager/term.py"):
        (root / rel).write_text((root / rel).read_text().replace("echo_via_pager", "page_text"))
    proc = cli_here("check", ".", "--since", "HEAD", "--no-pages", env=cache_env, cwd=root)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = sorted(line for line in proc.stdout.splitlines() if not line.startswith("repodoc:"))
    assert [line.split(": ", 1)[0] for line in lines] == \
        ["README.md:1:12", "README.md:1:38", "docs/api.rst:6:12", "docs/api.rst:6:36"], proc.stdout
    assert all("page_text" in line.split("did you mean", 1)[1] for line in lines), proc.stdout
    assert "README.md:1:38: `echo_via_pager` was renamed to `page_text` since HEAD" in proc.stdout


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_staged_rename_is_found_in_every_form_with_and_without_the_kept_table(tmp_path: Path,
                                                                              cache_env: dict[str, str]) -> None:
    """`--staged` after a rename: each doc naming the old name is reported, as a role, a bare name, under
    `currentmodule` and dotted, with the new name; a doc naming only another function of the module is
    not read. The second run reads the table of names the first one kept: the same answer."""
    root = make_workspace(tmp_path / "repo", {
        "kit/__init__.py": "", "kit/shapes.py": "def draw():\n    pass\n\n\ndef paint():\n    pass\n",
        "kit/other.py": '"""See :func:`kit.shapes.paint`."""\n',
        "docs/role.rst": "Role\n====\n\n:func:`kit.shapes.draw`\n",
        "docs/bare.md": "Call `draw()` first.\n",
        "docs/current.rst": "Current\n=======\n\n.. currentmodule:: kit.shapes\n\nSee :func:`draw`.\n",
        "docs/dotted.md": "Use `kit.shapes.draw` here.\n",
        "docs/paint.rst": "Paint\n=====\n\n:func:`kit.shapes.paint`\n"})
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "first")
    (root / "kit/shapes.py").write_text("def sketch():\n    pass\n\n\ndef paint():\n    pass\n")
    _git(root, "add", "kit/shapes.py")
    outputs = []
    for _ in range(2):
        proc = cli_here("check", ".", "--staged", "--no-pages", env=cache_env, cwd=root)
        assert proc.returncode == 1, proc.stdout + proc.stderr
        outputs.append(sorted(line for line in proc.stdout.splitlines() if not line.startswith("repodoc:")))
        assert "in 5 files checked, 1 file changed" in proc.stdout  # kit/shapes.py and the four docs
    assert list(Path(cache_env["REPODOC_CACHE_DIR"], "checks").glob("*.json.gz"))  # kept by the first run
    assert outputs[0] == outputs[1]
    assert [line.split(":")[0] for line in outputs[0]] == ["docs/bare.md", "docs/current.rst", "docs/dotted.md",
                                                           "docs/role.rst"]
    assert all("sketch" in line for line in outputs[0]), outputs[0]


def test_renames_real_projects_hid_are_reported(tmp_path: Path, cache_env: dict[str, str]) -> None:
    """A class based on `typing.Mapping` has no unknown members, an example's import list over
    several lines names each of its names, a method described by hand that the code never names is
    gone, a cross-reference to a member a class only forwards (`__getattr__`) finds nothing, a package's
    name under another current module is the package's, a name an example takes from a star import is
    not there, a class name linked to a page of the docs is not defined: each stale after a rename,
    reported where written; another class one capital away is no typo's fix."""
    files = {"web/__init__.py": "", "web/auth.py": "class AuthFailed(Exception):\n    pass\n",
             "web/requests.py": "import typing\n\n\nclass Request(typing.Mapping[str, str]):\n"
                                "    def push_promise(self):\n        pass\n\n\n"
                                "class Lazy:\n    def __getattr__(self, name):\n        return 1\n",
             "README.md": "# Web\n\nCall `Request.send_push_promise`.\n\n```python\nfrom web.auth import (\n"
                          "    AuthenticationError,\n)\n```\n",
             "docs/api.rst": ".. currentmodule:: web.requests\n\n.. class:: Request\n\n   .. method:: pushed()\n\n"
                             "See :meth:`Lazy.close_smartly`.\n",
             "web/caches.py": "class LRUCache:\n    pass\n", "docs/caches.md": "Use `web.caches.MRUCache`.\n\n"
                                                                          "See [`LFUCache`](api.rst), `Plain`.\n",
             "web/hooks.py": 'MARK = str("web")\n', "docs/hooks.rst": ".. module:: web.hooks\n\n:class:`web.Gone`\n",
             "docs/retry.rst": ".. testsetup::\n\n    from web.auth import *\n\n.. testcode::\n\n    raise TryAgain\n"}
    proc = run_cli("check", ".", "--no-pages", env=cache_env, cwd=make_workspace(tmp_path / "ws", files))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = [line for line in proc.stdout.splitlines() if not line.startswith("repodoc:")]
    assert [line.split(": ", 1)[0] for line in lines] == [
        "README.md:3:7", "README.md:7:5", "docs/api.rst:5:16", "docs/api.rst:7:12", "docs/caches.md:1:6",
        "docs/caches.md:3:7", "docs/hooks.rst:3:9", "docs/retry.rst:7:11"], proc.stdout
    assert "`send_push_promise` is not a member of Request" in lines[0]
    assert "`AuthenticationError` is not defined in web.auth" in lines[1]
    assert "`pushed` is not a member of Request" in lines[2]  # described by hand, named nowhere in the code
    assert "`close_smartly` is not a member of Lazy" in lines[3]  # not documented on it: `__getattr__` aside
    assert lines[4].endswith("`MRUCache` is not defined in web.caches (web/caches.py)")  # LRUCache: no typo
    assert "`LFUCache` is not defined in the workspace" in lines[5]  # linked to the docs: a cross-reference
    assert "`web.Gone`: `Gone` is not defined in web" in lines[6]  # the package's, not web.hooks.web.Gone
    assert "`TryAgain` is not defined in web.auth" in lines[7]  # what only the star import can give


def test_a_check_of_no_markdown_loads_no_markdown_parser_nor_pattern_matcher(tmp_path: Path,
                                                                             cache_env: dict[str, str]) -> None:
    """`repodoc check` of a project without a Markdown doc nor a pattern setting imports neither
    markdown-it-py nor pathspec (they load when first needed: a tenth of a check after an edit); in a process
    of its own, as the command's."""
    import sys

    root = make_workspace(tmp_path / "ws", {"kit/__init__.py": "", "kit/shapes.py": "def draw():\n    pass\n",
                                            "docs/api.rst": "API\n===\n\n:func:`kit.shapes.ghost`\n"})
    probe = ("import sys\nfrom repodoc_lsp.cli import main\n"
             f"code = main(['check', {str(root)!r}, '--no-pages'])\n"
             "print(code, sorted(m for m in ('markdown_it', 'pathspec') if m in sys.modules))\n")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=cache_env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "docs/api.rst:4:" in proc.stdout
    assert proc.stdout.splitlines()[-1] == "1 []"
