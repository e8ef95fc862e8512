"""Long lists (`long_list` in `_macros.md.j2`): the most relevant 20, the count and breakdown by
folder, then every entry folded in <details>; nothing dropped, and the page still parses."""

from __future__ import annotations

import re

from helpers import DOCS_SECTIONS, foreign_html, md_tokens, page_errors

from repodoc_lsp.analysis import analyse_source
from repodoc_lsp.analysis.relations import Relations
from repodoc_lsp.render.pages import Renderer, Site, list_groups, nearest

_MACRO = '{% from "_macros.md.j2" import long_list %}{{ long_list(items, "files") }}'


def _items(paths: list[str]) -> list[dict]:
    return [{"text": p, "short": p.rsplit("/", 1)[-1], "key": p, "href": f"{p}.md",
             "group": "`" + (p.rsplit("/", 1)[0] + "/" if "/" in p else "./") + "`", "note": ""} for p in paths]


def _render(items: list[dict]) -> str:
    return Renderer().env.from_string(_MACRO).render(items=items)


def _links(text: str) -> list[str]:
    return re.findall(r"\]\(([^)]*)\)", text)


def test_a_short_list_is_every_entry_once_in_order() -> None:
    paths = [f"z/f{i:02}.py" for i in range(20, 0, -1)]
    out = _render(_items(paths))
    assert _links(out) == [f"{p}.md" for p in paths]
    assert "<details>" not in out and "in all" not in out


def test_a_long_list_shows_20_then_count_and_folders_then_all_folded() -> None:
    paths = [f"a/x{i:02}.py" for i in range(30)] + [f"b/y{i}.py" for i in range(10)] + [f"r{i}.py" for i in range(5)]
    paths = paths[::-1]  # the order given is the order of relevance
    out = _render(_items(paths))
    shown, folded = out.split("<details>", 1)
    assert _links(shown) == [f"{p}.md" for p in paths[:20]]
    assert "45 files in all; by folder: `a/` 30, `b/` 10, `./` 5." in shown
    assert folded.startswith("<summary>All 45 files</summary>\n\n") and folded.rstrip().endswith("</details>")
    assert sorted(_links(folded)) == sorted(f"{p}.md" for p in paths)  # nothing dropped, none twice
    rows = [line for line in folded.splitlines() if line.startswith("- ")]
    assert [r.split(":", 1)[0] for r in rows] == ["- `./`", "- `a/`", "- `b/`"]  # one line per folder
    assert "[x00.py](a/x00.py.md), [x01.py](a/x01.py.md)" in folded
    page = f"# T\n\n## S\n\n{out}\n\n## E\n"
    assert foreign_html(page) == []
    bullets = [t for t in md_tokens(page) if t.type == "list_item_open"]
    assert len(bullets) == 20 + 3


def test_groups_by_size_and_by_name() -> None:
    items = _items(["b/1.py", "a/1.py", "b/2.py", "c/1.py", "b/0.py"])
    assert [(g["name"], [i["key"] for i in g["entries"]]) for g in list_groups(items)] == [
        ("`b/`", ["b/0.py", "b/1.py", "b/2.py"]), ("`a/`", ["a/1.py"]), ("`c/`", ["c/1.py"])]
    assert [g["name"] for g in list_groups(items, "name")] == ["`a/`", "`b/`", "`c/`"]


def test_nearest_puts_the_same_package_first() -> None:
    assert nearest("torch/nn/modules/linear.py", ["test/test_nn.py", "torch/ao/q.py", "torch/nn/init.py",
                                                  "torch/nn/modules/conv.py", "torch/a/b/c.py", "setup.py"]) == [
        "torch/nn/modules/conv.py", "torch/nn/init.py", "torch/ao/q.py", "torch/a/b/c.py", "setup.py",
        "test/test_nn.py"]


def _site(files: dict[str, str]) -> Site:
    facts = {rel: analyse_source(rel, text.encode()) for rel, text in files.items()}
    folders = {""} | {rel.rsplit("/", 1)[0] for rel in files if "/" in rel}
    return Site.build(project="p", root="/r", out="/r/docs", embed_max=10**6,
                      relations=Relations({rel: f.imports for rel, f in facts.items()}), facts=facts,
                      sizes={rel: len(t) for rel, t in files.items()}, folders=folders)


