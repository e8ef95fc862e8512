"""An ignore file is never dropped: `.gitignore` files of any length are matched as git matches them
(the last matching line decides, `!`, folder-only lines, anchoring, `**`, classes, escapes, deeper
files over those above, `.git/info/exclude`), checked against git itself on the same tree."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest
from helpers import make_workspace, run_cli

from repodoc_lsp.config import Settings
from repodoc_lsp.store.discover import discover
from repodoc_lsp.store.ignore import IgnoreFile

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

_NAMES = ["src", "build", "dist", "lib", "test", "config", "data", "app", "core", "a", "b", "cache", "tmp",
          "out", "pkg", "vendor", "Build", "logs"]
_EXTS = [".py", ".txt", ".log", ".md", ".json", ".cfg", ".tmp", ".bak", ".ini", ".env", ".yml", ".c"]


def _line(r: random.Random, specific: float) -> str:
    """A line as long ignore files have them: mostly one named file or folder, some globs."""
    e, m = r.choice(_EXTS), r.choice(_NAMES)
    n = f"f{r.randrange(3000)}" if r.random() < specific else r.choice(_NAMES)
    forms = [f"{n}/", f"/{n}", f"{n}/*{e}", f"**/{n}", f"{n}/**/*{e}", f"{n}{e}", f"{n}*", f"/{n}/{m}/", f"{n}/**",
             f"{n}[0-9]{e}", f"**/{n}/*{e}", f"{n}/{m}{e}", f"{n}-[!a]*", f"{n}  ", f"/**/{n}{e}", f"?{n[1:]}{e}",
             f"[{n[0].upper()}{n[0]}]{n[1:]}/", f"*{n}*{e}"]
    line = r.choice(forms if n.startswith("f") else [*forms, f"*{e}"])
    if r.random() < 0.25:
        line = "!" + line
    return "# " + line if r.random() < 0.03 else line


def _tree(r: random.Random, count: int) -> list[str]:
    paths: set[str] = set()
    while len(paths) < count:
        folders = [r.choice(_NAMES) for _ in range(r.randrange(4))]
        leaf = f"f{r.randrange(3000)}" if r.random() < 0.5 else r.choice([*_NAMES, "x", "#b", "c "])
        paths.add("/".join([*folders, leaf + r.choice(_EXTS)]))
    folders_of = {"/".join(p.split("/")[:k]) for p in paths for k in range(1, p.count("/") + 1)}
    return sorted(p for p in paths if p not in folders_of)


def _git_inputs(root: Path, home: Path) -> set[str]:
    """The files git neither tracks nor ignores: what `.gitignore` files leave in."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_CONFIG_GLOBAL": os.devnull}
    if not (root / ".git" / "HEAD").exists():
        subprocess.run(["git", "init", "-q"], cwd=root, env=env, check=True)
    out = subprocess.run(["git", "ls-files", "--others", "--exclude-standard", "-z"], cwd=root, env=env,
                         capture_output=True, check=True).stdout
    return {os.fsdecode(p) for p in out.split(b"\0") if p}


@needs_git
def test_a_ten_thousand_line_ignore_file_leaves_out_what_git_leaves_out(tmp_path: Path) -> None:
    """Past about 2,000 lines RE2 compiled no single set of the patterns, and the file was dropped whole."""
    r = random.Random(20261129)
    root = tmp_path / "ws"
    files = dict.fromkeys(_tree(r, 400), "x\n")
    files[".gitignore"] = "\n".join(_line(r, 0.995) for _ in range(10_000)) + "\n"
    for sub in ("src", "a/b", "lib"):  # deeper files: their lines decide first
        files[f"{sub}/.gitignore"] = "\n".join(_line(r, 0.8) for _ in range(40)) + "\n"
    make_workspace(root, files)
    expected = _git_inputs(root, tmp_path)
    assert 30 < len(expected) < 400  # the file does ignore, and leaves some in
    assert set(discover(root, Settings()).files) == expected


TRICKY = [
    "*.log", "!keep.log", "build/", "!build/", "/top.txt", "deep/**/x.py", "**/gen", "only/**", "a?c.py",
    "[Cc]ache/", "[!a-m]z.py", "[]x]y.py", "[a-]q.py", "[[:digit:]][[:upper:]].py", "[[:nope:]]n.py",
    "\\#hash.py", "\\!bang.py", "trail.py   ", "esc\\ .py", "sp\\ ace.py", "x*y/**/z", "foo**/bar",
    "mid/*/end.py", "dironly/", "negdir/", "!negdir/inner.py", "un[closed.py", "back\\", "/anch/file.py",
    "**", "!**/", "!*.py", "*.tmp", "!sub/**", "sub/drop.py",
]


