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
- risky call: (risky|check, label, line) of Security & Safety: a call dangerous whatever the values
  at run time is risky, one whose danger depends on a value known only at run time is check (rules
  in security_facts, read from the whole tree: repodoc searches only around lines its text search
  picks).
- performance: (label, line) of Performance Considerations: caching and compilation decorators,
  `__slots__`, and the threads, processes, pools, locks and event loops a file creates (a call or
  base class resolved through its imports; never an import alone).
Links: every relative link of every page resolves to a file, its `#anchor` to an `<a id>` or a
heading of the target page, and a source link's `#L<n>` to a line of the source.
"""

from __future__ import annotations

import ast
import posixpath
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path
from urllib.parse import unquote

from markdown_it import MarkdownIt

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from _common import checked_tree, part_lists, with_lists  # noqa: E402

KINDS = ("symbol", "count", "import", "imported name", "importer", "test", "risky call", "performance")
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


# Security and performance, re-derived from the rules of FORMAT.md/issue 15 with a walk of the whole
# tree (repodoc looks only around lines its text search picks; a miss there shows up here).
def _name(node: ast.AST | None) -> str | None:
    """`a.b.c` of a Name/Attribute chain, else None."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.insert(0, node.attr)
        node = node.value
    return ".".join([node.id, *parts]) if isinstance(node, ast.Name) else None


class Names:
    """What the file's imports (level 0, in line order, first binding wins) bind each local name to."""

    def __init__(self, tree: ast.Module) -> None:
        found = [n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)]
        self.table: dict[str, str] = {}
        for node in sorted(found, key=lambda n: n.lineno):
            if isinstance(node, ast.Import):
                for a in node.names:
                    top = a.name.split(".")[0]
                    self.table.setdefault(a.asname or top, a.name if a.asname else top)
            elif node.level == 0 and node.module:
                for a in node.names:
                    if a.name != "*":
                        self.table.setdefault(a.asname or a.name, f"{node.module}.{a.name}")

    def full(self, node: ast.AST | None) -> str | None:
        name = _name(node)
        if name is None:
            return None
        head, dot, rest = name.partition(".")
        return self.table.get(head, head) + dot + rest


def _keyword(call: ast.Call, key: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == key), None)


def _first(call: ast.Call, key: str, index: int = 0) -> ast.expr | None:
    return call.args[index] if len(call.args) > index else _keyword(call, key)


def _literal(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant)


PICKLERS = {f"{m}.{f}" for m in ("pickle", "cPickle", "_pickle", "dill", "marshal") for f in ("load", "loads")} | {
    "pickle.Unpickler", "_pickle.Unpickler", "shelve.open", "joblib.load"}
SHELL_CALLS = {"os.system", "os.popen", "subprocess.getoutput", "subprocess.getstatusoutput"}
POPEN_LIKE = {"subprocess." + f for f in ("run", "call", "check_call", "check_output", "Popen")}


