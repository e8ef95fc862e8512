"""Every generated page read as CommonMark (markdown-it-py), independently of repodoc's code.

    python bench/check_pages.py [DOCS] [--sources DIR]   # DOCS: a generated tree; default: PyTorch generated now

A `_docs.md` must have one `#` title and exactly the 13 `##` sections of the format in order, a
`_kw.md` its 3, folder pages one `#` title; no page may hold raw HTML other than repodoc's marker,
anchors and folds. Every relative link must name a file that exists, and its `#fragment` an
anchor of that page (an `<a id>` or a heading's GitHub slug). Without DOCS the corpus
(bench/corpus.py) is hard-linked into a temporary folder and generated there with an empty cache.

Prints: pages with broken structure, broken links, the largest page and the pages over 100 KB
(100,000 bytes), the tree's bytes against the sources' (`--sources`, default DOCS's parent less
DOCS), where the bytes go (by page kind and by `##` section of the file pages), and the file pages
whose File Purpose is empty or says the file does not say. Exit 1 if a page is broken or a link is.
"""

from __future__ import annotations

import argparse
import os
import posixpath
import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from urllib.parse import unquote

BENCH = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH), str(BENCH.parent / "tests")]

from corpus import ensure_corpus  # noqa: E402
from helpers import DOCS_SECTIONS, KW_SECTIONS, foreign_html, md_tokens  # noqa: E402

PAGE_LIMIT = 100_000
_ANCHOR = re.compile(r'<a id="([^"<>&]*)">')
_NO_PURPOSE = "No module docstring"


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation but `-` and `_` dropped, spaces as `-`."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def kind_of(name: str) -> str:
    return "docs" if name.endswith("_docs.md") else "kw" if name.endswith("_kw.md") else name


def read(page: Path) -> tuple[str, list, list[tuple[int, str]]]:
    text = page.read_text(encoding="utf-8")
    tokens = md_tokens(text)
    headings = [(int(t.tag[1]), tokens[i + 1].content) for i, t in enumerate(tokens) if t.type == "heading_open"]
    return text, tokens, headings


def structure(name: str, text: str, headings: list[tuple[int, str]]) -> list[str]:
    found = [f"{sum(1 for level, _ in headings if level == 1)} titles"] \
        if sum(1 for level, _ in headings if level == 1) != 1 else []
    h2 = [t for level, t in headings if level == 2]
    expected = DOCS_SECTIONS if name.endswith("_docs.md") else KW_SECTIONS if name.endswith("_kw.md") else None
    if expected is not None and h2 != expected:
        found.append(f"sections {h2}")
    return found + [f"html {h!r}" for h in foreign_html(text)]


def anchors(text: str, headings: list[tuple[int, str]]) -> set[str]:
    return set(_ANCHOR.findall(text)) | {slug(h) for _, h in headings}


def links(tokens: list) -> list[str]:
    return [t.attrs["href"] for t in tokens if t.type == "link_open" and isinstance(t.attrs.get("href"), str)]


def purpose_of(text: str) -> str:
    body = text.split("\n## File Purpose\n", 1)[1].split("\n## ", 1)[0].strip()
    return body.split("\n\n", 1)[0].strip()


def generate(tmp: Path) -> Path:
    workspace = tmp / "ws"
    workspace.mkdir()
    subprocess.run(["cp", "-al", str(ensure_corpus()), str(workspace / "torch")], check=True, timeout=600)
    env = {**os.environ, "REPODOC_CACHE_DIR": str(tmp / "cache")}
    subprocess.run([sys.executable, "-m", "repodoc_lsp", "generate", str(workspace), "--quiet"], env=env,
                   check=True, timeout=3600)
    return workspace / "docs"


def source_bytes(sources: Path, docs: Path) -> int:
    total = 0
    for dirpath, dirnames, filenames in os.walk(sources):
        here = Path(dirpath)
        dirnames[:] = [d for d in dirnames if (here / d).resolve() != docs.resolve() and not d.startswith(".")]
        total += sum((here / f).stat().st_size for f in filenames if (here / f).is_file())
    return total


