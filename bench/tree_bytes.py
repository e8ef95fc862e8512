"""Where the bytes of a generated tree go (issue 14: the tree on disk against the sources).

    python bench/tree_bytes.py OUT --sources WS [--json FILE]

Reads a tree `repodoc generate WS --out OUT` wrote (nothing is generated here) and prints:

- per page kind (`_docs.md`, `_kw.md`, part pages, `index.md`, `doc.md`, the manifest, other):
  pages, apparent bytes, bytes allocated on disk (as `du` counts them, `st_blocks * 512`) and what
  block rounding adds (allocated - apparent), against the `.py` sources' (apparent and allocated);
- per `## ` section of the `_docs.md` pages: apparent bytes, the Original Source section split into
  the embedded source (the fence's body) and its wrapping;
- the pages of small sources (under 1 KB, and empty ones): their pages' mean size and blocks;
- the most frequent lines of the `_docs.md` and `_kw.md` pages outside the embedded source (the
  boilerplate), with the bytes they take in all.

It imports nothing of repodoc and writes nothing but `--json`.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import re
from pathlib import Path

_FENCE = re.compile(r"^(`{3,}|~{3,})")


def kind_of(name: str) -> str:
    if name.endswith("_kw.md"):
        return "_kw.md"
    if name.endswith("_docs.md"):
        return "_docs.md"
    if re.search(r"_docs\.part\d+\.md$", name):
        return "part"
    if name in ("index.md", "doc.md"):
        return name
    if name.startswith(".repodoc"):
        return "manifest"
    return "other"


def sections(text: str) -> tuple[list[tuple[str, int]], int]:
    """(`## ` heading, bytes up to the next one) in order, and the bytes of the embedded source
    (the body of the first fence of Original Source)."""
    out: list[tuple[str, int]] = []
    head, size = "(head)", 0
    source = 0
    in_source_section = in_fence = False
    fence = ""
    for line in text.splitlines(keepends=True):
        n = len(line.encode())
        if not in_fence and line.startswith("## "):
            out.append((head, size))
            head, size = line[3:].strip(), 0
            in_source_section = head == "Original Source"
        size += n
        if in_source_section:
            m = _FENCE.match(line)
            if in_fence:
                if m and line.strip() == fence:
                    in_fence = False
                    in_source_section = False  # one fence: the source
                else:
                    source += n
            elif m:
                in_fence, fence = True, m.group(1)
    out.append((head, size))
    return out, source


def measure(out: Path, sources: Path | None) -> dict:
    kinds: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    section_bytes: collections.Counter = collections.Counter()
    lines: dict[str, collections.Counter] = {"_docs.md": collections.Counter(), "_kw.md": collections.Counter()}
    src_sizes: dict[str, int] = {}
    if sources is not None:
        for dirpath, _, files in os.walk(sources):
            for f in files:
                if f.endswith(".py"):
                    p = os.path.join(dirpath, f)
                    st = os.lstat(p)
                    src_sizes[os.path.relpath(p, sources)] = st.st_size
                    kinds["sources .py"].update(pages=1, apparent=st.st_size, allocated=st.st_blocks * 512)
    small: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for dirpath, _, files in os.walk(out):
        for f in files:
            p = os.path.join(dirpath, f)
            st = os.lstat(p)
            kind = kind_of(f)
            alloc = st.st_blocks * 512
            kinds[kind].update(pages=1, apparent=st.st_size, allocated=alloc, rounding=alloc - st.st_size)
            if kind not in ("_docs.md", "_kw.md"):
                continue
            rel = os.path.relpath(p, out)[: -len(kind)]
            src = src_sizes.get(rel)
            if src is not None and src < 1024:
                bucket = "empty" if src == 0 else "under 1 KB"
                small[f"{bucket} {kind}"].update(pages=1, apparent=st.st_size, allocated=alloc, source=src)
            text = Path(p).read_text(encoding="utf-8", errors="replace")
            if kind == "_docs.md":
                secs, source = sections(text)
                for head, n in secs:
                    section_bytes[head] += n
                section_bytes["  of which embedded source"] += source
                in_fence = False
                for line in text.splitlines(keepends=True):  # boilerplate: outside fences
                    if _FENCE.match(line):
                        in_fence = not in_fence
                        continue
                    if not in_fence:
                        lines[kind][line] += 1
            else:
                for line in text.splitlines(keepends=True):
                    lines[kind][line] += 1
    common = {kind: [(line.rstrip("\n"), n, n * len(line.encode())) for line, n in
                     sorted(counter.items(), key=lambda kv: -kv[1] * len(kv[0].encode()))[:25]]
              for kind, counter in lines.items()}
    return {"kinds": {k: dict(v) for k, v in kinds.items()}, "sections": dict(section_bytes),
            "small": {k: dict(v) for k, v in small.items()}, "common": common}


def _mb(n: float) -> str:
    return f"{n / 1e6:,.1f}"


def report(r: dict) -> None:
    kinds = r["kinds"]
    src = kinds.get("sources .py")
    tree: collections.Counter = collections.Counter()
    for k, v in kinds.items():
        if k != "sources .py":
            tree.update(v)
    print("| kind | pages | apparent MB | on disk MB | rounding MB | on disk / sources |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for k, v in sorted(kinds.items(), key=lambda kv: -kv[1]["allocated"]):
        ratio = f"{v['allocated'] / src['allocated']:.3f}x" if src else ""
        print(f"| {k} | {v['pages']:,} | {_mb(v['apparent'])} | {_mb(v['allocated'])} | "
              f"{_mb(v.get('rounding', 0))} | {ratio} |")
    if src:
        print(f"| **tree** | {tree['pages']:,} | {_mb(tree['apparent'])} | {_mb(tree['allocated'])} | "
              f"{_mb(tree['rounding'])} | {tree['allocated'] / src['allocated']:.3f}x "
              f"(apparent {tree['apparent'] / src['apparent']:.3f}x) |")
    print("\n| `_docs.md` section | apparent MB |\n| --- | ---: |")
    for head, n in r["sections"].items():
        print(f"| {head} | {_mb(n)} |")
    print("\n| pages of small sources | pages | mean apparent | mean on disk | mean source |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for k, v in sorted(r["small"].items()):
        print(f"| {k} | {v['pages']:,} | {v['apparent'] / v['pages']:,.0f} | {v['allocated'] / v['pages']:,.0f} | "
              f"{v['source'] / v['pages']:,.0f} |")
    for kind, rows in r["common"].items():
        print(f"\nmost bytes in repeated lines of {kind} (outside fences): times, MB, line")
        for line, n, total in rows:
            print(f"  {n:>8,} {_mb(total):>7} {line[:110]}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--sources", type=Path)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    result = measure(args.out, args.sources)
    report(result)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