def test_a_file_imported_by_25_files_folds_its_importers_and_related_files() -> None:
    files = {"pkg/__init__.py": '"""The package."""\n', "pkg/core.py": '"""Core."""\nX = 1\n'}
    files |= {f"pkg/user{i:02}.py": "from pkg import core\n" for i in range(15)}
    files |= {f"app/use{i:02}.py": "from pkg.core import X\n" for i in range(10)}
    site = _site(files)
    page = Renderer().file_docs(site, "pkg/core.py", files["pkg/core.py"])
    assert page_errors(page, DOCS_SECTIONS) == []
    imported_by = page.split("### Imported by", 1)[1].split("\n## ", 1)[0]
    shown, folded = imported_by.split("<details>", 1)
    assert len(_links(shown)) == 20 and all("user" in link for link in _links(shown)[:15])  # nearest first
    assert "25 importing files in all; by folder: `pkg/` 15, `app/` 10." in shown
    assert len(_links(folded)) == 25
    related = page.split("## Related Files", 1)[1].split("\n## ", 1)[0]
    # the 25 importers are listed above (Imported by): counted and linked, not listed twice
    assert _links(related) == ["index.md", "#imported-by"] and "<details>" not in related
    assert "- **Same folder**: 1 other file, each with its purpose in the [folder index](index.md).\n" in related
    assert "Listed above: 25 importing it ([Imported by](#imported-by)).\n" in related
    assert '<a id="imported-by"></a>' in page


def test_a_folder_ranking_shows_20_and_links_to_the_complete_lists_on_the_file_pages() -> None:
    files = {"pkg/__init__.py": "", "pkg/a.py": "".join(f"def fa{i:02}(): pass\n" for i in range(15)),
             "pkg/b.py": "".join(f"def fb{i:02}(): pass\n" for i in range(10))}
    files |= {f"app/use{i:02}.py": "from pkg import a\n" for i in range(18)}
    files |= {f"lib/use{i:02}.py": "from pkg import a, b\n" for i in range(4)}
    site = _site(files)
    doc = Renderer().folder_doc(site, "pkg")
    assert page_errors(doc, ["Purpose", "Contents", "Main Classes", "Main Functions", "Dependencies", "Used By"]) == []
    functions = doc.split("## Main Functions", 1)[1].split("\n## ", 1)[0]
    assert len(_links(functions.split("functions in all")[0])) == 20 and "<details>" not in doc
    assert ("25 functions in all.\nEach is listed in its file's Detailed Analysis: [`a.py`]"
            "(a.py_docs.md#detailed-analysis) 15, [`b.py`](b.py_docs.md#detailed-analysis) 10.") in functions
    used_by = doc.split("## Used By", 1)[1].split("\n## ", 1)[0]
    assert len(_links(used_by.split("importing files in all")[0])) == 20
    assert ("22 importing files in all; by folder: `app/` 18, `lib/` 4.\nEach is listed in the Imported by of the "
            "files it imports: [`a.py`](a.py_docs.md#imported-by) 22, [`b.py`](b.py_docs.md#imported-by) 4."
            ) in used_by


def test_import_diagram_keeps_the_most_connected_files_and_counts_the_rest() -> None:
    from repodoc_lsp.render.pages import import_diagram
    edges = {("a/hub.py", f"a/m{i:02}.py") for i in range(15)} | {("a/m00.py", "a/m01.py"), ('a/q"<x>.py', "a/hub.py")}
    d = import_diagram(edges, cap=5)
    assert d is not None and d["files"] == 5
    assert d["left_files"] == 17 - 5
    nodes = re.findall(r'^  (f\d+)\["([^"]*)"\]$', d["text"], re.M)
    arrows = re.findall(r"^  (f\d+) --> (f\d+)$", d["text"], re.M)
    names = dict(nodes)
    assert {"hub.py", "m00.py", "m01.py"} <= set(names.values())  # the most connected
    assert d["left_edges"] == len(edges) - len(arrows)
    assert all(a in names and b in names for a, b in arrows)
    assert import_diagram(set()) is None
    odd = import_diagram({('a/q"<x>`.py', "a/b.py")})
    assert odd is not None and 'f1["q#34;#60;x#62;#96;.py"]' in odd["text"]  # no quote, markup or fence


