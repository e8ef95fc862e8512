"""`repodoc generate` on a small mixed workspace: the page of a C++ header and of a TypeScript module
list the files naming their definitions, marked as name matches, and the list follows a later run
after another file stops naming one (the run after an edit, incremental, equals a fresh one)."""

from __future__ import annotations

import shutil
from pathlib import Path

from helpers import cli_here

FILES = {
    "math.h": "#pragma once\n/// Adds two numbers.\nint add_numbers(int a, int b);\n",
    "main.cpp": '#include "math.h"\nint main() {\n  return add_numbers(1, 2);\n}\n',
    "other.cc": '#include "math.h"\nint twice(int x) { return add_numbers(x, x); }\n',
    "util.ts": "/** Formats a name. */\nexport function formatName(first: string, last: string): string {\n"
               "  return first + last;\n}\n",
    "app.ts": 'import { formatName } from "./util";\nconsole.log(formatName("a", "b"));\n',
}
MARK = "by name, not resolved"


def _generate(root: Path, env: dict[str, str]) -> None:
    proc = cli_here("generate", str(root), env=env)
    assert proc.returncode == 0, proc.stderr


def test_used_by_name_on_pages(tmp_path: Path, cache_env: dict[str, str]) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    for rel, text in FILES.items():
        (root / rel).write_text(text)
    _generate(root, cache_env)
    header = (root / "docs/math.h_docs.md").read_text()
    assert f"**Used by** (2 files naming it; {MARK}):" in header
    assert "- [main.cpp](main.cpp_docs.md) (line 3)" in header and "- [other.cc](other.cc_docs.md) (line 2)" in header
    util = (root / "docs/util.ts_docs.md").read_text()
    assert f"**Used by** (1 file naming it; {MARK}):" in util and "- [app.ts](app.ts_docs.md)" in util

    (root / "other.cc").write_text("int twice(int x) { return x + x; }\n")
    _generate(root, cache_env)
    header = (root / "docs/math.h_docs.md").read_text()
    assert f"**Used by** (1 file naming it; {MARK}):" in header and "(other.cc_docs.md) (line 2)" not in header
    shutil.rmtree(root / "docs")
    _generate(root, cache_env)  # fresh
    assert (root / "docs/math.h_docs.md").read_text() == header
