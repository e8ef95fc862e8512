"""Helpers of the core tests: workspaces built in a temporary folder, the real CLI, link checks."""

from __future__ import annotations

import ast
import asyncio
import json
import re
import subprocess
import sys
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import unquote

REPO = Path(__file__).resolve().parent.parent


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


def generate_json(root: Path, env: Mapping[str, str], *extra: str) -> dict:
    proc = run_cli("generate", str(root), "--json", *extra, env=env)
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
            if m:
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
