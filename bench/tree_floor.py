"""The floor of a tree that keeps `shared/FORMAT.md`: the least a generated tree can weigh with the
pages the format requires, each holding only what the format requires of it (issue 35: tree <= 1.3x).

    python bench/tree_floor.py OUT [--sources WS]

Read from a tree `repodoc generate` wrote (nothing of repodoc is imported), page by page:

- each `FILE_docs.md`: the marker line, the title, the 13 `## ` section headings with one short line
  each (`MIN_LINE`), the metadata lines the format names (path, size, type, extension), the
  Original Source section's fold and fence **as written** (a source over `embed-source-max-bytes`
  is one line there), an anchor and the name of every symbol its keyword index links to (the
  format anchors each), the four cross-reference lines as written, the footer;
- each `FILE_kw.md`: marker, title, the three File Information lines as written, `## Keywords
  Extracted` with its `### ` kinds and one bullet per keyword in the format's shortest form
  (``- **`name`**: [docs](PAGE#anchor)``, one link per definition), a paragraph of identifiers as
  written, the Keyword -> Section Map lines as written, the footer;
- each folder: an `index.md` of one line per file and sub-folder (a link, or the name and a short
  line for a file without pages) and a `doc.md` of a title and three short lines (what the folder is
  for, its main symbols, its dependencies);
- the manifest as written (the format requires it; it is already compressed).

Part pages and `llms.txt` are not required: 0. On disk each page is rounded up to the file system's
block (a non-empty file takes at least one). The strict floor embeds every source whole (the
format's first reading, `--embed-source-max-bytes` past every file): each `_docs.md` of a source not
embedded grows by that source in its fold and fence.
"""
from __future__ import annotations

import argparse
import collections
import os
import re
from pathlib import Path

MIN_LINE = "Nothing of this kind found.\n\n"  # the shortest honest line of a section
SECTIONS = ("File Metadata", "File Purpose", "Original Source", "High-Level Overview", "Detailed Analysis",
            "Architecture & Design", "Dependencies", "Code Patterns & Idioms", "Performance Considerations",
            "Security & Safety", "Testing & Usage", "Related Files", "Cross-References")
_META = ("- **Path**", "- **Size**", "- **Type**", "- **Extension**")
_XREF = ("- **File Documentation**", "- **Keyword Index**", "- **Folder Index**", "- **Folder Documentation**")
_LINK = re.compile(r"\]\(([^()\s]+)\)")
_NAME = re.compile(r"^- \*\*`([^`]+)`\*\*")
_FOLD = "<details><summary>Source: {} bytes</summary>\n\n```python\n\n```\n\n</details>\n\n"


def _section(text: str, heading: str) -> str:
    """The body of the `## heading` section (up to the next `## ` line outside a fence)."""
    start = text.find(f"\n## {heading}\n")
    if start < 0:
        return ""
    body = text[start + len(heading) + 5:]
    in_fence, out = False, []
    for line in body.splitlines(keepends=True):
        if line.startswith("```") or line.startswith("~~~"):
            in_fence = not in_fence
        elif not in_fence and line.startswith("## "):
            break
        out.append(line)
    return "".join(out)


def _head(text: str) -> str:
    """The marker line and the title, as written."""
    return "".join(text.splitlines(keepends=True)[:2]) + "\n"


def _footer(text: str) -> str:
    """The `---` rule and the footer line, as written."""
    at = text.rfind("\n---\n")
    return text[at + 1:] if at >= 0 else ""


def docs_floor(text: str, anchors: set[str]) -> tuple[str, bool]:
    """The least `_docs.md` with this page's source fence and these symbol anchors; whether the
    source is embedded."""
    out = [_head(text)]
    for heading in SECTIONS:
        out.append(f"## {heading}\n\n")
        body = _section(text, heading)
        if heading == "File Metadata":
            out += [line + "\n" for line in body.splitlines() if line.startswith(_META)] + ["\n"]
        elif heading == "Original Source":
            fold = body[body.find("<details>"):body.rfind("</details>") + 10] if "<details>" in body else ""
            out.append(fold + "\n\n" if fold else MIN_LINE)
        elif heading == "Detailed Analysis" and anchors:
            out += [f'- <a id="{a}"></a>`{a.partition("-")[2] or a}`\n' for a in sorted(anchors)] + ["\n"]
        elif heading == "Cross-References":
            out += [line + "\n" for line in body.splitlines() if line.startswith(_XREF)] + ["\n"]
        else:
            out.append(MIN_LINE)
    out.append(_footer(text))
    return "".join(out), "<details>" in _section(text, "Original Source")


