"""`repodoc generate` on a small polyglot workspace: C++, CUDA, TypeScript, JavaScript, Go, Rust and
Java files get their definitions on their pages and in their keyword indexes, and their includes and
imports link files."""

from __future__ import annotations

import os
import re
from pathlib import Path

from helpers import broken_links, make_workspace, run_cli

from repodoc_lsp.analysis import analyse_source

FILES = {
    "src/ops.h": "#pragma once\n/// Adds two numbers.\n/// @param a first\nTORCH_API int add(int a, int b);\n"
                 "namespace ops {\n/** A tensor. */\nstruct Tensor { int size; };\n}\n",
    # a method of a class defined elsewhere (listed as a function of this file, inside its class)
    "src/ops.cpp": '#include "ops.h"\nint add(int a, int b) { return a + b; }\n'
                   "/// Its size.\nint ops::Tensor::numel() const { return size; }\n",
    "src/kernel.cu": '#include "ops.h"\n/// Scales.\n__global__ void scale(float* x) {}\n',
    "web/util.ts": "/** Doubles. */\nexport function double(x: number): number { return 2 * x; }\n"
                   "export interface Shape { area(): number }\n",
    "web/app.js": 'import { double } from "./util";\nclass App { run() { return double(1); } }\n',
    "go/server.go": "package server\n\n// Server serves.\ntype Server struct{ Addr string }\n\n"
                    "// Start starts it.\nfunc (s *Server) Start() error { return nil }\n",
    "go/stop.go": "package server\n\n// Stop stops it.\nfunc (s *Server) Stop() error { return nil }\n",
    "crate/src/lib.rs": "//! The crate.\nmod util;\n/// A point.\npub struct Point { x: i32 }\n",
    "crate/src/util.rs": "/// Helps.\npub fn help() {}\n",
    "java/A.java": "/** A thing. */\npublic class A {\n  /** Runs. */\n  public int run(int n) { return n; }\n}\n",
}


def test_pages_and_keyword_indexes_of_every_language(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", FILES)
    proc = run_cli("generate", str(root), env={**os.environ, "REPODOC_CACHE_DIR": str(tmp_path / "_cache")})
    assert proc.returncode == 0, proc.stderr
    out = root / "docs"
    for rel, text in FILES.items():
        facts = analyse_source(rel, text.encode())
        assert facts.symbols, rel
        page = (out / f"{rel}_docs.md").read_text(encoding="utf-8")
        kw = (out / f"{rel}_kw.md").read_text(encoding="utf-8")
        for symbol in facts.symbols:
            assert f'<a id="{symbol.anchor}"></a>' in page, (rel, symbol.qualname)
            assert f"- **`{symbol.name}`**: [docs]({Path(rel).name}_docs.md#{symbol.anchor})" in kw, (rel, symbol.name)
    header = (out / "src/ops.h_docs.md").read_text(encoding="utf-8")
    assert "Adds two numbers." in header and "- `a`: first" in header
    # each language's own words for its definitions, not Python's `def` and `class`
    assert "#### `function add(int a, int b)`" in header and "#### `struct ops.Tensor`" in header
    for rel, heading in (("crate/src/lib.rs", "struct Point"), ("crate/src/util.rs", "fn help()"),
                         ("go/server.go", "struct Server"), ("web/util.ts", "interface Shape")):
        assert f"#### `{heading}`" in (out / f"{rel}_docs.md").read_text(encoding="utf-8"), rel
    imported_by = header.split('<a id="imported-by"></a>', 1)[1].split("\n## ", 1)[0]
    assert re.search(r"ops\.cpp", imported_by) and re.search(r"kernel\.cu", imported_by)
    assert "lib.rs" in (out / "crate/src/util.rs_docs.md").read_text(encoding="utf-8").split("imported-by")[1]
    assert "[`ops.h`](ops.h_docs.md)" in (out / "src/ops.cpp_docs.md").read_text(encoding="utf-8")
    assert broken_links(out) == []
