"""Helpers of the core tests: workspaces built in a temporary folder, the real CLI, link checks."""

from __future__ import annotations

import ast
import asyncio
import gzip
import json
import re
import subprocess
import sys
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from repodoc_lsp.output.manifest import MANIFEST

REPO = Path(__file__).resolve().parent.parent


def recorded(monkeypatch: Any, owner: Any, name: str, key: Callable[[Any], Any] = lambda value: value) -> list[Any]:
    """Every first argument `owner.name` is called with from now on (it still runs), as `key` of it (a method of
    a class: its instance, `key=lambda t: t.name` its name)."""
    given: list[Any] = []
    real = getattr(owner, name)

    def spy(value: Any, *args: Any, **kwargs: Any) -> Any:
        given.append(key(value))
        return real(value, *args, **kwargs)

    monkeypatch.setattr(owner, name, spy)
    return given


def count_cleandoc(monkeypatch: Any) -> list[str]:
    """Every text `inspect.cleandoc` is given from now on (it still cleans them)."""
    import inspect

    return recorded(monkeypatch, inspect, "cleandoc")


def read_manifest(out: Path) -> Any:
    """The manifest of the docs tree `out`: gzip-compressed JSON, read with the standard library."""
    return json.loads(gzip.decompress((out / MANIFEST).read_bytes()))


def write_manifest(out: Path, table: object) -> None:
    """Replace the manifest of `out` by `table`, compressed as repodoc writes it."""
    (out / MANIFEST).write_bytes(gzip.compress(json.dumps(table).encode(), mtime=0))


def read_saved(path: Path) -> Any:
    """The saved sketches file (`store/sketches.py`) as one JSON value: its index with each text in place of its
    place (a link's deps decoded), for a test to change and write back (`write_saved`)."""
    from repodoc_lsp.store import kept

    index, body = kept.read_texts(path, 1 << 30)

    def text(place: Any) -> str:
        return bytes(kept.at(body, place)).decode()
    for entry in index["sketches"].values():
        if entry[1] is not None:
            entry[1] = text(entry[1])
        if entry[2] is not None:
            entry[2][0][0], entry[2][3] = text(entry[2][0][0]), json.loads(text(entry[2][3]))
    for part in (*index["users"].values(), *index["imports"].values(), index["deps"]["table"]):
        part[0] = text(part[0])
    return index


def write_saved(path: Path, saved: Any) -> None:
    """`saved` (`read_saved`'s form, perhaps changed) written as the saved sketches file."""
    from repodoc_lsp.store import kept

    copy = json.loads(json.dumps(saved))

    def text(value: Any) -> Any:
        return kept.Text(value.encode()) if isinstance(value, str) else value
    for entry in copy.get("sketches", {}).values():
        if isinstance(entry, list) and len(entry) == 3:
            entry[1] = text(entry[1])
            link = entry[2]
            if isinstance(link, list) and len(link) == 4:
                if isinstance(link[0], list) and link[0]:
                    link[0][0] = text(link[0][0])
                link[3] = kept.Text(json.dumps(link[3]).encode()) if isinstance(link[3], list) else link[3]
    for name in ("users", "imports", "deps"):
        for part in (copy[name].values() if isinstance(copy.get(name), dict) else ()):
            if isinstance(part, list) and part:
                part[0] = text(part[0])
    head = {key: value for key, value in copy.items() if not isinstance(value, dict)}
    kept.texts_aside(path, head, {key: value for key, value in copy.items() if isinstance(value, dict)},
                     level=0).keep()


def make_workspace(root: Path, files: Mapping[str, str | bytes]) -> Path:
    """Write `files` (relative path -> text or bytes) under `root`; returns root."""
    root.mkdir(parents=True, exist_ok=True)
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root


