"""What every `_docs.md` page claims against an independent reading of the sources with `ast`.

    python bench/check_facts.py [--docs DOCS --root ROOT] [--show N]

Without DOCS, PyTorch's corpus (bench/corpus.py) is hard-linked into a temporary folder and
generated there once with an empty cache (as check_pages.py does). Nothing of repodoc_lsp is
imported: the reference side is `ast` plus the rules written below, the page side reads the
Markdown text (markdown-it-py for links). Fact kinds, each with precision and recall:

- symbol: (class|function|method, qualified name, line) from the Detailed Analysis anchors;
  a class or function at any depth, a `def` directly in a class body is a method `C.m`,
  a nested one `f.g`; the line is the `def`/`class` line.
- count: lines, classes, functions, methods and distinct imported modules of the overview.
- import: (module as written, line) per import statement; imported name: (module, name).
- importer: (file, a file that imports it): `import a.b` names module `a.b`; `from a import b`
  names `a.b` when it is a workspace module, else `a`; relative imports against the file's
  package; a module is its path from the root with `/` -> `.` and `__init__` dropped.
- test: an importer whose name or folder says test (test_*.py, *_test.py, conftest.py, a
  `tests`/`test`/`testing` folder).
Links: every relative link of every page resolves to a file, its `#anchor` to an `<a id>` or a
heading of the target page, and a source link's `#L<n>` to a line of the source.
"""

from __future__ import annotations

import argparse
import ast
import posixpath
import re
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from urllib.parse import unquote

from markdown_it import MarkdownIt

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from check_pages import generate  # noqa: E402

KINDS = ("symbol", "count", "import", "imported name", "importer", "test")
Fact = tuple[object, ...]
ImportFact = tuple[str, int, tuple[str, ...], int, "str | None"]


def is_test(rel: str) -> bool:
    parts = rel.split("/")
    name = parts[-1]
    return (name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"
            or any(p in ("tests", "test", "testing") for p in parts[:-1]))


def module_of(rel: str) -> str | None:
    parts = rel[:-3].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts) if parts and all(p.isidentifier() for p in parts) else None