def security_facts(tree: ast.Module) -> set[Fact]:
    """(level, label, line) of every risky call and call to check."""
    names = Names(tree)
    made: dict[str, set[str]] = defaultdict(set)  # name -> what calls it was assigned from
    bases: dict[str, list[str]] = defaultdict(list)
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and (f := names.full(node.value.func)):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    made[t.id].add(f)
        elif isinstance(node, ast.ClassDef):
            bases[node.name] += [b for b in map(names.full, node.bases) if b]

    def unpickler(cls: str, path: tuple[str, ...] = ()) -> bool:
        if cls.split(".")[-1].endswith("Unpickler"):
            return True
        return cls not in path and any(unpickler(b, (*path, cls)) for b in bases.get(cls, ()))

    found: set[Fact] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        method = func.attr if isinstance(func, ast.Attribute) else None
        full = names.full(func)
        if full is None and not (method and isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call)
                                 and _name(func.value.func)):
            continue
        full = full or ""
        last = method or full.split(".")[-1]
        line = node.lineno
        fact: tuple[str, str] | None = None
        if full in ("eval", "exec", "builtins.eval", "builtins.exec"):
            arg = _first(node, "source")
            fact = ("check", last) if arg is not None and not _literal(arg) else None
        elif full in ("__import__", "builtins.__import__", "importlib.import_module", "importlib.__import__"):
            arg = _first(node, "name")
            fact = ("check", last) if arg is not None and not _literal(arg) else None
        elif method == "exec_module":
            fact = ("check", "exec_module")
        elif full in PICKLERS:
            fact = ("risky", "deserialisation")
        elif full in ("torch.load", "torch.serialization.load"):
            w = _keyword(node, "weights_only")
            if w is None or (isinstance(w, ast.Constant) and w.value is None):
                fact = ("check", "torch.load")
            elif isinstance(w, ast.Constant):
                fact = None if w.value else ("risky", "torch.load")
            else:
                fact = ("check", "torch.load")
        elif full == "yaml.unsafe_load":
            fact = ("risky", "yaml.load")
        elif full == "yaml.load":
            loader = _first(node, "Loader", 1)
            written = _name(loader) or ""
            if loader is None:
                fact = ("risky", "yaml.load")
            elif "Safe" in written or written.split(".")[-1] == "BaseLoader":
                fact = None
            elif (names.full(loader) or "").startswith("yaml.") or written in (
                    "Loader", "UnsafeLoader", "FullLoader", "CLoader", "CUnsafeLoader", "CFullLoader"):
                fact = ("risky", "yaml.load")
            else:
                fact = ("check", "yaml.load")
        elif full in POPEN_LIKE:
            shell = _keyword(node, "shell")
            if shell is not None and not (isinstance(shell, ast.Constant) and not shell.value):
                fact = ("risky", "shell=True") if _literal(shell) else ("check", "shell=")
        elif full in SHELL_CALLS:
            cmd = _first(node, "cmd")
            fact = ("risky" if cmd is None or _literal(cmd) else "check", "shell command")
        elif full == "tempfile.mktemp":
            fact = ("risky", "mktemp")
        elif method in ("load", "loads") and isinstance(func, ast.Attribute):
            owner = func.value
            owner_name = _name(owner)
            classes: set[str] = set()
            if method == "load" and not (owner_name and owner_name.split(".")[0] in names.table):
                if isinstance(owner, ast.Call):
                    classes = {c for c in [names.full(owner.func)] if c}
                elif isinstance(owner, ast.Name):
                    classes = made.get(owner.id, set())
            through_unpickler = any(unpickler(c) and c not in PICKLERS for c in classes)
            pickle_named = bool(owner_name) and "pickle" in str(owner_name).split(".")[-1].lower() and \
                names.full(owner) not in ("pickle", "cPickle", "_pickle", "dill")
            if through_unpickler or pickle_named:
                fact = ("check", "deserialisation")
        if fact:
            found.add((*fact, line))
    return found


CONCURRENT = {
    **dict.fromkeys(["threading.Thread", "threading.Timer", "_thread.start_new_thread", "asyncio.to_thread",
                     "asyncio.run_coroutine_threadsafe"], "threads"),
    "threading.local": "thread-local state",
    **{f"threading.{n}": "thread synchronisation"
       for n in ("Lock", "RLock", "Condition", "Semaphore", "BoundedSemaphore", "Event", "Barrier")},
    **dict.fromkeys(["multiprocessing.Process", "multiprocessing.spawn", "multiprocessing.start_processes"],
                    "processes"),
    **dict.fromkeys(["multiprocessing.Pool", "multiprocessing.pool.Pool", "concurrent.futures.ProcessPoolExecutor"],
                    "process pool"),
    **dict.fromkeys(["multiprocessing.pool.ThreadPool", "multiprocessing.dummy.Pool",
                     "concurrent.futures.ThreadPoolExecutor"], "thread pool"),
    **{f"multiprocessing.{n}": "inter-process communication"
       for n in ("Queue", "SimpleQueue", "JoinableQueue", "Pipe", "Manager")},
    **{f"multiprocessing.{n}": "process synchronisation"
       for n in ("Lock", "RLock", "Condition", "Semaphore", "BoundedSemaphore", "Event", "Barrier", "Value",
                 "Array")},
    "asyncio.run": "event loop", "asyncio.new_event_loop": "event loop",
    **{f"asyncio.{n}": "concurrent coroutines"
       for n in ("gather", "wait", "as_completed", "create_task", "ensure_future", "TaskGroup")},
}


def performance_facts(tree: ast.Module) -> set[Fact]:
    """(label, line) of caching and compilation decorators, `__slots__` in a class body, and the
    threads, processes, pools, locks and event loops the file creates."""
    names = Names(tree)

    def api(full: str | None) -> str:
        full = full or ""
        return full[len("torch."):] if full.startswith("torch.multiprocessing.") else full

    for node in ast.walk(tree):  # ctx = multiprocessing.get_context(...): ctx stands for multiprocessing
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and \
                api(names.full(node.value.func)) == "multiprocessing.get_context":
            for t in node.targets:
                if isinstance(t, ast.Name):
                    names.table.setdefault(t.id, "multiprocessing")
    found: set[Fact] = set()

    def class_body(stmts: list[ast.stmt]) -> None:
        for s in stmts:
            if isinstance(s, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__slots__" for t in s.targets):
                found.add(("__slots__", s.lineno))
            elif isinstance(s, ast.If | ast.Try | ast.For | ast.While | ast.With):
                for block in ("body", "orelse", "finalbody", "handlers"):
                    for part in getattr(s, block, []):
                        class_body(part.body if isinstance(part, ast.ExceptHandler) else [part])

    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for dec in node.decorator_list:
                target = dec.func if isinstance(dec, ast.Call) else dec
                written = _name(target) or ""
                if written.split(".")[-1] in ("lru_cache", "cache", "cached_property"):
                    found.add(("caching", node.lineno))
                elif written in ("torch.jit.script", "torch.compile", "jit", "numba.jit", "njit", "numba.njit",
                                 "torch.jit.ignore", "torch.jit.unused"):
                    found.add(("compilation", node.lineno))
        elif isinstance(node, ast.ClassDef):
            class_body(node.body)
            for base in node.bases:
                if api(names.full(base)) in ("threading.Thread", "multiprocessing.Process"):
                    found.add(("threads" if "Thread" in api(names.full(base)) else "processes", node.lineno))
        elif isinstance(node, ast.Call):
            func = node.func
            full = names.full(func)
            if full is None and isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call) and \
                    api(names.full(func.value.func)) == "multiprocessing.get_context":
                full = f"multiprocessing.{func.attr}"
            if label := CONCURRENT.get(api(full)):
                found.add((label, node.lineno))
    return found