@needs_git
def test_tricky_lines_as_git_reads_them(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    paths = ["keep.log", "x.log", "build/b.py", "top.txt", "s/top.txt", "deep/x.py", "deep/a/b/x.py", "q/gen/g.py",
             "only/o.py", "only/p/q.py", "abc.py", "a/c.py", "Cache/c.py", "cache/c.py", "zz.py", "az.py", "]y.py",
             "xy.py", "-q.py", "aq.py", "1A.py", "1a.py", "nn.py", "#hash.py", "!bang.py", "trail.py", "esc .py",
             "sp ace.py", "x1y/z", "xy/m/n/z", "foo/bar", "foox/bar", "foo/a/bar", "mid/a/end.py", "mid/a/b/end.py",
             "dironly/f.py", "d/dironly", "negdir/inner.py", "un[closed.py", "back", "anch/file.py",
             "x/anch/file.py", "t.tmp", "sub/keep.py", "sub/drop.py", "sub/z.tmp"]
    files = dict.fromkeys(paths, "x\n")
    files[".gitignore"] = "\ufeff" + "\r\n".join(TRICKY[:20]) + "\n" + "\n".join(TRICKY[20:]) + "\n"
    files["sub/.gitignore"] = "!drop.py\n*.tmp\n"
    make_workspace(root, files)
    (root / ".git" / "info").mkdir(parents=True)
    (root / ".git" / "info" / "exclude").write_text("xy.py\n!x.log\n")
    expected = _git_inputs(root, tmp_path)
    assert set(discover(root, Settings()).files) == expected
    # and each line alone, on every path as a file and as a folder, against `git check-ignore`
    rules = [IgnoreFile(line.encode() + b"\n") for line in TRICKY]
    home = str(tmp_path)
    for line, rule in zip(TRICKY, rules, strict=True):
        (root / ".gitignore").write_text(line + "\n")
        probes = [p for p in paths if "/" not in p] + ["only/o.py", "deep/a/b/x.py", "foo/a/bar", "x1y/z"]
        done = subprocess.run(["git", "check-ignore", "--no-index", "--stdin", "-z", "-v", "-n"], cwd=root,
                              input=b"\0".join(p.encode() for p in probes) + b"\0", capture_output=True,
                              env={"PATH": os.environ.get("PATH", ""), "HOME": home, "GIT_CONFIG_NOSYSTEM": "1",
                                   "GIT_CONFIG_GLOBAL": os.devnull}).stdout.split(b"\0")
        for k, probe in enumerate(probes):
            source, pattern = done[4 * k], done[4 * k + 2].decode()
            if source.endswith(b"exclude"):
                continue  # .git/info/exclude's line, not this one
            git = None if not source else not pattern.startswith("!")
            assert rule.decide(probe, False) == git, (line, probe)


def test_what_a_long_gitignore_ignores_is_on_no_page(tmp_path: Path) -> None:
    """The real CLI on a checkout whose `.gitignore` has 10,000 lines: before, the file was dropped
    (one "ignore file not used" skip) and `.env`, the credentials and the local settings were pages."""
    r = random.Random(7)
    lines = [_line(r, 1.0) for _ in range(10_000)]
    lines[4_000:4_000] = [".env", "config/credentials.json", "local_settings.py", "!config/public.json"]
    root = make_workspace(tmp_path / "ws", {
        ".gitignore": "\n".join(lines) + "\n", "app.py": '"""The app."""\nimport local_settings\n',
        ".env": "API_TOKEN=tok-env-0001\n", "config/credentials.json": '{"key": "tok-cred-0002"}\n',
        "local_settings.py": 'PASSWORD = "tok-local-0003"\n', "config/public.json": '{"name": "pub-0004"}\n'})
    done = run_cli("generate", str(root), "--json", env={**os.environ, "REPODOC_CACHE_DIR": str(tmp_path / "c")})
    assert done.returncode == 0, done.stderr
    assert "ignore file" not in done.stdout + done.stderr
    pages = {p.relative_to(root / "docs").as_posix(): p.read_text() for p in (root / "docs").rglob("*.md")}
    text = "\n".join(pages.values())
    assert "pub-0004" in text or any("public.json" in name for name in pages)
    for secret in ("tok-env-0001", "tok-cred-0002", "tok-local-0003", "credentials.json", "local_settings.py"):
        assert secret not in text, secret