def check(docs: Path, sources: Path) -> int:
    pages = sorted(docs.rglob("*.md"))
    broken: dict[Path, list[str]] = {}
    bad_links: list[tuple[Path, str]] = []
    sizes: dict[Path, int] = {}
    by_kind: Counter[str] = Counter()
    by_section: Counter[str] = Counter()
    no_purpose: list[Path] = []
    anchor_cache: dict[Path, set[str]] = {}
    hrefs: dict[Path, list[str]] = {}  # links only: a tree's tokens would not fit in memory
    for page in pages:
        text, tokens, headings = read(page)
        sizes[page] = len(text.encode())
        by_kind[kind_of(page.name)] += sizes[page]
        if found := structure(page.name, text, headings):
            broken[page] = found
        anchor_cache[page] = anchors(text, headings)
        hrefs[page] = links(tokens)
        if page.name.endswith("_docs.md"):
            section = ""
            for part in re.split(r"\n(?=## )", text)[1:]:  # a `## ` line of an embedded source stays in its section
                title = part.split("\n", 1)[0][3:]
                section = title if title in DOCS_SECTIONS else section
                by_section[section] += len(part.encode()) + 1
            purpose = purpose_of(text)
            if not purpose or purpose.startswith(_NO_PURPOSE):
                no_purpose.append(page)
    for page, found_links in hrefs.items():
        for href in found_links:
            if re.match(r"[a-z][a-z0-9+.-]*:", href, re.I):
                continue  # http:, mailto: ...: not a page of the tree
            path, _, fragment = href.partition("#")
            target = page if not path else Path(posixpath.normpath(str(page.parent / unquote(path))))
            if not target.exists():
                bad_links.append((page, href))
            elif fragment and target.suffix == ".md" and docs.resolve() in target.resolve().parents:
                if target not in anchor_cache:
                    text, _tokens, headings = read(target)
                    anchor_cache[target] = anchors(text, headings)
                if unquote(fragment) not in anchor_cache[target]:
                    bad_links.append((page, href))
            elif fragment and not re.fullmatch(r"L\d+", fragment):
                bad_links.append((page, href))  # a source file's fragment is a line: #L12
    tree = sum(sizes.values())
    src = source_bytes(sources, docs)
    n_docs = sum(1 for p in pages if p.name.endswith("_docs.md"))
    over = sorted(((n, p) for p, n in sizes.items() if n > PAGE_LIMIT), reverse=True)
    largest = max(sizes.items(), key=lambda item: item[1]) if sizes else None
    print(f"{len(pages):,} pages, {len(broken):,} with broken structure, {len(bad_links):,} broken links")
    if largest:
        print(f"largest page: {largest[0].relative_to(docs)} {largest[1]:,} bytes; "
              f"{len(over):,} pages over {PAGE_LIMIT:,} bytes")
    for n, p in over[:10]:
        print(f"  {n:>9,}  {p.relative_to(docs)}")
    print(f"tree {tree:,} bytes for {src:,} bytes of sources: {tree / max(src, 1):.2f}x")
    print(f"purpose line on {n_docs - len(no_purpose):,} of {n_docs:,} file pages "
          f"({(n_docs - len(no_purpose)) / max(n_docs, 1):.1%})")
    print("bytes by page kind: " + ", ".join(f"{k} {v / 1e6:.2f} MB" for k, v in by_kind.most_common()))
    print("bytes by section of the file pages: "
          + ", ".join(f"{k} {v / 1e6:.2f} MB" for k, v in by_section.most_common()))
    for page, found in list(broken.items())[:20]:
        print(f"  broken {page.relative_to(docs)}: {'; '.join(found[:3])}")
    for page, href in bad_links[:20]:
        print(f"  broken link in {page.relative_to(docs)}: {href}")
    for page in no_purpose[:10]:
        print(f"  no purpose line: {page.relative_to(docs)}")
    return 1 if broken or bad_links else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("docs", nargs="?", type=Path)
    parser.add_argument("--sources", type=Path, help="the workspace whose sources the tree documents")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="repodoc-pages-") as tmp:
        docs = args.docs or generate(Path(tmp))
        return check(docs, args.sources or docs.parent)


if __name__ == "__main__":
    raise SystemExit(main())
