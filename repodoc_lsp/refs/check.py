"""Check a workspace's hand-written docs: which files are docs, their references, the stale ones."""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from repodoc_lsp import MARKER
from repodoc_lsp.analysis.model import FileFacts
from repodoc_lsp.analysis.source import normalise_newlines
from repodoc_lsp.config import Settings
from repodoc_lsp.knowledge.index import KeywordIndex, entries_of
from repodoc_lsp.refs.extract import HISTORY, NAME, Ref, markdown_refs, rest_code_lines, rest_refs
from repodoc_lsp.refs.model import NameLookup, Verdict
from repodoc_lsp.refs.resolve import Resolver
from repodoc_lsp.refs.scope import Kept, NameTable, Words, change_words, docstrings, name_table
from repodoc_lsp.store.ignore import gitignore_spec
from repodoc_lsp.store.workspace import Workspace

MARKDOWN = (".md", ".markdown")
REST = (".rst", ".rest", ".txt")


@dataclass(frozen=True, slots=True)
class Stale:
    """A stale reference: where (1-based line, 0-based column in code points), what and why."""

    rel: str
    line: int
    col: int
    text: str
    message: str
    suggestion: str = ""
    about: str = ""
    sure: bool = False  # the suggestion is confident (an editor may apply it as the preferred fix)

    def describe(self) -> str:
        hint = f" (did you mean `{self.suggestion}`?)" if self.suggestion else ""
        return f"{self.message}{hint}"


@dataclass(slots=True)
class Report:
    stale: list[Stale]
    files: int = 0  # files whose references were checked
    references: int = 0


def ignored(settings: Settings) -> Callable[[str], bool]:
    """Whether a file's references are left alone (the `refs-ignore` patterns)."""
    spec = gitignore_spec(settings.refs_ignore)
    return (lambda rel: False) if spec is None else spec.match_file


def is_doc(rel: str, history: bool = False) -> bool:
    """A hand-written doc whose references are checked (history too with `history`: the
    `refs-history` setting)."""
    return rel.lower().endswith(MARKDOWN + REST) and (history or not HISTORY.search(rel))


def build_index(ws: Workspace) -> KeywordIndex:
    """The keyword index of a scanned workspace (as the server's root holds it)."""
    ws.facts.load_all()
    index = KeywordIndex()
    index.set_many((rel, entries_of(rel, ws.facts[rel], ws.relations.module_of.get(rel, ""))) for rel in ws.facts)
    return index


def docs_in_output(ws: Workspace) -> list[str]:
    """Hand-written docs inside the output folder (never inputs of generation, often `docs/`
    with a Sphinx or MkDocs project beside the pages): regular files, folder links not followed."""
    out = ws.out
    try:
        rel_out = out.resolve().relative_to(ws.root)
    except (OSError, ValueError):
        return []
    found = []
    for folder, dirs, files in os.walk(out):
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "_build")))
        for name in files:
            path = os.path.join(folder, name)
            if is_doc(name, ws.settings.refs_history) and not os.path.islink(path) and os.path.isfile(path):
                found.append((rel_out / os.path.relpath(path, out)).as_posix())
    return found


def doc_refs(rel: str, text: str, default_role: str = "", history: bool = False) -> list[Ref]:
    return markdown_refs(text) if rel.lower().endswith(MARKDOWN) else rest_refs(text, default_role, history)


def docstring_refs(facts: FileFacts) -> list[tuple[int, Ref]]:
    """(line of the definition, reference with its line within the docstring) of each docstring."""
    found: list[tuple[int, Ref]] = []
    if facts.module_doc:
        found.extend((1, r) for r in rest_refs(facts.module_doc, descriptions=False))
    for sym in facts.symbols:
        if sym.docstring:
            found.extend((sym.line, r) for r in rest_refs(sym.docstring, descriptions=False))
    return found


