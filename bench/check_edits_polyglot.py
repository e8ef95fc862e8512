"""Random edits of real C, C++, JavaScript, TypeScript, Rust, Go and Java code: after each, the tree
kept by `repodoc generate` equals a fresh one, byte for byte (the manifest aside).

    python bench/check_edits_polyglot.py [--corpus NAME ...] [--seed N] [--steps N] [--root DIR]

The property tests (tests/edits.py) edit Python; this drives the same promise through the files read
with tree-sitter, whose "Used by" is by name (`analysis/treesitter/byname.py`). Each step takes one
file of the corpus and renames a definition, deletes a line (often a syntax error), defines a name
another file calls, copies the file or deletes it; then generates in place (incremental, the cache
kept) and into a fresh folder with an empty cache. Corpora: bench/languages_corpus.py (fetched when
missing). Prints one line per step; exit 1 at the first difference, with its diff. Needs the test
extras (`pip install -e ".[test]"`): pages are compared as the property tests compare them.
"""

from __future__ import annotations

import argparse
import difflib
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH), str(BENCH.parent / "tests")]

from edits import tree  # noqa: E402  (the property tests' reading: the manifest's rename aliases stripped)
from languages_corpus import fetch  # noqa: E402

CORPORA = {"express": "express/package", "zod": "zod/package", "acorn": "acorn/package",
           "rust": "rust/cryptography-41.0.7", "go": "debian/usr/share/gocode/src/github.com/google/go-cmp",
           "java": "jdk17/java.base/java/util/concurrent/atomic"}
SUFFIXES = (".py", ".js", ".mjs", ".ts", ".c", ".h", ".cc", ".cpp", ".hpp", ".cu", ".go", ".rs", ".java")
_DEFINED = re.compile(r"\b(?:def|function|class|fn|func|struct|interface|enum)\s+([A-Za-z_]\w{2,})")
_CALLED = re.compile(r"\b([A-Za-z_]\w{3,})\(")


def generate(root: Path, out: Path, cache: Path) -> None:
    env = {**os.environ, "REPODOC_CACHE_DIR": str(cache)}
    proc = subprocess.run([sys.executable, "-m", "repodoc_lsp", "generate", str(root), "--quiet", "--out", str(out)],
                          env=env, capture_output=True, text=True)
    if proc.returncode:
        raise SystemExit(f"generate failed ({proc.returncode}): {proc.stderr.strip()}")


def edit(ws: Path, rnd: random.Random) -> str:
    """One random edit of a source file of `ws`; what it did."""
    files = sorted(p for p in ws.rglob("*") if p.is_file() and p.suffix in SUFFIXES)
    f = rnd.choice(files)
    text = f.read_text(encoding="utf-8", errors="replace")
    kind = rnd.choice(["rename", "delete", "copy", "drop line", "define"])
    defined = sorted(set(_DEFINED.findall(text)))
    if kind == "rename" and defined:
        name = rnd.choice(defined)
        f.write_text(re.sub(rf"\b{name}\b", f"{name}Renamed", text), encoding="utf-8")
        return f"rename {name} in {f.relative_to(ws)}"
    if kind == "delete" and len(files) > 3:
        f.unlink()
        return f"delete {f.relative_to(ws)}"
    if kind == "copy":
        f.with_name(f"copy_{f.name}").write_text(text, encoding="utf-8")
        return f"copy {f.relative_to(ws)}"
    called = sorted(set(_CALLED.findall(rnd.choice(files).read_text(encoding="utf-8", errors="replace"))))
    if kind == "define" and called:
        name = rnd.choice(called)
        f.write_text(f"{text}\nfunction {name}() {{ return 1; }}\n", encoding="utf-8")
        return f"define {name} in {f.relative_to(ws)}"
    lines = text.splitlines(keepends=True)
    i = rnd.randrange(len(lines)) if lines else 0
    f.write_text("".join(lines[:i] + lines[i + 1:]), encoding="utf-8")
    return f"drop line {i + 1} of {f.relative_to(ws)}"


def check(source: Path, seed: int, steps: int, edit: Callable[[Path, random.Random], str] = edit) -> bool:
    """`steps` random edits (`edit`) of a copy of `source`: after each, the kept tree equals a fresh one."""
    rnd = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="repodoc-edits-") as tmp:
        base = Path(tmp)
        ws = base / "ws"
        shutil.copytree(source, ws)
        generate(ws, base / "kept", base / "cache")
        for step in range(steps):
            what = edit(ws, rnd)
            generate(ws, base / "kept", base / "cache")
            shutil.rmtree(base / "fresh", ignore_errors=True)
            shutil.rmtree(base / "fresh-cache", ignore_errors=True)
            generate(ws, base / "fresh", base / "fresh-cache")
            kept, fresh = tree(base / "kept"), tree(base / "fresh")
            differ = [p for p in sorted(kept.keys() | fresh.keys()) if kept.get(p) != fresh.get(p)]
            print(f"  {step}: {what}: {'equal' if not differ else f'{len(differ)} pages differ: {differ[:3]}'}",
                  flush=True)
            if differ:
                page = differ[0]
                sys.stdout.writelines(difflib.unified_diff(
                    fresh.get(page, b"").decode().splitlines(True), kept.get(page, b"").decode().splitlines(True),
                    f"fresh/{page}", f"kept/{page}"))
                return False
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", action="append", choices=sorted(CORPORA), help="default: all")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--root", type=Path, default=Path.home() / ".cache" / "repodoc-bench" / "langs")
    args = parser.parse_args()
    fetch(args.root)
    ok = True
    for name in args.corpus or sorted(CORPORA):
        print(f"{name} (seed {args.seed}):", flush=True)
        ok = check(args.root / CORPORA[name], args.seed, args.steps) and ok
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
