"""`repodoc check --since/--staged` runs nothing a checkout's `.git/config`, `.gitattributes` or
hooks name (README "Trust"): each mechanism planted as a program that touches a sentinel, the
change still found right."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from helpers import cli_here, make_workspace, run_cli

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

FILES = {
    "pkg/__init__.py": "",
    "pkg/core.py": "class Gadget:\n    pass\n",
    "README.md": "# Pkg\n\nUse `pkg.core.Gadget`.\n",
    "guide.md": "# Guide\n\nSee `pkg.core.Gadget`.\n",
}


def _git(root: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, env=env, timeout=60)


def _repo(tmp_path: Path) -> Path:
    """A repository with two commits (tag `one`, then HEAD): the README names a class that is
    gone since HEAD's working tree (changed, not committed) and staged; guide.md is unchanged."""
    root = make_workspace(tmp_path / "repo", FILES)
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "one")
    _git(root, "tag", "one")
    (root / "README.md").write_text("# Pkg\n\nUse `pkg.core.Widget`.\n")
    _git(root, "add", "README.md")
    return root


def _program(root: Path, sentinel: Path, name: str) -> str:
    """A program in the checkout that marks that it ran (and fails, so git goes on)."""
    path = root / "tools" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(f"#!/bin/sh\necho {name} >> '{sentinel}'\nexit 1\n")
    path.chmod(0o755)
    return str(path)


def _plant(root: Path, sentinel: Path, mechanism: str) -> None:
    """What a hostile checkout ships, planted after the test's own git commands ran."""
    def config(*pairs: str) -> None:
        for pair in pairs:
            key, value = pair.split("=", 1)
            _git(root, "config", key, value)

    run = _program(root, sentinel, mechanism)
    attributes = root / ".gitattributes"
    if mechanism == "fsmonitor":
        config(f"core.fsmonitor={run}")
    elif mechanism == "hooks":  # git writes the index after a refresh: post-index-change
        for where in (root / ".git" / "hooks", root / "hooks"):
            where.mkdir(exist_ok=True)
            for hook in ("post-index-change", "pre-auto-gc", "reference-transaction", "post-checkout"):
                shutil.copy(run, where / hook)
        config(f"core.hooksPath={root / 'hooks'}")
    elif mechanism == "clean-filter":
        config(f"filter.x.clean={run}", f"filter.x.smudge={run}")
        attributes.write_text("* filter=x\n")
    elif mechanism == "process-filter":
        config(f"filter.x.process={run}", "filter.x.required=true")
        (root / ".git" / "info").mkdir(exist_ok=True)
        (root / ".git" / "info" / "attributes").write_text("* filter=x\n")
    elif mechanism == "diff-driver":
        config(f"diff.x.command={run}", f"diff.external={run}")
        attributes.write_text("* diff=x\n")
    elif mechanism == "textconv":
        config(f"diff.x.textconv={run}", "diff.x.cachetextconv=false")
        attributes.write_text("* diff=x\n")
    elif mechanism == "pager":
        config(f"core.pager={run}", f"pager.diff={run}", f"pager.diff-index={run}", f"pager.ls-files={run}")
    # every file stat-dirty (same bytes, another time): git would compare contents
    for rel in [*FILES, ".gitattributes"]:
        if (root / rel).exists():
            os.utime(root / rel, (1_000_000_000, 1_000_000_000))


MECHANISMS = ["fsmonitor", "hooks", "clean-filter", "process-filter", "diff-driver", "textconv", "pager"]


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_no_program_of_the_checkout_runs(tmp_path: Path, cache_env: dict[str, str], mechanism: str) -> None:
    root = _repo(tmp_path)
    sentinel = tmp_path / "ran"
    _plant(root, sentinel, mechanism)
    for how in (["--since", "one"], ["--staged"]):
        proc = cli_here("check", ".", *how, "--no-pages", env=cache_env, cwd=root)
        assert not sentinel.exists(), (how, sentinel.read_text())
        assert proc.returncode == 1, (how, proc.stdout, proc.stderr)
        assert "README.md:3:6: `pkg.core.Widget`" in proc.stdout and "guide.md" not in proc.stdout, proc.stdout
        assert "1 file changed" in proc.stdout, proc.stdout


def test_a_partial_clone_fetches_nothing(tmp_path: Path, cache_env: dict[str, str]) -> None:
    """A partial clone fetches a missing object from its promisor remote: through the checkout's
    `core.sshCommand`. The fetch is refused (an error), the command never runs."""
    root = _repo(tmp_path)
    sentinel = tmp_path / "ran"
    tree = subprocess.run(["git", "-C", str(root), "rev-parse", "one:pkg"], capture_output=True, text=True,
                          check=True).stdout.strip()
    (root / ".git" / "objects" / tree[:2] / tree[2:]).unlink()  # loose: just committed
    run = _program(root, sentinel, "ssh")
    for pair in ("core.repositoryformatversion=1", "extensions.partialClone=origin",
                 "remote.origin.url=ssh://example.invalid/repo", "remote.origin.promisor=true",
                 f"core.sshCommand={run}", "protocol.ssh.allow=always", "protocol.allow=always"):
        _git(root, "config", *pair.split("=", 1))
    proc = cli_here("check", ".", "--since", "one", "--no-pages", env=cache_env, cwd=root)
    assert not sentinel.exists()
    assert proc.returncode == 2 and "repodoc: error:" in proc.stderr, proc.stderr


def test_every_mechanism_at_once_through_the_program(tmp_path: Path, cache_env: dict[str, str]) -> None:
    """The CLI as a process, with all of them planted together."""
    root = _repo(tmp_path)
    sentinel = tmp_path / "ran"
    for mechanism in MECHANISMS:
        _plant(root, sentinel, mechanism)
    (root / ".gitattributes").write_text("* filter=x diff=x\n")
    os.utime(root / ".gitattributes", (1_000_000_000, 1_000_000_000))
    for how in (["--since", "one"], ["--staged"]):
        proc = run_cli("check", ".", *how, "--no-pages", env=cache_env, cwd=root)
        assert not sentinel.exists(), (how, sentinel.read_text())
        assert proc.returncode == 1 and "README.md:3:6:" in proc.stdout and "guide.md" not in proc.stdout, proc.stdout