def check_workspace(ws: Workspace, index: NameLookup | None = None, only: Iterable[str] | None = None,
                    old_sources: dict[str, str] | None = None, since: str = "", kept: Kept | None = None) -> Report:
    """Every doc and Python docstring of `ws` (already scanned) checked against it; `only`: the
    files a change touches (their own references, references into them from anywhere, and every
    mention of a name the change removed: `old_sources`, the changed Python files' text at `since`).
    `kept`: the table of names as the last check left it (`scope.name_table`)."""
    if only is None:
        ws.facts.load_all()  # every docstring is read: in one query, not one a file
    index = index or name_table(ws, kept)
    resolver = Resolver(ws, index, index.modules if isinstance(index, NameTable) else None)
    if isinstance(index, NameTable):  # every file's dotted strings, kept: not read again
        resolver.names.known_strings(index.strings)
    touched = set(only) if only is not None else None
    old_facts = _analysed(ws, old_sources or {})
    gone, renames = gone_names(ws, old_sources, index, old_facts) if old_sources else (set(), {})
    resolver.renames = renames
    skip = ignored(ws.settings)
    words = change_words(ws, touched, old_sources or {}, old_facts) if touched is not None else None
    report = Report([])
    for rel in sorted({*ws.facts, *docs_in_output(ws)}):
        if skip(rel):
            continue
        text = None
        if rel.endswith(".py") and rel in ws.facts:
            if words is not None and touched is not None and rel not in touched \
                    and not _docstrings_may_name(ws, index, words, rel):
                continue
            facts = ws.facts.one(rel)
            if facts is None:
                continue
            found, count = check_docstrings(resolver, rel, facts, functools.partial(_source, ws, rel))
        elif is_doc(rel, ws.settings.refs_history):
            text = ws.read_text(rel)
            if text is None or text.startswith(MARKER):  # a generated page
                continue
            if words is not None and touched is not None and rel not in touched and not words.named_in(text):
                continue
            found, count = check_doc(resolver, rel, text)
        else:
            continue
        report.files += 1
        report.references += count
        if touched is not None:
            found = [s for s in found if s.rel in touched or s.about in touched
                     or any(w in gone for w in re.split(r"[.()~]", s.text))]
            if gone and not rel.endswith(".py"):
                seen = {(s.line, s.col) for s in found}
                found += [s for s in gone_mentions(rel, text or "", gone, renames, since or "HEAD",
                                                   ws.settings.refs_history)
                          if (s.line, s.col) not in seen]
        report.stale.extend(dict.fromkeys(found))  # one docstring found through two definitions: once
    return report


def _docstrings_may_name(ws: Workspace, index: NameLookup, words: Words, rel: str) -> bool:
    """Whether a Python file's docstrings hold one of a change's words: the check's table knows their words
    (reading every file's text again for them was a fifth of a check after an edit)."""
    if isinstance(index, NameTable):
        return words.among(index.docstring_words(rel))
    facts = ws.facts.one(rel) if words.named_in(ws.read_text(rel) or "") else None
    return facts is not None and words.named_in(docstrings(facts))


def _analysed(ws: Workspace, sources: dict[str, str]) -> dict[str, FileFacts | None]:
    """The facts of each changed Python file's text at the revision (None: it does not analyse): the facts
    cache's when an earlier scan analysed that content (analysing a large module again took a tenth of a
    check after an edit)."""
    from repodoc_lsp.analysis import analyse_source
    from repodoc_lsp.store.cache import digest

    data = {rel: text.encode("utf-8", "surrogatepass") for rel, text in sources.items()}
    keys = {rel: digest(raw, rel) for rel, raw in data.items()}
    cached = ws.cache.get_many(set(keys.values()))
    out: dict[str, FileFacts | None] = {}
    for rel, raw in data.items():
        try:
            out[rel] = cached.get(keys[rel]) or analyse_source(os.path.basename(rel), raw)
        except Exception:
            out[rel] = None
    return out


def check_doc(resolver: Resolver, rel: str, text: str) -> tuple[list[Stale], int]:
    """A Markdown, reST or text file's stale references, and how many references it has. Its lines
    end at \\n, \\r\\n or \\r, as LSP counts them (an editor's text is as the file has it)."""
    refs = doc_refs(rel, normalise_newlines(text), resolver.default_role(), resolver.ws.settings.refs_history)
    own = set(_EXAMPLE_DEF.findall(text))  # what the page's own example code defines (`def envkey(...)`)
    return [_stale(rel, r.line, r.col, r, v) for r in refs
            if not (r.kind == NAME and r.text in own) and (v := resolver.check(r, rel)) is not None], len(refs)


_EXAMPLE_DEF = re.compile(r"^[ \t>.]*(?:async[ \t]+)?(?:def|class)[ \t]+([A-Za-z_]\w*)", re.MULTILINE)


def check_docstrings(resolver: Resolver, rel: str, facts: FileFacts,
                     text: Callable[[], str]) -> tuple[list[Stale], int]:
    """A Python file's stale docstring references (`text`: its source, read only when one is stale)."""
    placed = docstring_refs(facts)
    stale = [(at, r, v) for at, r in placed if (v := resolver.check(r, rel)) is not None]
    return (_locate_in_source(text(), rel, stale) if stale else []), len(placed)


def _source(ws: Workspace, rel: str) -> str:
    return ws.read_text(rel) or ""


def _stale(rel: str, line: int, col: int, ref: Ref, v: Verdict) -> Stale:
    return Stale(rel, line, col, ref.text, v.message, v.suggestion, v.about, v.sure and bool(v.suggestion))