class Source:
    """One Python file read with `ast`."""

    def __init__(self, rel: str, data: bytes) -> None:
        self.rel = rel
        text = data.decode("utf-8", errors="replace")
        self.lines = text.count("\n") + (1 if text and not text.endswith("\n") else 0)
        self.tree: ast.Module | None
        try:
            self.tree = ast.parse(data)
        except (SyntaxError, ValueError):
            self.tree = None

    def symbols(self) -> set[Fact]:
        found: set[Fact] = set()

        def visit(node: ast.AST, prefix: str, in_class: bool) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.ClassDef):
                    found.add(("class", prefix + child.name, child.lineno))
                    visit(child, prefix + child.name + ".", True)
                elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                    kind = "method" if in_class else "function"
                    found.add((kind, prefix + child.name, child.lineno))
                    visit(child, prefix + child.name + ".", False)
                else:  # statements (if/try/with...) keep the enclosing scope
                    visit(child, prefix, in_class)

        if self.tree is not None:
            visit(self.tree, "", False)
        return found

    def imports(self) -> list[ImportFact]:
        """(module as written, line, names, level, module without dots) of every import."""
        out: list[ImportFact] = []
        for node in ast.walk(self.tree) if self.tree is not None else ():
            if isinstance(node, ast.Import):
                out += [(a.name, node.lineno, (), 0, a.name) for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                out.append(("." * node.level + (node.module or ""), node.lineno,
                            tuple(a.name for a in node.names), node.level, node.module))
        return out

    def counts(self) -> set[Fact]:
        kinds = Counter(kind for kind, _, _ in self.symbols())
        return {("lines", self.lines), ("classes", kinds["class"]), ("functions", kinds["function"]),
                ("methods", kinds["method"]), ("imports", len({m for m, *_ in self.imports()}))}


def reference(root: Path) -> tuple[dict[str, Source], dict[str, set[str]]]:
    """Every Python file of `root`, and who imports each (file -> importers)."""
    sources = {p.relative_to(root).as_posix(): Source(p.relative_to(root).as_posix(), p.read_bytes())
               for p in sorted(root.rglob("*.py")) if "docs" not in p.relative_to(root).parts[:1]}
    files = {mod: rel for rel in sources if (mod := module_of(rel))}
    importers: dict[str, set[str]] = defaultdict(set)
    for rel, src in sources.items():
        own = module_of(rel) or ""
        package = own.split(".") if rel.endswith("__init__.py") else own.split(".")[:-1]
        for _, _, names, level, module in src.imports():
            if level:
                if level - 1 > len(package):
                    continue
                base = package[: len(package) - (level - 1)]
                module = ".".join([*base, module] if module else base)
            targets = [files.get(module or "")] if not names else [
                files.get(f"{module}.{n}" if module else n) or files.get(module or "") for n in names]
            importers_of = {t for t in targets if t and t != rel}
            for t in importers_of:
                importers[t].add(rel)
    return sources, importers


_ANCHOR = re.compile(r'<a id="(class|function|method)-([^"]+)"></a>')
_LINE = re.compile(r"\[line (\d+)\]")
_OVERVIEW = re.compile(r"of ([\d,]+) lines? defining (\d+) class(?:es)?, (\d+) functions? and (\d+) methods?, "
                       r"and importing (\d+) modules?")
_IMPORT = re.compile(r'^- <a id="import-[^"]*"></a>\[?(`+) ?(.*?) ?\1')
_CODE = re.compile(r"(`+) ?(.*?) ?\1")
_HREF = re.compile(r"\]\(([^)\s]+)\)")


def section(text: str, start: str, end: str) -> str:
    i = text.find(start)
    if i < 0:
        return ""
    j = text.find(end, i + len(start))
    return text[i:j if j >= 0 else len(text)]


def page_facts(text: str, page_rel: str) -> dict[str, set[Fact]]:
    """The facts a `_docs.md` states (page_rel: the source path it documents)."""
    body = text[text.find("## High-Level Overview"):]
    analysis = section(body, "## Detailed Analysis", "\n## Architecture & Design")
    symbols: set[Fact] = set()
    parts = _ANCHOR.split(analysis)
    for i in range(1, len(parts), 3):
        line = _LINE.search(parts[i + 2])
        name = re.sub(r"-\d+$", "", parts[i + 1])  # `-2`: the anchor of a second definition of a name
        symbols.add((parts[i], name, int(line.group(1)) if line else -1))
    counts: set[Fact] = set()
    if m := _OVERVIEW.search(section(body, "## High-Level Overview", "\n## ")):
        values = [int(g.replace(",", "")) for g in m.groups()]
        counts = set(zip(("lines", "classes", "functions", "methods", "imports"), values, strict=True))
    imports: set[Fact] = set()
    names: set[Fact] = set()
    for entry in section(body, "## Dependencies", "\n### Imported by").splitlines():
        if m := _IMPORT.match(entry):
            module = m.group(2)
            found = list(_LINE.finditer(entry))
            imports.update((module, int(n.group(1))) for n in found)
            rest = entry[found[-1].end():] if found else ""
            rest = rest[rest.find(")") + 1:]
            names.update((module, c.group(2)) for c in _CODE.finditer(rest.split(" (not found")[0]))
    folder = posixpath.dirname(page_rel)

    def linked(part: str) -> set[Fact]:
        out: set[Fact] = set()
        for href in _HREF.findall(part):
            path = unquote(href.split("#")[0])
            if path.endswith("_docs.md"):
                out.add((page_rel, posixpath.normpath(posixpath.join(folder, path))[: -len("_docs.md")]))
        return out

    return {"symbol": symbols, "count": counts, "import": imports, "imported name": names,
            "importer": linked(section(body, "### Imported by", "\n## ")),
            "test": linked(section(body, "## Testing & Usage", "\n## "))}


def source_facts(src: Source, importers: set[str]) -> dict[str, set[Fact]]:
    imports = src.imports()
    return {"symbol": src.symbols(), "count": src.counts(),
            "import": {(m, line) for m, line, *_ in imports},
            "imported name": {(m, n) for m, _, ns, *_ in imports for n in ns},
            "importer": {(src.rel, r) for r in importers},
            "test": {(src.rel, r) for r in importers if is_test(r)}}


_MD = MarkdownIt("commonmark")
_ID = re.compile(r'<a id="([^"]+)"')


def slug(heading: str) -> str:
    """The anchor GitHub and VS Code give a heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def links_and_anchors(text: str) -> tuple[list[str], set[str]]:
    hrefs: list[str] = []
    anchors: set[str] = set()
    tokens = _MD.parse(text)
    for i, tok in enumerate(tokens):
        if tok.type == "html_block":
            anchors.update(_ID.findall(tok.content))
        elif tok.type == "heading_open":
            anchors.add(slug(tokens[i + 1].content))
        for child in tok.children or ():
            if child.type == "link_open":
                hrefs.append(str(child.attrs.get("href", "")))
            elif child.type == "html_inline":
                anchors.update(_ID.findall(child.content))
    return hrefs, anchors


def check_links(docs: Path, root: Path, sources: dict[str, Source]) -> tuple[int, list[str]]:
    cache: dict[Path, set[str]] = {}
    total, broken = 0, []
    for page in sorted(docs.rglob("*.md")):
        hrefs, anchors = links_and_anchors(page.read_text(encoding="utf-8"))
        cache[page.resolve()] = anchors
        for href in hrefs:
            if re.match(r"[a-z][a-z0-9+.-]*:", href):
                continue  # not relative
            total += 1
            path, _, fragment = unquote(href).partition("#")
            target = (page.parent / path).resolve() if path else page.resolve()
            problem = ""
            if not target.exists():
                problem = "no file"
            elif fragment and target.suffix == ".md":
                if target not in cache:
                    cache[target] = links_and_anchors(target.read_text(encoding="utf-8"))[1]
                problem = "" if fragment in cache[target] else f"no anchor #{fragment}"
            elif fragment:
                rel = target.relative_to(root).as_posix() if target.is_relative_to(root) else ""
                m = re.fullmatch(r"L(\d+)", fragment)
                src = sources.get(rel)
                if not m or (src and not 1 <= int(m.group(1)) <= src.lines):
                    problem = f"bad line #{fragment}"
            if problem:
                broken.append(f"{page.relative_to(docs)}: {href} ({problem})")
    return total, broken


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=Path, help="a generated tree (default: PyTorch generated now)")
    parser.add_argument("--root", type=Path, help="the workspace DOCS was generated from")
    parser.add_argument("--show", type=int, default=8, help="disagreements shown per kind")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="repodoc-facts-") as tmp:
        docs = args.docs or generate(Path(tmp))
        root = (args.root or docs.parent).resolve()
        sources, importers = reference(root)
        tally = {k: Counter[str]() for k in KINDS}
        wrong: dict[str, list[str]] = defaultdict(list)
        pages = 0
        # a file this Python's `ast` cannot read (newer syntax) is not judged, nor the edges it makes
        unread = {rel for rel, src in sources.items() if src.tree is None}
        not_judged = 0
        for rel, src in sources.items():
            page = docs / f"{rel}_docs.md"
            if src.tree is None or not page.exists():
                wrong["page"].append(f"{rel}: {'not parsed' if src.tree is None else 'no page'}")
                continue
            pages += 1
            claimed = page_facts(page.read_text(encoding="utf-8"), rel)
            truth = source_facts(src, importers.get(rel, set()))
            for kind in ("importer", "test"):
                not_judged += len({f for f in claimed[kind] if f[1] in unread})
                claimed[kind] = {f for f in claimed[kind] if f[1] not in unread}
            for kind in KINDS:
                said, true = claimed[kind], truth[kind]
                tally[kind].update(tp=len(said & true), fp=len(said - true), fn=len(true - said))
                wrong[kind] += [f"{rel}: page only {sorted(said - true, key=str)[:4]}; "
                                f"source only {sorted(true - said, key=str)[:4]}"] if said != true else []
        links, broken = check_links(docs, root, sources)
    print(f"{pages:,} `_docs.md` pages of Python files compared ({len(wrong['page'])} skipped; "
          f"{not_judged} importer/test links from skipped files not judged)")
    print(f"{'fact':<14} {'agree':>9} {'page only':>9} {'src only':>9} {'precision':>9} {'recall':>7} {'pages':>6}")
    for kind in KINDS:
        t = tally[kind]
        precision = t["tp"] / (t["tp"] + t["fp"]) if t["tp"] + t["fp"] else 1.0
        recall = t["tp"] / (t["tp"] + t["fn"]) if t["tp"] + t["fn"] else 1.0
        print(f"{kind:<14} {t['tp']:>9,} {t['fp']:>9,} {t['fn']:>9,} {precision:>9.4f} {recall:>7.4f} "
              f"{len(wrong[kind]):>6,}")
    print(f"links: {links:,} relative, {len(broken):,} broken")
    for kind in (*KINDS, "page"):
        for line in wrong[kind][: args.show]:
            print(f"  [{kind}] {line}")
    for line in broken[: args.show]:
        print(f"  [link] {line}")
    return 1 if broken or any(wrong[k] for k in KINDS) else 0


if __name__ == "__main__":
    raise SystemExit(main())
