"""`llms.txt` and `llms-full.txt` at the root of the tree (the llmstxt.org convention): pages like
the others, each keyed by what its view reads (`pages.gather_llms`, `pages.gather_llms_full`).

`llms.txt`: the project's name as H1, a one-line summary as a blockquote, `## Folders` (the
folder docs of the top of the tree, most files first), `## Main pages` (the most imported files'
pages, each with its purpose line) and `## Optional` (the other folders' indexes and files' pages,
up to a limit). `llms-full.txt` (the `llms-full-max-bytes` setting): every file's purpose and
its classes and functions with their first docstring sentence, most imported files first, cut at
that many bytes. Both start with the marker line every generated page has (the writer's rule);
the H1 follows it.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping

from repodoc_lsp import MARKER, __version__
from repodoc_lsp.analysis.model import FileFacts, SymbolKind
from repodoc_lsp.render import markdown as md
from repodoc_lsp.render.docstrings import summary_line
from repodoc_lsp.render.paths import docs_page, folder_doc, folder_index
from repodoc_lsp.render.purpose import file_purpose
from repodoc_lsp.words import plural

LLMS = "llms.txt"
LLMS_FULL = "llms-full.txt"
MAIN_FILES = 30  # files under `## Main pages`
TOP_FOLDERS = 40  # folders under `## Folders` (depth 2 at most)
OPTIONAL_LINKS = 400  # links under `## Optional`
FULL_FILES = 400  # files whose facts llms-full.txt reads at most


def _purpose(rel: str, facts: FileFacts) -> str:
    purpose = file_purpose(rel, facts)
    return md.inline(purpose.text) if not purpose.derived else f"{md.inline(purpose.text)} (from {purpose.origin})"


def render_llms(project: str, inputs: dict, facts: Mapping[str, FileFacts]) -> str:
    lines = [MARKER, f"# {md.esc(project)}", "",
             f"> Generated documentation of {md.esc(project)}: {plural(inputs['n_files'], 'file')} in "
             f"{plural(inputs['n_folders'], 'folder')}, a page per source file and per folder (by repodoc-lsp "
             f"{__version__}).", "",
             "Each source file has a `_docs.md` page (what it defines, imports and is used by) and a `_kw.md` page "
             "(its keywords), and so has each Markdown or reST document with a heading or prose; each folder an "
             "`index.md` (its contents, other files a line each) and a `doc.md` (an overview).", "",
             "## Folders", "", f"- [{md.esc(project)}]({folder_doc('')}): the root folder's overview"]
    for folder, n in inputs["folders"]:
        lines.append(f"- [{md.esc(folder)}/]({md.href(folder_doc(folder))}): {plural(n, 'file')}")
    lines += ["", "## Main pages", ""]
    for rel, _digest in inputs["files"]:
        lines.append(f"- [{md.esc(rel)}]({md.href(docs_page(rel))}): {_purpose(rel, facts[rel])}")
    optional = inputs["optional"]
    if optional:
        lines += ["", "## Optional", ""]
        lines += [f"- [{md.esc(page)}]({md.href(page)})" for page in optional[:OPTIONAL_LINKS]]
        if len(optional) > OPTIONAL_LINKS:
            lines.append(f"- [{plural(len(optional) - OPTIONAL_LINKS, 'more page')}]({folder_index('')}): "
                         "from the folder indexes")
    return "\n".join(lines) + "\n"


def render_llms_full(project: str, inputs: dict, facts: Mapping[str, FileFacts]) -> str:
    cap = inputs["max_bytes"]
    head = [MARKER, f"# {md.esc(project)}", "",
            f"> Generated documentation of {md.esc(project)}, {plural(inputs['n_files'], 'file')}: each file's "
            f"purpose, classes and functions, the most imported first (at most {cap:,} bytes)."]
    text = "\n".join(head) + "\n"
    size = len(text.encode())
    shown = 0
    for rel, _digest in inputs["files"]:
        block = _file_block(rel, facts[rel])
        n = len(block.encode())
        if size + n > cap:
            break
        text += block
        size += n
        shown += 1
    rest = inputs["n_files"] - shown
    if rest:
        text += f"\n*{plural(rest, 'more file')}: see [llms.txt]({LLMS}) and the folder indexes.*\n"
    return text


def _file_block(rel: str, facts: FileFacts) -> str:
    lines = ["", f"## {md.esc(rel)}", "", f"[{md.esc(posixpath.basename(rel))}]({md.href(docs_page(rel))}): "
                                          f"{_purpose(rel, facts)}"]
    symbols = [s for s in facts.symbols if s.kind in (SymbolKind.CLASS, SymbolKind.FUNCTION, SymbolKind.METHOD)
               and not s.name.startswith("_")]
    if symbols:
        lines.append("")
    for s in symbols:
        kind = s.word or ("class" if s.kind is SymbolKind.CLASS else "def")  # `struct`, `fn`... in other languages
        head = md.code(f"{kind} {s.qualname}{s.signature if s.kind is not SymbolKind.CLASS else ''}")
        said = summary_line(s.docstring) if s.docstring else ""
        lines.append(f"- {head}" + (f": {md.inline(said)}" if said else ""))
    return "\n".join(lines) + "\n"