def _locate_in_source(source: str, rel: str, stale: list[tuple[int, Ref, Verdict]]) -> list[Stale]:
    """Docstring references -> positions in the file: the reference's text searched from its
    definition's line (docstrings are stored cleaned, so their own columns are not the file's)."""
    lines = normalise_newlines(source).split("\n")  # the facts' lines (an editor's text may end them at \\r)
    out = []
    for at, ref, verdict in stale:
        start = at + ref.line - 2  # 0-based: the docstring's line `ref.line` is there or below
        line, col = start + 1, 0
        for i in range(start, min(len(lines), start + 200)):
            found = lines[i].find(ref.text)
            if found >= 0:
                line, col = i + 1, found
                break
        out.append(_stale(rel, line, col, ref, verdict))
    return list(dict.fromkeys(out))


def gone_names(ws: Workspace, old_sources: dict[str, str], index: NameLookup,
               analysed: dict[str, FileFacts | None] | None = None) -> tuple[set[str], dict[str, str]]:
    """Names defined in the changed Python files before (`old_sources`: file -> its text at the
    revision; `analysed`: their facts, when analysed already) and defined nowhere now, and of those
    the renamed ones (old -> new): a definition whose body is the same under another name, or the
    only new one of its kind at its place."""
    analysed = _analysed(ws, old_sources) if analysed is None else analysed
    gone: set[str] = set()
    renames: dict[str, str] = {}
    assigned: frozenset[str] | None = None
    for rel in old_sources:
        old = analysed.get(rel)
        if old is None:
            continue
        new = ws.facts.one(rel) if rel in ws.facts else None
        new_symbols = new.symbols if new is not None else ()
        now = {s.qualname for s in new_symbols} | ({a.qualname for a in new.attributes} if new else set())
        before = {s.qualname for s in old.symbols} | {a.qualname for a in old.attributes}
        for sym in old.symbols:
            if sym.qualname in now or sym.name.startswith("__"):
                continue
            if any(e.kind != "heading" for e in index.lookup(sym.name)):
                continue  # still defined somewhere (moved)
            gone.add(sym.name)
            same = [s for s in new_symbols if s.qualname not in before and s.kind == sym.kind
                    and s.container == sym.container]
            by_body = [s for s in same if sym.body and s.body == sym.body]
            pick = by_body or (same if len(same) == 1 else [])
            if len(pick) == 1:
                renames[sym.name] = pick[0].name
        for a in old.attributes:  # a module's alias (`padnone = pad_none`) removed
            if not a.container and a.qualname not in now and not a.name.startswith("__") \
                    and not index.lookup(a.name):
                assigned = _module_attributes(ws, index) if assigned is None else assigned
                if a.name not in assigned:
                    gone.add(a.name)
    return gone, renames


def _module_attributes(ws: Workspace, index: NameLookup) -> frozenset[str]:
    """Every name a workspace module assigns at its top level now (the check's table has them)."""
    if isinstance(index, NameTable):
        return index.assigned
    return frozenset(a.name for rel in ws.facts if (f := ws.facts.one(rel)) is not None
                     for a in f.attributes if not a.container)


_SPAN = re.compile(r"(`+)([^`\n]+?)\1")


def gone_mentions(rel: str, text: str, gone: set[str], renames: dict[str, str], since: str,
                  history: bool = False) -> list[Stale]:
    """Every code span of a doc naming a gone name in any form (`name`, `name()`, `mod.name`,
    `~Class.name`, a role's target): what the reference checks may not judge (a lone lower-case name).
    Not in a reST page's code or history blocks."""
    out = []
    text = normalise_newlines(text)
    skip = rest_code_lines(text, history) if not rel.lower().endswith(MARKDOWN) else set()
    for i, line in enumerate(text.split("\n"), start=1):
        if i in skip:
            continue
        for m in _SPAN.finditer(line):
            body = m.group(2).strip()
            target = body.split("<")[-1].rstrip(">").lstrip("~!.").removesuffix("()")
            if not re.fullmatch(r"[A-Za-z_][\w.]*", target):
                continue
            hit = next((w for w in target.split(".") if w in gone), None)
            if hit is None:
                continue
            col = m.start(2) + body.find(target) if target in body else m.start(2)
            new = renames.get(hit, "")
            suggestion = ".".join(new if w == hit else w for w in target.split(".")) if new else ""
            what = f"was renamed to `{new}`" if new else "is no longer defined"
            head = f"`{hit}`" if hit == target else f"`{target}`: `{hit}`"
            out.append(Stale(rel, i, col, target, f"{head} {what} since {since}", suggestion, sure=bool(suggestion)))
    return out
