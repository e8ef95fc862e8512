"""Where the bytes of a generated tree go (issue 14: the tree on disk against the sources).

    python bench/tree_bytes.py OUT --sources WS [--json FILE]

Reads a tree `repodoc generate WS --out OUT` wrote (nothing is generated here) and prints:

- per page kind (`_docs.md`, `_kw.md`, part pages, `index.md`, `doc.md`, the manifest, other):
  pages, apparent bytes, bytes allocated on disk (as `du` counts them, `st_blocks * 512`) and what
  block rounding adds (allocated - apparent), against two measures of the sources (apparent and
  allocated): the `.py` files alone, and the documented sources: every file of `--sources` the tree
  documents, that is with a page of its own (`X_docs.md`: Python, stubs, other languages,
  documents), and a `.pyi` stub documented on the page of the `.py` module beside it;
- per `## ` section of the `_docs.md` pages: apparent bytes, the Original Source section split into
  the embedded source (the fence's body) and its wrapping;
- the pages of small sources (under 1 KB, and empty ones): their pages' mean size and blocks;
- the most frequent lines of the `_docs.md` and `_kw.md` pages outside the embedded source (the
  boilerplate), with the bytes they take in all;
- the floor of a tree that keeps `shared/FORMAT.md` (`tree_floor.py`: the required pages with only
  what the format requires, the sources' fences as written) against the documented sources, and the
  strict floor that embeds every source whole.

It imports nothing of repodoc and writes nothing but `--json`.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import re
from pathlib import Path

import tree_floor

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


def documented(out: Path, rel: str) -> bool:
    """Whether the tree documents the source `rel`: it has a page of its own, or it is a `.pyi` stub
    whose `.py` module beside it has one (the stub's signatures are on that page)."""
    if (out / f"{rel}_docs.md").is_file():
        return True
    return rel.endswith(".pyi") and (out / f"{rel[:-1]}_docs.md").is_file()


def measure(out: Path, sources: Path | None) -> dict:
    kinds: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    section_bytes: collections.Counter = collections.Counter()
    lines: dict[str, collections.Counter] = {"_docs.md": collections.Counter(), "_kw.md": collections.Counter()}
    src_sizes: dict[str, int] = {}
    if sources is not None:
        for dirpath, _, files in os.walk(sources):
            for f in files:
                p = os.path.join(dirpath, f)
                rel = os.path.relpath(p, sources)
                if not os.path.isfile(p) or os.path.islink(p):
                    continue
                st = os.lstat(p)
                if f.endswith(".py"):
                    src_sizes[rel] = st.st_size
                    kinds["sources .py"].update(pages=1, apparent=st.st_size, allocated=st.st_blocks * 512)
                if documented(out, rel):
                    kinds["sources documented"].update(pages=1, apparent=st.st_size, allocated=st.st_blocks * 512)
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
    kinds_out = {k: dict(v) for k, v in kinds.items()}
    floor = tree_floor.floor(out, sources)
    return {"kinds": kinds_out, "ratios": ratios(kinds_out), "sections": dict(section_bytes),
            "small": {k: dict(v) for k, v in small.items()}, "common": common, "floor": floor,
            "floor_ratios": floor_ratios(floor, kinds_out)}


def _kb(n: float) -> str:
    return f"{n / 1e3:,.1f}"


_SOURCES = ("sources .py", "sources documented")


def ratios(kinds: dict) -> dict[str, tuple[float, float]]:
    """The tree (every file under OUT) against each measure of the sources: (on disk, apparent)."""
    tree: collections.Counter = collections.Counter()
    for k, v in kinds.items():
        if k not in _SOURCES:
            tree.update(v)
    return {k: (tree["allocated"] / kinds[k]["allocated"], tree["apparent"] / kinds[k]["apparent"])
            for k in _SOURCES if kinds.get(k, {}).get("allocated")}


def floor_ratios(floor: dict, kinds: dict) -> dict[str, tuple[float, float]]:
    """The floor and the strict floor against the documented sources: (on disk, apparent)."""
    src = kinds.get("sources documented")
    if not src or not src.get("allocated"):
        return {}
    out = {}
    for name, strict in (("floor", False), ("strict floor", True)):
        apparent, disk = tree_floor.total(floor, strict)
        out[name] = (disk / src["allocated"], apparent / src["apparent"])
    return out


def report(r: dict) -> None:
    kinds = r["kinds"]
    src = kinds.get("sources documented")
    tree: collections.Counter = collections.Counter()
    for k, v in kinds.items():
        if k not in _SOURCES:
            tree.update(v)
    print("| kind | files | apparent KB | on disk KB | rounding KB | on disk / documented sources |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for k, v in sorted(kinds.items(), key=lambda kv: -kv[1]["allocated"]):
        ratio = f"{v['allocated'] / src['allocated']:.3f}x" if src else ""
        print(f"| {k} | {v['pages']:,} | {_kb(v['apparent'])} | {_kb(v['allocated'])} | "
              f"{_kb(v.get('rounding', 0))} | {ratio} |")
    print(f"| **tree** | {tree['pages']:,} | {_kb(tree['apparent'])} | {_kb(tree['allocated'])} | "
          f"{_kb(tree['rounding'])} | |")
    for k, (disk, apparent) in ratios(kinds).items():
        print(f"\ntree / {k}: {disk:.3f}x on disk, {apparent:.3f}x apparent")
    for k, (disk, apparent) in r["floor_ratios"].items():
        print(f"\n{k} / sources documented: {disk:.3f}x on disk, {apparent:.3f}x apparent")
    print("\n| `_docs.md` section | apparent KB |\n| --- | ---: |")
    for head, n in r["sections"].items():
        print(f"| {head} | {_kb(n)} |")
    print("\n| pages of small sources | pages | mean apparent | mean on disk | mean source |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for k, v in sorted(r["small"].items()):
        print(f"| {k} | {v['pages']:,} | {v['apparent'] / v['pages']:,.0f} | {v['allocated'] / v['pages']:,.0f} | "
              f"{v['source'] / v['pages']:,.0f} |")
    for kind, rows in r["common"].items():
        print(f"\nmost bytes in repeated lines of {kind} (outside fences): times, KB, line")
        for line, n, total in rows:
            print(f"  {n:>8,} {_kb(total):>7} {line[:110]}")


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
