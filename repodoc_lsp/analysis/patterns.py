"""Code patterns, performance notes and risky calls, found in the syntax tree.

Each finding names what was found and the line it is on; nothing here is a
guess from text.
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_left
from collections.abc import Iterable, Iterator

from repodoc_lsp.analysis.model import Finding, FindingCategory, Import

PATTERN = FindingCategory.PATTERN
PERF = FindingCategory.PERFORMANCE
SECURITY = FindingCategory.SECURITY

_ENUM_BASES = {"Enum", "IntEnum", "StrEnum", "Flag", "IntFlag", "enum.Enum", "enum.IntEnum",
               "enum.StrEnum", "enum.Flag", "enum.IntFlag"}


def _tail(expr: str) -> str:
    """`functools.lru_cache(maxsize=1)` -> `lru_cache`."""
    return expr.split("(", 1)[0].rsplit(".", 1)[-1]


def _head(expr: str) -> str:
    return expr.split("(", 1)[0]


# `ast.FunctionDef | ast.AsyncFunctionDef` written in `isinstance` made a union at each call, for each
# statement of a file (half a percent of the analysis).
DEF_TYPES = (ast.FunctionDef, ast.AsyncFunctionDef)


def class_findings(
    node: ast.ClassDef, qual: str, decorators: tuple[str, ...], bases: tuple[str, ...]
) -> list[Finding]:
    out: list[Finding] = []
    line = node.lineno
    tails = {_tail(d) for d in decorators}
    if "dataclass" in tails:
        out.append(Finding(PATTERN, "dataclass", line, f"`{qual}` is a dataclass"))
    base_heads = [_head(b) for b in bases]
    if any(b in _ENUM_BASES for b in base_heads):
        out.append(Finding(PATTERN, "enum", line, f"`{qual}` is an enumeration"))
    if any(b in ("ABC", "abc.ABC") or (b.startswith("metaclass=") and "ABCMeta" in b) for b in bases):
        out.append(Finding(PATTERN, "abstract class", line, f"`{qual}` is an abstract base class"))
    if any(_tail(b) in ("Protocol",) for b in base_heads):
        out.append(Finding(PATTERN, "protocol", line, f"`{qual}` is a typing Protocol"))
    if any(_tail(b) in ("NamedTuple", "TypedDict") for b in base_heads):
        out.append(Finding(PATTERN, "typed record", line, f"`{qual}` is a {_tail(base_heads[0])}"))
    if any(_tail(b).endswith(("Error", "Exception")) for b in base_heads):
        out.append(Finding(PATTERN, "exception", line, f"`{qual}` is an exception class"))
    methods = {
        s.name for s in node.body if isinstance(s, DEF_TYPES)
    }
    if {"__enter__", "__exit__"} <= methods or {"__aenter__", "__aexit__"} <= methods:
        out.append(Finding(PATTERN, "context manager", line, f"`{qual}` is a context manager class"))
    if {"__iter__", "__next__"} <= methods:
        out.append(Finding(PATTERN, "iterator", line, f"`{qual}` is an iterator"))
    return out


def slots_finding(node: ast.stmt, class_qual: str) -> list[Finding]:
    if isinstance(node, ast.Assign) and any(
        isinstance(t, ast.Name) and t.id == "__slots__" for t in node.targets
    ):
        return [Finding(PERF, "__slots__", node.lineno,
                        f"`{class_qual}` declares `__slots__` (no per-instance `__dict__`)")]
    return []


def def_findings(
    node: ast.FunctionDef | ast.AsyncFunctionDef, qual: str, decorators: tuple[str, ...], is_async: bool
) -> list[Finding]:
    out: list[Finding] = []
    line = node.lineno
    for dec in decorators:
        tail = _tail(dec)
        if tail in ("contextmanager", "asynccontextmanager"):
            out.append(Finding(PATTERN, "context manager", line, f"`{qual}` is a `@{tail}` generator"))
        elif tail == "abstractmethod":
            out.append(Finding(PATTERN, "abstract method", line, f"`{qual}` is abstract"))
        elif tail == "property":
            out.append(Finding(PATTERN, "property", line, f"`{qual}` is a property"))
        elif tail == "overload":
            out.append(Finding(PATTERN, "overload", line, f"`{qual}` has typing overloads"))
        elif tail in ("lru_cache", "cache", "cached_property"):
            out.append(Finding(PERF, "caching", line, f"`{qual}` is cached with `@{_head(dec)}`"))
        elif _head(dec) in ("torch.jit.script", "torch.compile", "jit", "numba.jit", "njit",
                            "numba.njit", "torch.jit.ignore", "torch.jit.unused"):
            out.append(Finding(PERF, "compilation", line, f"`{qual}` is decorated with `@{_head(dec)}`"))
    if is_async:
        out.append(Finding(PATTERN, "async", line, f"`{qual}` is a coroutine function (`async def`)"))
    return out


def dotted(node: ast.expr) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def import_aliases(imports: Iterable[Import]) -> dict[str, str]:
    """Local name -> the dotted name it stands for (`import a.b as c`: c -> a.b; `import a.b`:
    a -> a; `from m import x as y`: y -> m.x); relative imports are left out."""
    table: dict[str, str] = {}
    for imp in imports:
        if imp.level:
            continue
        module = imp.module if imp.asnames or imp.names else imp.module.split(".", 1)[0]
        for local, name in imp.bindings():
            table.setdefault(local, f"{module}.{name}" if name else module)
    return table


def resolve(node: ast.expr, aliases: dict[str, str]) -> str | None:
    name = dotted(node)
    if name is None:
        return None
    head, _, rest = name.partition(".")
    return aliases.get(head, head) + ("." + rest if rest else "")


def keyword_value(call: ast.Call, name: str) -> ast.expr | None:
    for k in call.keywords:
        if k.arg == name:
            return k.value
    return None


def argument(call: ast.Call, index: int, name: str) -> ast.expr | None:
    """The argument at `index` or passed as `name=`."""
    return call.args[index] if len(call.args) > index else keyword_value(call, name)


def show_value(node: ast.expr | None) -> str:
    """A value for a page: a dotted name in code, else a description (never source text that
    could break the Markdown)."""
    name = dotted(node) if node is not None else None
    return f"`{name}`" if name else "an expression"


def nodes_around(tree: ast.AST, lines: list[int]) -> Iterable[ast.AST]:
    """The nodes of `tree` whose line range contains one of `lines` (sorted)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            start = getattr(child, "lineno", None)
            if start is not None:
                i = bisect_left(lines, start)
                if i == len(lines) or lines[i] > (getattr(child, "end_lineno", None) or start):
                    continue
            stack.append(child)