_ANCHOR = re.compile(r'<a id="(class|function|method)-([^"]+)"></a>')
# A class whose entry went to a part page (README, "Part pages") keeps a line on the page: its anchor,
# its line, a link to the entry, then the anchors of its members when they are on that part too (so
# links to them land): the facts are read from the entry.
_STUB = re.compile(r'^(- <a id="class-[^"]+"></a>.*\): its entry is on \[[^\]]+\]\([^)\s]+\))(?:<a id="[^"]+"></a>)+$',
                   re.M)
# A renamed definition's old anchor, kept beside the new one on a kept tree (render/anchors.py).
_ALIAS = re.compile(r'(<a id="(?:class|function|method)-[^"]+"></a>)<a id="[^"]+"></a>')
_LINE = re.compile(r"\[(?:line |L)(\d+)\]")  # `[L12](...)`; `[line 12](...)` before 2026-11-26
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


def page_facts(text: str, page_rel: str, parts: tuple[str, ...] = ()) -> dict[str, set[Fact]]:
    """The facts a `_docs.md` states (page_rel: the source path it documents; `parts`: the text of
    its part pages, whose Detailed Analysis continues the page's)."""
    parts_text = parts
    body = text[text.find("## High-Level Overview"):]
    analysis = section(body, "## Detailed Analysis", "\n## Architecture & Design") \
        + "".join(section(part, "## Detailed Analysis", "\n---\n") for part in parts)
    symbols: set[Fact] = set()
    parts = _ANCHOR.split(_ALIAS.sub(r"\1", _STUB.sub(r"\1", analysis)))
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

    risky_part, _, check_part = section(body, "## Security & Safety", "\n## ").partition("\nTo check (")
    security = {(level, *entry) for level, part in (("risky", risky_part), ("check", check_part))
                for entry in _findings(part)}
    lists = part_lists(parts_text)  # the complete lists of a page over the budget, on its parts
    return {"symbol": symbols, "count": counts, "import": imports, "imported name": names,
            "importer": linked(with_lists(section(body, "### Imported by", "\n## "), lists)),
            "test": linked(with_lists(section(body, "## Testing & Usage", "\n## "), lists)),
            "risky call": security,
            "performance": set(_findings(section(body, "## Performance Considerations", "\n## ")))}


_FINDING = re.compile(r"^- \*\*(.+?)\*\* \(\[(?:line |L)(\d+)\]", re.MULTILINE)


def _findings(part: str) -> list[Fact]:
    """(label, line) of each `- **label** ([LN](...)): ...` entry (Markdown escapes undone)."""
    return [(re.sub(r"\\(.)", r"\1", m.group(1)), int(m.group(2))) for m in _FINDING.finditer(part)]


def source_facts(src: Source, importers: set[str]) -> dict[str, set[Fact]]:
    imports = src.imports()
    return {"symbol": src.symbols(), "count": src.counts(),
            "import": {(m, line) for m, line, *_ in imports},
            "imported name": {(m, n) for m, _, ns, *_ in imports for n in ns},
            "importer": {(src.rel, r) for r in importers},
            "test": {(src.rel, r) for r in importers if is_test(r)},
            "risky call": security_facts(src.tree) if src.tree else set(),
            "performance": performance_facts(src.tree) if src.tree else set()}


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
    with checked_tree(__doc__ or "", "repodoc-facts-") as (args, docs, root):
        root = root.resolve()
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
            parts, n = [], 2
            while (part := docs / f"{rel}_docs.part{n}.md").exists():
                parts.append(part.read_text(encoding="utf-8"))
                n += 1
            claimed = page_facts(page.read_text(encoding="utf-8"), rel, tuple(parts))
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
