"""Every generated page read as CommonMark (markdown-it-py), independently of repodoc's code.

    python bench/check_pages.py [DOCS]    # DOCS: a generated tree; default: PyTorch generated now

A `_docs.md` must have one `#` title and exactly the 13 `##` sections of the format in order, a
`_kw.md` its 3, folder pages one `#` title; no page may hold raw HTML other than repodoc's marker
and anchors. Without DOCS the corpus (bench/corpus.py) is hard-linked into a temporary folder and
generated there with an empty cache. Prints the count of broken pages and the first problems.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH), str(BENCH.parent / "tests")]

from corpus import ensure_corpus  # noqa: E402
from helpers import DOCS_SECTIONS, KW_SECTIONS, foreign_html, md_headings, page_errors  # noqa: E402


def problems(page: Path) -> list[str]:
    text = page.read_text(encoding="utf-8")
    if page.name.endswith("_docs.md"):
        return page_errors(text, DOCS_SECTIONS)
    if page.name.endswith("_kw.md"):
        return page_errors(text, KW_SECTIONS)
    titles = sum(1 for level, _ in md_headings(text) if level == 1)
    return [f"html {h!r}" for h in foreign_html(text)] + ([] if titles == 1 else [f"{titles} titles"])


def generate(tmp: Path) -> Path:
    workspace = tmp / "ws"
    workspace.mkdir()
    subprocess.run(["cp", "-al", str(ensure_corpus()), str(workspace / "torch")], check=True, timeout=600)
    env = {**os.environ, "REPODOC_CACHE_DIR": str(tmp / "cache")}
    subprocess.run([sys.executable, "-m", "repodoc_lsp", "generate", str(workspace), "--quiet"], env=env,
                   check=True, timeout=1800)
    return workspace / "docs"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("docs", nargs="?", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="repodoc-pages-") as tmp:
        docs = args.docs or generate(Path(tmp))
        pages = sorted(docs.rglob("*.md"))
        broken = {page: found for page in pages if (found := problems(page))}
    print(f"{len(pages):,} pages, {len(broken):,} with broken structure")
    for page, found in list(broken.items())[:20]:
        print(f"  {page.relative_to(docs)}: {'; '.join(found[:3])}")
    return 1 if broken else 0


if __name__ == "__main__":
    raise SystemExit(main())
