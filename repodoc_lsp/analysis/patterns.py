"""Code patterns, performance notes and risky calls, found in the syntax tree.

Each finding names what was found and the line it is on; nothing here is a
guess from text.
"""

from __future__ import annotations

import ast
from bisect import bisect_left
from collections.abc import Iterable

from repodoc_lsp.analysis.model import Finding, FindingCategory, Import

PATTERN = FindingCategory.PATTERN
PERF = FindingCategory.PERFORMANCE
SECURITY = FindingCategory.SECURITY

_ENUM_BASES = {"Enum", "IntEnum", "StrEnum", "Flag", "IntFlag", "enum.Enum", "enum.IntEnum",
               "enum.StrEnum", "enum.Flag", "enum.IntFlag"}
_CONCURRENCY = {"threading", "multiprocessing", "concurrent.futures", "asyncio"}


def _tail(expr: str) -> str:
    """`functools.lru_cache(maxsize=1)` -> `lru_cache`."""
    return expr.split("(", 1)[0].rsplit(".", 1)[-1]


def _head(expr: str) -> str:
    return expr.split("(", 1)[0]


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
        s.name for s in node.body if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef)
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


def import_findings(imports: Iterable[Import]) -> list[Finding]:
    out: list[Finding] = []
    seen: set[str] = set()
    for imp in imports:
        for mod in (imp.module, *(f"{imp.module}.{n}" for n in imp.names)):
            if mod in _CONCURRENCY and mod not in seen:
                seen.add(mod)
                out.append(Finding(PERF, "concurrency", imp.line, f"uses `{mod}` for concurrent work"))
    return out


def _dotted(node: ast.expr) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _aliases(imports: Iterable[Import]) -> dict[str, str]:
    """Local name -> the dotted name it stands for (approximate: `as` names are not kept)."""
    table: dict[str, str] = {}
    for imp in imports:
        if imp.level:
            continue
        if imp.names:
            for name in imp.names:
                table.setdefault(name, f"{imp.module}.{name}")
        else:
            table.setdefault(imp.module.split(".", 1)[0], imp.module.split(".", 1)[0])
    return table


def _kw(call: ast.Call, name: str) -> ast.expr | None:
    for k in call.keywords:
        if k.arg == name:
            return k.value
    return None


def _is_true(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


_UNPICKLE = {"pickle.load", "pickle.loads", "pickle.Unpickler", "cPickle.load", "cPickle.loads",
             "dill.load", "dill.loads", "marshal.load", "marshal.loads", "shelve.open",
             "joblib.load"}
_SUBPROCESS = {"subprocess.run", "subprocess.call", "subprocess.check_call",
               "subprocess.check_output", "subprocess.Popen"}


def _nodes_around(tree: ast.AST, lines: list[int]) -> Iterable[ast.AST]:
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


def call_findings(tree: ast.Module, imports: Iterable[Import], lines: list[int]) -> list[Finding]:
    """Risky calls on or spanning `lines`, resolved through the file's imports
    (`from pickle import loads` counts)."""
    aliases = _aliases(imports)
    out: list[Finding] = []
    for node in _nodes_around(tree, lines):
        if not isinstance(node, ast.Call):
            continue
        name = _dotted(node.func)
        if name is None:
            continue
        head, _, rest = name.partition(".")
        full = aliases.get(head, head) + ("." + rest if rest else "")
        line = node.lineno
        if full in ("eval", "exec", "builtins.eval", "builtins.exec"):
            out.append(Finding(SECURITY, full.rsplit(".", 1)[-1], line,
                               f"`{name}()` runs arbitrary code if its input is not trusted"))
        elif full in _UNPICKLE:
            out.append(Finding(SECURITY, "deserialisation", line,
                               f"`{name}()` can run arbitrary code when loading untrusted data"))
        elif full == "yaml.unsafe_load" or (
            full == "yaml.load" and "Safe" not in ast.unparse(_kw(node, "Loader") or ast.Constant(""))
            and not (len(node.args) > 1 and "Safe" in ast.unparse(node.args[1]))
        ):
            out.append(Finding(SECURITY, "yaml.load", line,
                               f"`{name}()` without a safe Loader can build arbitrary objects"))
        elif full in _SUBPROCESS and _is_true(_kw(node, "shell")):
            out.append(Finding(SECURITY, "shell=True", line,
                               f"`{name}(..., shell=True)` passes a string to the shell"))
        elif full in ("os.system", "os.popen", "subprocess.getoutput", "subprocess.getstatusoutput"):
            out.append(Finding(SECURITY, "shell command", line, f"`{name}()` runs a shell command"))
        elif full == "torch.load":
            weights_only = _kw(node, "weights_only")
            if weights_only is None or (isinstance(weights_only, ast.Constant) and weights_only.value is False):
                out.append(Finding(SECURITY, "torch.load", line,
                                   f"`{name}()` without `weights_only=True` unpickles arbitrary objects"))
        elif full == "tempfile.mktemp":
            out.append(Finding(SECURITY, "mktemp", line,
                               f"`{name}()` is race-prone; `tempfile.mkstemp` is safe"))
    return out
