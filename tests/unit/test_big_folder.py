"""A folder of thousands of files: its index is bounded and still links every file, and each file
page looks at a bounded part of the folder (no step walks every sibling for every page)."""

from __future__ import annotations

import functools
import re

from helpers import page_errors

from repodoc_lsp.analysis import analyse_source
from repodoc_lsp.analysis.relations import Relations
from repodoc_lsp.render.pages import GATHER, Renderer, Site

_N = 3_000


@functools.cache
def _folder_site() -> tuple[Site, dict[str, str]]:
    module = '"""A module of a generated package."""\nX = 1\n'
    files = dict.fromkeys((f"pkg/mod_{i:04}.py" for i in range(_N)), module)
    files["pkg/core.py"] = '"""The core."""\nfrom pkg import mod_0001\n'
    one = analyse_source("m.py", module.encode())
    facts = {rel: one if text == module else analyse_source(rel, text.encode()) for rel, text in files.items()}
    site = Site.build(project="p", root="/r", out="/r/docs", embed_max=0,
                      relations=Relations({rel: f.imports for rel, f in facts.items()}), facts=facts,
                      sizes={rel: len(t) for rel, t in files.items()}, folders={"", "pkg"})
    return site, files


def test_the_index_of_a_3000_file_folder_is_bounded_and_links_every_file() -> None:
    """Each file was a line with its keywords link and purpose in the folded list (8,000: 910 KB)."""
    site, files = _folder_site()
    page = Renderer().folder_index(site, "pkg")
    assert len(page.encode()) < 50 * len(files) + 10_000  # about 45 bytes a file, 3,001 files: < 160 KB
    assert page_errors(page, ["Folders", "Files"]) == []
    targets = set(re.findall(r"\]\(([^)#]*)\)", page))
    assert {f"{rel.split('/', 1)[1]}_docs.md" for rel in files} <= targets  # each file's page, beside it
    assert "3,001 files in all" in page and "<details><summary>All 3,001 files</summary>" in page


def test_a_file_page_of_a_big_folder_reads_a_bounded_part_of_it() -> None:
    """Its Related Files counts the folder's other files and links the folder index, which lists them."""
    site, _files = _folder_site()
    inputs = GATHER["docs"](site, "pkg/core.py")
    assert inputs["siblings"] == _N - 1  # all but itself and the module it imports
    page = Renderer().render(site, "docs", "pkg/core.py", '"""The core."""\nfrom pkg import mod_0001\n', inputs)
    related = page.split("## Related Files\n\n", 1)[1].split("\n## ", 1)[0]
    assert "](mod_0002" not in related and f"{_N - 1:,}" in related and "(index.md)" in related
