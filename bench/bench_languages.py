"""Definitions, doc comments and speed of the tree-sitter analysers on real code nobody here wrote,
against universal-ctags (Debian's 5.9) as the independent reading.

    python bench/languages_corpus.py [--root ~/.cache/repodoc-bench/langs]   # once: fetches the corpora
    python bench/bench_languages.py [--root ...] [--only NAME] [--show N]

Corpora (`corpora`, under --root; each skipped when absent): C++ (torch 2.13.0's `torch/include`: c10,
ATen/core), TypeScript (rxjs 7.8.1's `src`), JavaScript (express 4.21.2; zod 3.23.8's compiled
`lib/*.js`), Rust (the cryptography 41.0.7 sdist's `src/rust`, regex-syntax 0.6.27), Go (cobra 1.6.1,
go-cmp 0.5.9, the Go programs of Debian's git), Java (OpenJDK 17's `java.util`).

Per corpus:
- recall and precision of the definitions (name and line; a tag matches the closest definition of the
  same file and name that starts on its line or up to 3 lines above: return types, `template <>`
  lines) against ctags' tags of the kinds both mean (`KINDS`); fields/members included. ctags' unit
  is kept where it differs: one tag for a TypeScript function's overload signatures (the others are
  counted as matched, and reported), an object literal is no JavaScript class (`_object_literals`), a
  named function expression assigned to a property is tagged twice (one counted);
- doc comments: of ctags' definitions (fields excluded: repodoc keeps no doc of a field) whose line
  above (skipping attributes, annotations, `template` lines; in JS/TS one blank line after `*/`) ends a
  doc comment by an independent scan (`///`, `//!`, `*/` of a `/**` or `/*!`, a Go `//` line), the
  fraction repodoc gives a docstring;
- speed: bytes analysed per CPU second in this one process (`analyse_source`, parsing included).
`--show N` prints N of each kind of disagreement (bench/README.md explains each class).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

from repodoc_lsp.analysis import analyse_source
from repodoc_lsp.analysis.source import NotText

# ctags' kinds (long names) that are definitions repodoc lists, per ctags language
KINDS = {
    "C++": {"class", "struct", "union", "enum", "namespace", "typedef", "macro", "function", "prototype",
            "member", "alias"},
    "C": {"struct", "union", "enum", "typedef", "macro", "function", "prototype", "member"},
    # and the top-level `constant`/`variable` tags whose value is a function (`const f = () =>`)
    "TypeScript": {"function", "class", "interface", "enum", "method", "namespace", "property", "alias",
                   "generator", "constant", "variable"},
    "JavaScript": {"function", "class", "method", "generator", "field", "getter", "setter", "constant",
                   "variable"},
    "Rust": {"module", "struct", "interface", "function", "enum", "typedef", "macro", "field", "method"},
    "Go": {"func", "type", "struct", "interface", "member", "anonMember", "methodSpec", "talias"},
    "Java": {"class", "interface", "enum", "method", "field", "annotation", "record"},
}
FIELD_KINDS = {"member", "anonMember", "property", "field"}
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
    if (root / "rxjs/package/src").is_dir():
        found["TypeScript (rxjs 7.8.1 src)"] = _files(root / "rxjs/package/src", ".ts")
    # not zod's `.d.ts` files: ctags 5.9 reads no member without a body (`get value(): T;`), nor an
    # `interface` after it, nor `declare type` (a "property" of the class above); nor its `index.umd.js`
    # (lib/*.js again, inside one factory function, which ctags does not enter)
    if (root / "express/package").is_dir():
        found["JavaScript (express 4.21.2)"] = _files(root / "express/package", ".js")
    if (root / "zod/package/lib").is_dir():
        found["JavaScript (zod 3.23.8 lib/*.js)"] = [p for p in _files(root / "zod/package/lib", ".js")
                                                     if p.name != "index.umd.js"]
    rust = [*_files(root / "rust", ".rs"), *_files(root / "debian/usr/share/cargo/registry", ".rs")]
    if rust:
        found["Rust (cryptography 41.0.7 sdist, regex-syntax 0.6.27)"] = rust
    gocode = root / "debian/usr/share/gocode/src/github.com"
    go = [*_files(gocode, ".go"), *_files(Path("/usr/share/doc/git/contrib"), ".go")]
    if go:
        found["Go (cobra 1.6.1, go-cmp 0.5.9, git contrib)"] = go
    if (root / "jdk17/java.base/java/util").is_dir():
        found["Java (OpenJDK 17 java.util)"] = _files(root / "jdk17/java.base/java/util", ".java")
    return found


def ctags_tags(files: list[Path]) -> tuple[dict[str, list[tuple[str, int, str]]], str]:
    proc = subprocess.run(["ctags", "--output-format=json", "--fields=+nKzZl", *CTAGS_EXTRA, "-f", "-",
                           *map(str, files)], capture_output=True, text=True, check=True)
    rows = [tag for tag in map(json.loads, proc.stdout.splitlines()) if tag.get("_type") == "tag"]
    literals = _object_literals(rows)
    tags: dict[str, list[tuple[str, int, str]]] = defaultdict(list)
    seen: set[tuple[str, str, int]] = set()
    language = ""
    for tag in rows:
        lang = tag.get("language", "")
        if tag["kind"] not in KINDS.get(lang, ()) or tag["name"].startswith(("__anon", "AnonymousFunction")):
            continue
        if (tag["path"], _qualified(tag)) in literals or (tag["path"], tag.get("scope")) in literals:
            continue
        if tag["kind"] in ("constant", "variable") and not _TOP_FUNCTION.search(tag.get("pattern", "")):
            continue
        # `operator =` (ctags) and `operator=` (the source, repodoc) are one name
        name = tag["name"].replace(" ", "")
        if (tag["path"], name, tag["line"]) in seen:  # `req.param = function param`: tagged twice
            continue
        seen.add((tag["path"], name, tag["line"]))
        language = language or lang
        tags[tag["path"]].append((name, tag["line"], tag["kind"]))
    return tags, language


def _qualified(tag: dict[str, str]) -> str:
    return f"{tag['scope']}.{tag['name']}" if tag.get("scope") else tag["name"]


# a top-level (at the line's start: ctags 5.9's TypeScript parser loses the scope of some locals)
# variable whose value is a function (not the value of one called at once: `= (() => {...})()`)
_TOP_FUNCTION = re.compile(r"^/\^(?:export\s+)?(?:const|let|var)\s+\w+\s*(?::[^=]*)?="
                           r"\s*(?:async\s+)?(?:function\b|\((?!\()[^)]*\)\s*(?::[^=]*)?=>|\w+\s*=>)")
_NOT_LITERAL = re.compile(r"\bclass\b|\bfunction\b|=>")


def _object_literals(rows: list[dict[str, str]]) -> set[tuple[str, str]]:
    """(path, qualified name) of ctags JavaScript's `class` tags that are object literals (`var headers
    = {`, `exports.default = {`): values, not definitions; their properties are not counted either."""
    return {(tag["path"], _qualified(tag)) for tag in rows
            if tag.get("language") == "JavaScript" and tag["kind"] == "class"
            and not _NOT_LITERAL.search(tag.get("pattern", ""))}


def doc_above(lines: list[str], line: int, language: str) -> bool:
    """An independent scan: does a doc comment end right above line `line` (1-based)? In JavaScript and
    TypeScript, a `/** */` one blank line above counts too (JSDoc's rule)."""
    at = line - 2
    while at >= 0 and _ABOVE_SKIP.match(lines[at]):
        at -= 1
    if language in ("JavaScript", "TypeScript") and at > 0 and not lines[at].strip() and lines[at - 1].strip() == "*/":
        at -= 1
    if at < 0:
        return False
    go = language == "Go"
    above = lines[at].strip()
    if (above.startswith(("///", "//!")) and not above.startswith("////")) or (go and above.startswith("//")):
        return True
    if above.endswith("*/"):
        while at >= 0 and "/*" not in lines[at]:
            at -= 1
        return at >= 0 and re.search(r"/\*[*!](?!/)", lines[at]) is not None
    return False


def analyse(files: list[Path]) -> tuple[dict[str, list[tuple[str, int, bool, str]]], int, float]:
    """Our definitions per file (name, line, has a docstring, word), the bytes read, the CPU seconds."""
    ours: dict[str, list[tuple[str, int, bool, str]]] = {}
    size = 0
    cpu = 0.0
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
        defs = [(s.name.replace(" ", ""), s.line, s.docstring is not None, s.word) for s in facts.symbols]
        defs += [(a.name, a.line, False, "field") for a in facts.attributes]
        ours[str(path)] = defs
    return ours, size, cpu


def measure(name: str, files: list[Path], show: int) -> dict[str, object]:
    tags, language = ctags_tags(files)
    ours, size, cpu = analyse(files)
    matched = total_ours = total_tags = matched_overloads = 0
    documented = with_doc = 0
    missed: dict[str, list[str]] = defaultdict(list)
    extra: dict[str, list[str]] = defaultdict(list)
    undocumented: dict[str, list[str]] = defaultdict(list)
    for path, defs in ours.items():
        total_ours += len(defs)
        lines = Path(path).read_text("utf-8", "replace").split("\n")
        by_name: dict[str, list[tuple[int, bool]]] = defaultdict(list)
        for n, line, doc, _word in defs:
            by_name[n].append((line, doc))
        used: set[tuple[str, int]] = set()
        for tag_name, line, kind in sorted(tags.get(path, ()), key=lambda tag: tag[1]):
            total_tags += 1
            # the closest definition of that name on the tag's line or up to 3 lines above
            hit = max(((ln, doc) for ln, doc in by_name.get(tag_name, ())
                       if line - 3 <= ln <= line and (tag_name, ln) not in used), default=None)
            if hit is None:
                missed[kind].append(f"{path}:{line}: {tag_name}")
            else:
                used.add((tag_name, hit[0]))
                matched += 1
            if kind not in FIELD_KINDS and doc_above(lines, line, language):
                with_doc += 1
                documented += bool(hit and hit[1])
                if not (hit and hit[1]):
                    undocumented[kind].append(f"{path}:{line}: {tag_name}")
        extra_here = Counter((n, line, word) for n, line, _doc, word in defs)
        extra_here.subtract((n, ln, word) for n, ln, _doc, word in defs if (n, ln) in used)
        if language == "TypeScript":  # ctags tags an overloaded function once: its other signatures
            names = {n for n, _ln in used}
            overloads = Counter({key: left for key, left in extra_here.items()
                                 if left > 0 and key[0] in names and key[2] in ("function", "method")})
            matched_overloads += sum(overloads.values())
            extra_here.subtract(overloads)
        for (n, line, word), left in extra_here.items():
            extra[word].extend([f"{path}:{line}: {n}"] * max(left, 0))
    if show:
        _show("missed (ctags kind)", missed, show)
        _show("not in ctags (repodoc word)", extra, show)
        _show("a doc comment above, none attached (ctags kind)", undocumented, show)
    return {"corpus": name, "files": len(ours), "MB": round(size / 1e6, 2), "ctags defs": total_tags,
            "repodoc defs": total_ours, "recall": round(matched / max(total_tags, 1), 3),
            # each tag matches one definition at most; the other signatures of an overloaded function too
            "precision": round((matched + matched_overloads) / max(total_ours, 1), 3),
            "overload signatures": matched_overloads,
            "docs attached": round(documented / max(with_doc, 1), 3), "defs with a doc above": with_doc,
            "MB/s": round(size / 1e6 / max(cpu, 1e-9), 2),
            "missed by kind": {k: len(v) for k, v in missed.items()},
            "not in ctags by word": {k: len(v) for k, v in extra.items()}}


def _show(title: str, found: dict[str, list[str]], count: int) -> None:
    for kind, where in sorted(found.items(), key=lambda item: -len(item[1])):
        print(f"# {title}: {kind}: {len(where)}", file=sys.stderr)
        for line in random.Random(0).sample(where, min(count, len(where))):
            print(f"    {line}", file=sys.stderr)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=Path(os.path.expanduser("~/.cache/repodoc-bench/langs")))
    parser.add_argument("--show", type=int, default=0, metavar="N",
                        help="print N disagreements of each kind to stderr (a random sample)")
    parser.add_argument("--only", default="", help="the corpora whose name has this text")
    args = parser.parse_args()
    found = corpora(args.root)
    if not found:
        print(f"no corpus under {args.root}", file=sys.stderr)
        return 1
    for name, folders in found.items():
        if args.only.lower() in name.lower():
            print(json.dumps(measure(name, folders, args.show)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