def kw_floor(text: str) -> tuple[str, dict[str, set[str]]]:
    """The least `_kw.md` with this page's keywords, and the anchors it links to, by page name."""
    out = [_head(text), "## File Information\n\n"]
    out += [line + "\n" for line in _section(text, "File Information").splitlines() if line.startswith("- ")]
    out.append("\n## Keywords Extracted\n\n")
    targets: dict[str, set[str]] = collections.defaultdict(set)
    for line in _section(text, "Keywords Extracted").splitlines():
        name = _NAME.match(line)
        links = _LINK.findall(line)
        for link in links:
            page, _, anchor = link.partition("#")
            if anchor and anchor != "original-source":
                targets[page.removeprefix("./")].add(anchor)
        if name and links:
            out.append(f"- **`{name.group(1)}`**: " + ", ".join(f"[docs]({link})" for link in links) + "\n")
        elif line.startswith("### ") or (line and not line.startswith(("- ", "*"))):
            out.append(("" if out[-1].endswith("\n\n") else "\n") + line + "\n\n")  # a kind, identifiers
    out.append("\n## Keyword \u2192 Section Map\n\n")
    out += [line + "\n" for line in _section(text, "Keyword \u2192 Section Map").splitlines() if line.startswith("- ")]
    return "".join(out) + "\n" + _footer(text), targets


def folder_floor(folder: Path, index_text: str) -> tuple[str, str]:
    """The least `index.md` and `doc.md` of a folder: a line per file and sub-folder."""
    head, footer = _head(index_text), _footer(index_text)
    lines = [f"- [`{d.name}/`]({d.name}/index.md)\n" for d in folder.iterdir() if (d / "index.md").is_file()]
    lines += [f"- [`{p.name[:-8]}`]({p.name})\n" for p in folder.glob("*_docs.md")]
    others = _section(index_text, "Other Files").split("<details>")[0]
    lines += ["- `" + line.split("`")[1] + "`: " + MIN_LINE.strip() + "\n"
              for line in others.splitlines() if line.startswith("- `")]
    doc_head = head.replace("# Index: ", "# Folder Documentation: ", 1)
    return head + "".join(lines) + "\n" + footer, doc_head + MIN_LINE * 3 + footer


def _on_disk(n: int, block: int) -> int:
    return -(-n // block) * block


def floor(out: Path, sources: Path | None = None) -> dict[str, dict[str, int]]:
    """Pages, apparent and on-disk bytes of the floor by page kind, and `strict` (every source embedded)."""
    block = os.statvfs(out).f_bsize
    found: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    docs_pages: list[Path] = []
    wanted: dict[Path, set[str]] = collections.defaultdict(set)

    def add(kind: str, text: str) -> None:
        n = len(text.encode())
        found[kind].update(pages=1, apparent=n, allocated=_on_disk(n, block))

    for dirpath, _, files in os.walk(out):
        here = Path(dirpath)
        for f in files:
            if f.endswith("_kw.md"):
                text, targets = kw_floor((here / f).read_text(encoding="utf-8"))
                add("_kw.md", text)
                for page, anchors in targets.items():
                    wanted[Path(os.path.normpath(here / page))] |= anchors
            elif f.endswith("_docs.md"):
                docs_pages.append(here / f)
            elif f.startswith(".repodoc-manifest"):
                st = (here / f).stat()
                found["manifest"].update(pages=1, apparent=st.st_size, allocated=_on_disk(st.st_size, block))
        if "index.md" in files:
            index, doc = folder_floor(here, (here / "index.md").read_text(encoding="utf-8"))
            add("index.md", index)
            add("doc.md", doc)
    for page in docs_pages:
        text, embedded = docs_floor(page.read_text(encoding="utf-8"), wanted.get(page, set()))
        add("_docs.md", text)
        n = len(text.encode())
        src = None if sources is None else sources / page.relative_to(out).as_posix()[: -len("_docs.md")]
        if not embedded and src is not None and src.is_file():  # strict: this source in its fold too
            n += src.stat().st_size + len(_FOLD.format(f"{src.stat().st_size:,}").encode())
        found["_docs.md strict"].update(pages=1, apparent=n, allocated=_on_disk(n, block))
    return {k: dict(v) for k, v in found.items()}


def total(kinds: dict[str, dict[str, int]], strict: bool = False) -> tuple[int, int]:
    """(apparent, on disk) of the floor; `strict`: with every source embedded whole."""
    drop = "_docs.md" if strict else "_docs.md strict"
    rows = [v for k, v in kinds.items() if k != drop]
    return sum(v["apparent"] for v in rows), sum(v["allocated"] for v in rows)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--sources", type=Path)
    args = parser.parse_args()
    kinds = floor(args.out, args.sources)
    for kind, v in sorted(kinds.items()):
        print(f"{kind}: {v['pages']:,} pages, {v['apparent'] / 1e3:,.1f} KB apparent, "
              f"{v['allocated'] / 1e3:,.1f} KB on disk")
    print("floor: {:,} bytes apparent, {:,} on disk".format(*total(kinds)))
    print("strict floor (every source embedded): {:,} bytes apparent, {:,} on disk".format(*total(kinds, True)))