def child_blocks(node: ast.stmt) -> Iterator[list[ast.stmt]]:
    """Statement lists nested in a statement (a def's or class's body too)."""
    for name in ("body", "orelse", "finalbody"):
        block = getattr(node, name, None)
        if block:
            yield block
    for handler in getattr(node, "handlers", ()) or ():
        yield handler.body
    for case in getattr(node, "cases", ()) or ():
        yield case.body


def statements(tree: ast.Module) -> Iterator[ast.stmt]:
    """Every statement of `tree`, nested ones included (not in source order)."""
    stack = [tree.body]
    while stack:
        for node in stack.pop():
            yield node
            stack.extend(child_blocks(node))


# Concurrency: what a file starts or shares, by the call (or base class) that does it.
_CONCURRENCY_ROOTS = ("threading", "_thread", "multiprocessing", "torch.multiprocessing",
                      "concurrent.futures", "asyncio")
_CONCURRENCY_HEADS = {root.partition(".")[0] for root in _CONCURRENCY_ROOTS}
_THREAD_SYNC = ("Lock", "RLock", "Condition", "Semaphore", "BoundedSemaphore", "Event", "Barrier")
_CONCURRENT_CALLS: dict[str, tuple[str, str]] = {
    "threading.Thread": ("threads", "creates a thread"),
    "threading.Timer": ("threads", "creates a timer thread"),
    "_thread.start_new_thread": ("threads", "starts a thread"),
    "threading.local": ("thread-local state", "keeps state per thread"),
    **{f"threading.{n}": ("thread synchronisation", "synchronises threads") for n in _THREAD_SYNC},
    "multiprocessing.Process": ("processes", "creates a process"),
    "multiprocessing.spawn": ("processes", "starts processes"),
    "multiprocessing.start_processes": ("processes", "starts processes"),
    "multiprocessing.Pool": ("process pool", "a process pool"),
    "multiprocessing.pool.Pool": ("process pool", "a process pool"),
    "multiprocessing.pool.ThreadPool": ("thread pool", "a thread pool"),
    "multiprocessing.dummy.Pool": ("thread pool", "a thread pool"),
    **{f"multiprocessing.{n}": ("inter-process communication", "passes data between processes")
       for n in ("Queue", "SimpleQueue", "JoinableQueue", "Pipe", "Manager")},
    **{f"multiprocessing.{n}": ("process synchronisation", "shares state between processes")
       for n in (*_THREAD_SYNC, "Value", "Array")},
    "concurrent.futures.ThreadPoolExecutor": ("thread pool", "a thread pool"),
    "concurrent.futures.ProcessPoolExecutor": ("process pool", "a process pool"),
    "asyncio.run": ("event loop", "runs an event loop"),
    "asyncio.new_event_loop": ("event loop", "creates an event loop"),
    **{f"asyncio.{n}": ("concurrent coroutines", "runs coroutines concurrently")
       for n in ("gather", "wait", "as_completed", "create_task", "ensure_future", "TaskGroup")},
    "asyncio.to_thread": ("threads", "runs a function in a thread"),
    "asyncio.run_coroutine_threadsafe": ("threads", "hands a coroutine to another thread's loop"),
}
_CONCURRENT_BASES: dict[str, tuple[str, str]] = {
    "threading.Thread": ("threads", "is a thread class"),
    "multiprocessing.Process": ("processes", "is a process class"),
}