def test_related_files_count_the_folder_and_what_the_page_lists_above() -> None:
    """Related Files names no file twice: the files it imports, its tests and its importers are
    listed above (Dependencies, Testing & Usage, Imported by) and only counted here; its folder's
    other files are counted and linked to the folder index, which lists each with its purpose
    (their names on every page of a folder were 2-7% of a small project's tree)."""
    files = {"pkg/__init__.py": '"""The package."""\n', "pkg/core.py": "from pkg import util\n",
             "pkg/util.py": "X = 1\n", "tests/test_core.py": "import pkg.core\n"}
    files |= {f"pkg/m{i:02}.py": "Y = 2\n" for i in range(22)}
    page = Renderer().file_docs(_site(files), "pkg/core.py", files["pkg/core.py"])
    assert page_errors(page, DOCS_SECTIONS) == []
    related = page.split("## Related Files\n\n", 1)[1].split("\n## ", 1)[0]
    same, above = related.split("\n\n", 1)
    assert same == "- **Same folder**: 23 other files, each with its purpose in the [folder index](index.md)."
    assert "util.py" not in related and "test_core" not in related and "m00" not in related
    assert above == "Listed above: 1 it imports ([Dependencies](#dependencies)), 1 test (Testing & Usage).\n"


def test_a_folder_index_says_what_each_sub_folder_is_for() -> None:
    files = {"__init__.py": "", "nn/__init__.py": '"""Neural network layers."""\n',
             "docs/README.md": "# Docs\n\nThe user guide of the project, in Markdown.\n",
             "gathered/__init__.py": "from .a import A, B, C\n", "gathered/a.py": "class A: pass\nB = C = 1\n",
             "lib/core.py": "X = 1\n", "lib/util.py": "from lib import core\n", "app/main.py": "from lib import core\n",
             "empty/data.txt": "x\n"}
    index = Renderer().folder_index(_site(files), "")
    folders = index.split("## Folders", 1)[1].split("\n## ", 1)[0]
    assert "- [`nn/`](nn/index.md): 1 file. Neural network layers.\n" in folders
    assert "- [`docs/`](docs/index.md): 1 file. The user guide of the project, in Markdown.\n" in folders
    assert "- [`gathered/`](gathered/index.md): 2 files. Gathers `A`, `B`, `C` from `.a` into the package.\n" \
        in folders
    assert "- [`lib/`](lib/index.md): 2 files. Most imported: `core.py`.\n" in folders
    assert "- [`empty/`](empty/index.md): 1 file. Holds `data.txt`.\n" in folders


def test_a_folder_without_a_package_docstring_is_described_by_its_readme_s_first_paragraph() -> None:
    files = {"README.md": "[![CI](https://x/b.svg)](https://x)\n\n# $ tool_\n\nTool builds things fast and well.\n",
             "a.py": ""}
    doc = Renderer().folder_doc(_site(files), "")
    purpose = doc.split("## Purpose", 1)[1].split("\n## ", 1)[0]
    assert purpose.strip().startswith("Tool builds things fast and well.\n") and "README.md_docs.md" in purpose


def test_a_folder_doc_names_an_imported_empty_module_without_a_link() -> None:
    """An empty module has no page (`own_pages`): where `doc.md` says which files' Imported by list its
    22 importers, the empty one is named, not linked to a page that is not written (PyTorch's
    `_thread_safe_fork.py`)."""
    files = {"pkg/side.py": "", "pkg/core.py": "X = 1\n"}
    files |= {f"app/u{i:02}.py": "import pkg.side\nimport pkg.core\n" for i in range(22)}
    doc = Renderer().folder_doc(_site(files), "pkg")
    listed = doc.split("Each is listed in the Imported by of the files it imports: ", 1)[1].split("\n", 1)[0]
    assert listed == "[`core.py`](core.py_docs.md#imported-by) 22, `side.py` 22."
