"""The renderer: one Jinja2 environment, and the page of each kind from what its view reads.

Each page kind has a gather function (`gather.GATHER`) that collects everything its view reads
besides the site's constants and the facts of the files it names (by digest); the view (one module
each: `file_page`, `keyword_page`, `folder_pages`, `llms`) reads only that, so a digest of it is
the page's key: a page changes exactly when its key does.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path

from repodoc_lsp import MARKER, __version__
from repodoc_lsp.analysis.model import FileFacts
from repodoc_lsp.render import llms
from repodoc_lsp.render import markdown as md
from repodoc_lsp.render.docstrings import docstring_markdown, docstring_rest, summary_line
from repodoc_lsp.render.environment import GuardedTemplate, compiled_cache, load, make_environment
from repodoc_lsp.render.file_page import file_docs, reads_source
from repodoc_lsp.render.fit import PAGE_LIMIT
from repodoc_lsp.render.folder_pages import MAIN_LISTED, doc_page, import_diagram, index_page
from repodoc_lsp.render.gather import GATHER, anchor_state, gather_docs
from repodoc_lsp.render.keyword_page import file_kw, link_list
from repodoc_lsp.render.links import LIST_LIMIT, folder_label, link_text, list_groups, nearest, signature_code
from repodoc_lsp.render.site import PATHS, Page, Site, Where, view_files, where_of
from repodoc_lsp.render.stamp import render_stamp
from repodoc_lsp.words import grouped, plural

# The names other packages read here (the pipeline, the MCP server, tests and benchmarks).
__all__ = ["GATHER", "INCLUDED", "LIST_LIMIT", "PAGE_LIMIT", "PAGE_TEMPLATES", "Page", "Renderer", "Site", "Where",
           "anchor_state", "folder_label", "gather_docs", "import_diagram", "link_text", "list_groups", "nearest",
           "view_files", "where_of"]

# The page templates (by kind) and the templates they include or import: `precompile` compiles both (the
# entries' templates, `_class.md.j2` ..., are for a person's page template: ours call their macros).
PAGE_TEMPLATES = ("file_kw", "file_docs", "file_part", "file_more", "folder_index", "folder_doc")
INCLUDED = ("_macros.md.j2", "_function.md.j2", "_members.md.j2", "_class.md.j2", "_local_class.md.j2")


class Renderer:
    def __init__(self, templates: str | Path | None = None, *, lazy: bool = False, worker: bool = False) -> None:
        """`lazy`: the templates compile when first needed, not now (repodoc's own, which always
        compile: a run whose tree is intact renders nothing; a person's are compiled at once, so
        that one that does not compile stops the run before anything is written). `worker`: a render
        worker's (its parent warned of the person's templates already)."""
        self.templates = templates  # a render worker makes its own Renderer of them
        self.worker = worker
        self.env = make_environment(templates)
        self.env.filters.update(code=md.code, esc=md.esc, fence=md.fence, linktext=link_text,
                                docmd=docstring_markdown, firstline=summary_line,
                                inline=md.inline, fragment=md.fragment, xlinks=md.link_code_spans, groups=list_groups,
                                docrest=docstring_rest, sigcode=signature_code,
                                kb=md.size_short, plural=plural, grouped=grouped,
                                # a list joined by one call each, not a template loop over it
                                codes=md.codes, linelinks=md.lines_linked, namelinks=md.name_links, kwlinks=link_list)
        self.env.globals.update(marker=MARKER, version=__version__)
        self._loaded: dict[str, GuardedTemplate] | None = None
        if not lazy:
            self.ready()

    def ready(self) -> None:
        """Compile the templates (once); one that does not compile is a TemplateFailure."""
        if self._loaded is None:
            self._loaded = load(self.env, PAGE_TEMPLATES, warn=not self.worker)

    @classmethod
    def shared(cls, templates: str | Path | None) -> Renderer:
        """A renderer of `templates`: for repodoc's own, the one this process compiled already
        (`precompile`: the render workers' fork server compiles them once, before it forks, so
        that no worker compiles them again); a person's are compiled anew."""
        return cls(templates, worker=True) if templates else _own_renderer()

    @property
    def compiled_in(self) -> str:
        """The folder of this renderer's compiled templates (`compiled_cache`), "" when it keeps none."""
        return str(getattr(self.env.bytecode_cache, "directory", ""))  # a FileSystemBytecodeCache's

    @classmethod
    def precompile(cls, compiled_in: str = "") -> None:
        """Compile repodoc's own templates, those the page templates include too, for this process
        and the processes it forks (`shared`); read from and kept in `compiled_in` (`compiled_cache`):
        the next run's own renderer, after an edit, then loads them instead of compiling them."""
        renderer = cls.shared(None)
        if compiled_in:
            renderer.env.bytecode_cache = compiled_cache(Path(compiled_in), render_stamp())
        renderer.ready()
        for name in INCLUDED:
            renderer.env.get_template(name)

    @property
    def _templates(self) -> dict[str, GuardedTemplate]:
        self.ready()
        assert self._loaded is not None
        return self._loaded

    def reads_source(self, where: Where, inputs: dict) -> bool:
        """Whether the docs page whose view reads `inputs` (`gather_docs`) is given its file's text
        (`file_page.reads_source`)."""
        return reads_source(not self.templates, where, inputs)

    def render(self, site: Site, kind: str, subject: str, text: str | None = None, inputs: dict | None = None) -> str:
        """The page `kind` of `subject`: its view reads the site's constants, what
        `GATHER[kind]` gathers (`inputs`, when the caller has gathered them), and the facts of the
        files named there, nothing else."""
        if inputs is None:
            inputs = GATHER[kind](site, subject)
        return self.render_view(where_of(site), kind, subject, inputs, site.facts, text)

    def render_view(self, where: Where, kind: str, subject: str, inputs: dict, facts: Mapping[str, FileFacts],
                    text: str | None = None) -> str:
        """The page `kind` of `subject` from what its view reads: `inputs` (`GATHER[kind]`) and
        `facts` holding those of `view_files(kind, subject, inputs)` (a render worker is sent no more)."""
        return self.render_pages(where, kind, subject, inputs, facts, text)[0][1]

    def render_pages(self, where: Where, kind: str, subject: str, inputs: dict, facts: Mapping[str, FileFacts],
                     text: str | None = None) -> list[tuple[str, str]]:
        """`render_view`'s page and its part pages (`parts.py`: a file page over the size budget),
        as (path, Markdown), the page first."""
        if kind == "docs":
            return file_docs(self._templates, where, subject, inputs, facts[subject], text)
        return [(PATHS[kind](subject), self._render_one(where, kind, subject, inputs, facts))]

    def _render_one(self, where: Where, kind: str, subject: str, inputs: dict,
                    facts: Mapping[str, FileFacts]) -> str:
        if kind == "kw":
            return file_kw(self._templates, where, subject, inputs, facts[subject])
        named = {rel: facts[rel] for rel in view_files(kind, subject, inputs)}
        if kind == "index":
            return index_page(self._templates, where, subject, inputs, named)
        if kind == "llms":
            return llms.render_llms(where.project, inputs, named)
        if kind == "llms-full":
            return llms.render_llms_full(where.project, inputs, named)
        # repodoc's own template shows the summaries of the first main classes and functions only
        return doc_page(self._templates, where, subject, inputs, named, None if self.templates else MAIN_LISTED)

    def file_kw(self, site: Site, rel: str) -> str:
        return self.render(site, "kw", rel)

    def file_docs(self, site: Site, rel: str, text: str | None) -> str:
        return self.render(site, "docs", rel, text)

    def folder_index(self, site: Site, folder: str) -> str:
        return self.render(site, "index", folder)

    def folder_doc(self, site: Site, folder: str) -> str:
        return self.render(site, "doc", folder)


@functools.cache
def _own_renderer() -> Renderer:
    """`Renderer.shared(None)`: repodoc's own templates, compiled once per process, when first needed."""
    return Renderer(None, lazy=True)