# The names (and their dotted prefixes) through which a concurrency API is reached.
_CONCURRENCY_REACH = {".".join(name.split(".")[:n]) for name in (*_CONCURRENT_CALLS, *_CONCURRENT_BASES,
                                                                  "multiprocessing.get_context")
                      for n in range(1, name.count(".") + 2)}


def _concurrency_name(full: str) -> str:
    """`torch.multiprocessing.Pool` -> `multiprocessing.Pool` (the same API)."""
    return full[len("torch."):] if full.startswith("torch.multiprocessing.") or full == "torch.multiprocessing" \
        else full


def _name_pattern(local: str, target: str, text: str) -> str | None:
    """A regex for where `local` (bound to `target`) may reach a concurrency API in `text`, or None
    (`import torch` reaches `torch.multiprocessing` only where the text says `multiprocessing`)."""
    if target.partition(".")[0] not in _CONCURRENCY_HEADS:
        return None
    if _concurrency_name(target) in _CONCURRENCY_REACH:
        return re.escape(local) + r"\b"
    for root in _CONCURRENCY_ROOTS:
        if root.startswith(target + "."):
            rest = root[len(target) + 1:].split(".")
            if not all(part in text for part in rest):
                continue
            return re.escape(local) + "".join(r"\s*\.\s*" + re.escape(p) for p in rest) + r"\b"
    return None


def _lines_naming(text: str, names: Iterable[tuple[str, str]]) -> list[int]:
    """Lines where a name bound to a concurrency API is used (not after a `.` or inside a word).
    Each name is found with str.find and the pattern tried there: a regex scan of the whole text
    took 150 ns a character."""
    starts: list[int] = []
    for local, target in names:
        pattern = _name_pattern(local, target, text)
        if pattern is None:
            continue
        compiled = re.compile(pattern)
        at = text.find(local)
        while at >= 0:
            if (at == 0 or not (text[at - 1].isalnum() or text[at - 1] in "_.")) and compiled.match(text, at):
                starts.append(at)
            at = text.find(local, at + 1)
    return line_numbers(text, starts)


def line_numbers(text: str, offsets: Iterable[int]) -> list[int]:
    """The sorted, distinct 1-based lines of `offsets` in `text` (newlines counted once)."""
    lines: list[int] = []
    at, line = 0, 1
    for offset in sorted(offsets):
        line += text.count("\n", at, offset)
        at = offset
        if not lines or lines[-1] != line:
            lines.append(line)
    return lines


def concurrency_findings(tree: ast.Module, imports: Iterable[Import], text: str) -> list[Finding]:
    """Threads, processes, pools, locks and event loops the file creates (calls and base classes
    resolved through its imports; `ctx = multiprocessing.get_context(...)` counts), never a mere
    import."""
    aliases = import_aliases(imports)
    out: list[Finding] = []
    seen: set[int] = set()
    names = list(aliases.items())
    while names:
        lines = _lines_naming(text, names)
        names = []
        for node in nodes_around(tree, lines) if lines else ():
            if id(node) in seen:  # a node already reported (the next pass goes over it again)
                continue
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                callee = resolve(node.value.func, aliases)
                if callee and _concurrency_name(callee) == "multiprocessing.get_context":
                    for target in node.targets:
                        if isinstance(target, ast.Name) and target.id not in aliases:
                            aliases[target.id] = "multiprocessing"
                            names.append((target.id, "multiprocessing"))
            if isinstance(node, ast.ClassDef):
                for base in node.bases:
                    full = resolve(base, aliases)
                    what = _CONCURRENT_BASES.get(_concurrency_name(full or ""))
                    if what:
                        seen.add(id(node))
                        out.append(Finding(PERF, what[0], node.lineno,
                                           f"`{node.name}` {what[1]} (subclasses `{dotted(base)}`)"))
            elif isinstance(node, ast.Call):
                written = dotted(node.func)
                full = resolve(node.func, aliases) if written else None
                func = node.func
                if written is None and isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call):
                    inner = resolve(func.value.func, aliases)  # get_context("spawn").Process(...)
                    if inner and _concurrency_name(inner) == "multiprocessing.get_context":
                        written = f"{dotted(func.value.func)}(...).{func.attr}"
                        full = f"multiprocessing.{func.attr}"
                what = _CONCURRENT_CALLS.get(_concurrency_name(full or ""))
                if what and written:
                    seen.add(id(node))
                    given = keyword_value(node, "target")
                    runs = dotted(given) if given is not None else None
                    shown = f"{written}(target={runs})" if runs else written
                    out.append(Finding(PERF, what[0], node.lineno, f"{what[1]}: `{shown}`"))
    return out
