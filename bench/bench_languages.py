"""Definitions, doc comments and speed of the tree-sitter analysers on real code nobody here wrote,
against universal-ctags as the independent reading.

    python bench/bench_languages.py [--root ~/.cache/repodoc-bench/langs]

Corpora (under --root; each skipped when absent):
- C++: `torch-include/torch/include/{c10,ATen/core}` (unzip `torch/include/*` of the torch wheel);
- TypeScript and JavaScript: the `.d.ts` and `.js` files of `zod/package/lib` (`npm pack zod@3.23.8`,
  untarred into `zod/`);
- Rust: any `*/src` folder of a crate under `rust/` (none reachable here: crates.io is not, and
  pip cannot download pydantic-core's sdist without building maturin);
- Go: `/usr/share/doc/git/contrib` (the Go programs Debian's git ships).

Per language:
- recall and precision of the definitions (name and line; a tag matches a definition of the same
  file and name that starts on its line or up to 3 lines above: return types and `template <>` lines)
  against ctags' tags of the kinds both mean (`KINDS`); fields/members included;
- doc comments: of ctags' definitions (fields excluded: repodoc keeps no doc of a field) whose line
  above (skipping attributes, annotations, `template` lines) ends a doc comment by an independent
  scan (`///`, `//!`, `*/` of a `/**` or `/*!`, a Go `//` line), the fraction repodoc gives a docstring;
- speed: bytes analysed per CPU second in this one process (`analyse_source`, parsing included).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

from repodoc_lsp.analysis import analyse_source
from repodoc_lsp.analysis.source import NotText

# ctags' kinds (long names) that are definitions repodoc lists, per ctags language
KINDS = {
    "C++": {"class", "struct", "union", "enum", "namespace", "typedef", "macro", "function", "prototype",
            "member", "alias"},
    "C": {"struct", "union", "enum", "typedef", "macro", "function", "prototype", "member"},
    "TypeScript": {"function", "class", "interface", "enum", "method", "namespace", "property", "alias",
                   "generator"},
    "JavaScript": {"function", "class", "method", "generator", "field"},
    "Rust": {"module", "struct", "interface", "function", "enum", "typedef", "macro", "field", "method"},
    "Go": {"func", "type", "struct", "interface", "member", "methodSpec", "talias"},
    "Java": {"class", "interface", "enum", "method", "field", "annotation", "record"},
}
FIELD_KINDS = {"member", "property", "field"}
CTAGS_EXTRA = ["--kinds-C++=+p", "--kinds-C=+p"]
_ABOVE_SKIP = re.compile(r"^\s*(#\[|@[A-Za-z]|template\s*<|export\s*$)")


def _files(folder: Path, *suffixes: str) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.name.endswith(suffixes))


def corpora(root: Path) -> dict[str, list[Path]]:
    found: dict[str, list[Path]] = {}
    include = root / "torch-include/torch/include"
    if include.is_dir():
        found["C++ (torch/include: c10, ATen/core)"] = [*_files(include / "c10", ".h", ".cuh", ".hpp"),
                                                        *_files(include / "ATen/core", ".h", ".hpp")]
    if (root / "zod/package/lib").is_dir():
        found["TypeScript (zod 3.23.8 .d.ts)"] = _files(root / "zod/package/lib", ".d.ts")
        found["JavaScript (zod 3.23.8 .js)"] = _files(root / "zod/package/lib", ".js")
    rust = _files(root / "rust", ".rs") if (root / "rust").is_dir() else []
    if rust:
        found["Rust"] = rust
    if Path("/usr/share/doc/git/contrib").is_dir():
        found["Go (git contrib)"] = _files(Path("/usr/share/doc/git/contrib"), ".go")
    return found


def ctags_tags(files: list[Path]) -> tuple[dict[str, list[tuple[str, int, str]]], str]:
    proc = subprocess.run(["ctags", "--output-format=json", "--fields=+nKzZl", *CTAGS_EXTRA, "-f", "-",
                           *map(str, files)], capture_output=True, text=True, check=True)
    tags: dict[str, list[tuple[str, int, str]]] = defaultdict(list)
    language = ""
    for row in proc.stdout.splitlines():
        tag = json.loads(row)
        if tag.get("_type") != "tag":
            continue
        lang = tag.get("language", "")
        if tag["kind"] not in KINDS.get(lang, ()) or tag["name"].startswith(("__anon", "AnonymousFunction")):
            continue
        language = language or lang
        # `operator =` (ctags) and `operator=` (the source, repodoc) are one name
        tags[tag["path"]].append((tag["name"].replace(" ", ""), tag["line"], tag["kind"]))
    return tags, language


def doc_above(lines: list[str], line: int, go: bool) -> bool:
    """An independent scan: does a doc comment end right above line `line` (1-based)?"""
    at = line - 2
    while at >= 0 and _ABOVE_SKIP.match(lines[at]):
        at -= 1
    if at < 0:
        return False
    above = lines[at].strip()
    if above.startswith(("///", "//!")) or (go and above.startswith("//")):
        return True
    if above.endswith("*/"):
        while at >= 0 and "/*" not in lines[at]:
            at -= 1
        return at >= 0 and re.search(r"/\*[*!](?!/)", lines[at]) is not None
    return False


def measure(name: str, files: list[Path]) -> dict[str, object]:
    tags, language = ctags_tags(files)
    ours: dict[str, list[tuple[str, int, bool]]] = {}
    size = 0
    cpu = 0.0
    count = 0
    if files:  # the grammar and its query are loaded once a process: not counted
        analyse_source(files[0].name, b"")
    for path in files:
        data = path.read_bytes()
        start = time.process_time()
        try:
            facts = analyse_source(path.name, data)
        except NotText:
            continue
        cpu += time.process_time() - start
        size += len(data)
        count += 1
        defs = [(s.name.replace(" ", ""), s.line, s.docstring is not None) for s in facts.symbols]
        defs += [(a.name, a.line, False) for a in facts.attributes]
        ours[str(path)] = defs
    matched = total_ours = total_tags = 0
    documented = with_doc = 0
    missed: dict[str, int] = defaultdict(int)
    for path, defs in ours.items():
        total_ours += len(defs)
        lines = Path(path).read_text("utf-8", "replace").split("\n")
        by_name: dict[str, list[tuple[int, bool]]] = defaultdict(list)
        for n, line, doc in defs:
            by_name[n].append((line, doc))
        used: set[tuple[str, int]] = set()
        for tag_name, line, kind in tags.get(path, ()):
            total_tags += 1
            hit = next(((ln, doc) for ln, doc in by_name.get(tag_name, ())
                        if line - 3 <= ln <= line and (tag_name, ln) not in used), None)
            if hit is None:
                missed[kind] += 1
            else:
                used.add((tag_name, hit[0]))
                matched += 1
            if kind not in FIELD_KINDS and doc_above(lines, line, language == "Go"):
                with_doc += 1
                documented += bool(hit and hit[1])
    matched_ours = matched  # each tag matches one definition at most
    return {"corpus": name, "files": count, "MB": round(size / 1e6, 2), "ctags defs": total_tags,
            "repodoc defs": total_ours, "recall": round(matched / max(total_tags, 1), 3),
            "precision": round(matched_ours / max(total_ours, 1), 3),
            "docs attached": round(documented / max(with_doc, 1), 3), "defs with a doc above": with_doc,
            "MB/s": round(size / 1e6 / max(cpu, 1e-9), 2), "missed by kind": dict(missed)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=Path(os.path.expanduser("~/.cache/repodoc-bench/langs")))
    args = parser.parse_args()
    found = corpora(args.root)
    if not found:
        print(f"no corpus under {args.root}", file=sys.stderr)
        return 1
    for name, folders in found.items():
        print(json.dumps(measure(name, folders)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