def run_cli(*args: str, env: Mapping[str, str] | None = None, cwd: Path | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run `python -m repodoc_lsp ARGS` for real."""
    return subprocess.run([sys.executable, "-m", "repodoc_lsp", *args], capture_output=True, text=True,
                          env=dict(env) if env is not None else None, cwd=cwd, timeout=timeout)


def cli_here(*args: str, env: Mapping[str, str] | None = None, cwd: Path | None = None,
             timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """`repodoc ARGS` through the CLI's entry point (`cli.main`) in this process, with `env`'s
    REPODOC_* variables and `cwd` for the call: what `run_cli` returns, without starting Python
    and importing everything again (a second or more per run on 2 loaded cores). For the tests of
    what a run does; the CLI as a process (exit codes, streams, signals, `python -m`) keeps its
    own end-to-end tests with `run_cli`."""
    import contextlib
    import io
    import os
    import signal

    from repodoc_lsp import cli

    del timeout  # a run in this process is bounded by the test's own timeout
    saved_env = {k: v for k, v in os.environ.items() if k.startswith("REPODOC_")}
    wanted = {k: v for k, v in (env or {}).items() if k.startswith("REPODOC_")} if env is not None else saved_env
    saved_cwd, saved_sigint = os.getcwd(), signal.getsignal(signal.SIGINT)
    out, err = io.StringIO(), io.StringIO()
    try:
        for key in saved_env:
            del os.environ[key]
        os.environ.update(wanted)
        if cwd is not None:
            os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli.main(list(args))
    finally:
        os.chdir(saved_cwd)
        signal.signal(signal.SIGINT, saved_sigint)
        for key in [k for k in os.environ if k.startswith("REPODOC_")]:
            del os.environ[key]
        os.environ.update(saved_env)
    return subprocess.CompletedProcess(["repodoc", *args], code, out.getvalue(), err.getvalue())


def generate_json(root: Path, env: Mapping[str, str], *extra: str) -> dict:
    proc = cli_here("generate", str(root), "--json", *extra, env=env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


_LINK = re.compile(r"(?<!\!)\[(?:[^\[\]\\]|\\.)*\]\(([^)\s]+)\)")
_ANCHOR = re.compile(r'<a id="([^"]+)"></a>')
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")


def strip_fences(text: str) -> str:
    """The page without the content of its fenced code blocks; AssertionError if one is left open."""
    out: list[str] = []
    fence: str | None = None
    for line in text.split("\n"):
        m = _FENCE.match(line)
        if fence is None:
            if m and (m.group(1)[0] == "~" or "`" not in m.group(2)):  # a backtick fence's info has none
                fence = m.group(1)
                continue
            out.append(line)
        elif m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not m.group(2).strip():
            fence = None
    assert fence is None, "a fenced code block is never closed"
    return "\n".join(out)


def broken_links(out: Path) -> list[str]:
    """Every relative link of every page under `out` that does not resolve on disk
    (files, and `#anchor` fragments into generated pages)."""
    problems: list[str] = []
    anchors: dict[Path, set[str]] = {}
    for page in sorted(out.rglob("*.md")):
        text = strip_fences(page.read_text(encoding="utf-8"))
        text = re.sub(r"(`+)(?:.+?)\1", "", text)  # links inside code spans are not links
        for target in _LINK.findall(text):
            if target.startswith(("http://", "https://", "mailto:")):
                continue
            path_part, _, fragment = target.partition("#")
            dest = (page.parent / unquote(path_part)).resolve() if path_part else page
            if not dest.exists():
                problems.append(f"{page.relative_to(out)}: {target} (missing)")
                continue
            if fragment and dest.suffix == ".md" and not fragment.startswith("L"):
                if dest not in anchors:
                    anchors[dest] = set(_ANCHOR.findall(dest.read_text(encoding="utf-8")))
                if unquote(fragment) not in anchors[dest]:
                    problems.append(f"{page.relative_to(out)}: {target} (no such anchor)")
    return problems


def ast_keywords(tree: ast.Module) -> dict[str, set[str]]:
    """The reference the keyword index must equal: every class and function name at any depth,
    and every import as its module (with its dots) and as each imported name, straight from `ast`."""
    classes: set[str] = set()
    functions: set[str] = set()
    imports: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            classes.add(node.name)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            functions.add(node.name)
        elif isinstance(node, ast.Import):
            imports.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            imports.add("." * node.level + (node.module or ""))
            imports.update(a.name for a in node.names if a.name != "*")
    found = {"Classes": classes, "Functions": functions, "Imports": imports}
    return {k: v for k, v in found.items() if v}


def regen_processes(server_pid: int) -> list[Any]:
    """The language server's regeneration processes (`repodoc_lsp/server/regen_process.py`)."""
    import psutil

    return [p for p in psutil.Process(server_pid).children()
            if "repodoc_lsp.server.regen_process" in " ".join(p.cmdline())]


async def until_the_process_writes(process: Any, save: Callable[[int], Awaitable[None]],
                                   pages: Callable[[], int], tries: int = 40) -> None:
    """Save (`save(n)` returns once the pages show save n) until the regeneration `process` is
    the one that wrote them (`pages()` bytes or more): it does once it has loaded the workspace."""
    for attempt in range(tries):
        written = process.io_counters().write_chars
        await save(attempt)
        if process.io_counters().write_chars - written >= pages():
            return
        await asyncio.sleep(0.25)
    raise AssertionError(f"the regeneration process wrote no saved file's pages in {tries} saves")


# -- Markdown structure, read with markdown-it-py (CommonMark), independently of repodoc's code --

DOCS_SECTIONS = ["File Metadata", "File Purpose", "Original Source", "High-Level Overview", "Detailed Analysis",
                 "Architecture & Design", "Dependencies", "Code Patterns & Idioms", "Performance Considerations",
                 "Security & Safety", "Testing & Usage", "Related Files", "Cross-References"]
KW_SECTIONS = ["File Information", "Keywords Extracted", "Keyword → Section Map"]
# The only HTML repodoc writes: its marker, anchors (and folded lists).
_OWN_HTML = re.compile(r'(\s*(<!-- generated by repodoc-lsp[^<>]*-->|<a id="[^"<>&]*"></a>|<a id="[^"<>&]*">|</a>'
                       r"|</?details>|<summary>[^<>&]*</summary>|<summary>|</summary>)\s*)+")


def md_tokens(text: str) -> list[Any]:
    """Every token of `text` parsed as CommonMark, inline children included, in order."""
    from markdown_it import MarkdownIt

    out: list[Any] = []
    for token in MarkdownIt("commonmark").parse(text):
        out.append(token)
        out.extend(token.children or ())
    return out


def md_headings(text: str) -> list[tuple[int, str]]:
    """(level, text) of every heading, as a CommonMark reader sees them."""
    tokens = md_tokens(text)
    return [(int(t.tag[1]), tokens[i + 1].content) for i, t in enumerate(tokens) if t.type == "heading_open"]


def foreign_html(text: str) -> list[str]:
    """Raw HTML in `text` that is not one of repodoc's own anchors or folds (it would be live)."""
    return [t.content for t in md_tokens(text)
            if t.type in ("html_block", "html_inline") and not _OWN_HTML.fullmatch(t.content)]


def contained_errors(fragment: str) -> list[str]:
    """What is wrong with `fragment` as the body of a section (and of a list item): a heading,
    raw HTML, or a block that runs past its end."""
    errors: list[str] = []
    indented = "\n".join("  " + line if line else "" for line in re.split(r"\r\n|\r|\n", fragment))
    for page in (f"## Start\n\n{fragment}\n\n## End\n", f"## Start\n\n- item\n\n{indented}\n\n## End\n"):
        found = md_headings(page)
        if found != [(2, "Start"), (2, "End")]:
            errors.append(f"headings {found}")
    errors += [f"html {h!r}" for h in foreign_html(fragment)]
    return errors


def page_errors(text: str, sections: list[str]) -> list[str]:
    """What breaks a page's promised structure: one `#` title, exactly `sections` as its `##`
    headings in order, no raw HTML but repodoc's own anchors."""
    found = md_headings(text)
    errors = [] if sum(1 for level, _ in found if level == 1) == 1 else [f"h1 {found}"]
    h2 = [t for level, t in found if level == 2]
    if h2 != sections:
        errors.append(f"sections {h2}")
    errors += [f"html {h!r}" for h in foreign_html(text)]
    return errors
