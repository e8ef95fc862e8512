"""The package's layout: no import cycle between its modules, and the server's features
registered on the server type so that pygls hands every handler the server."""

from __future__ import annotations

import ast
import functools
import typing
from pathlib import Path

from pygls.feature_manager import has_ls_param_or_annotation

import repodoc_lsp
from repodoc_lsp.server import app
from repodoc_lsp.server.server import RepodocServer

PACKAGE = Path(repodoc_lsp.__file__).parent


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = ["repodoc_lsp", *path.relative_to(PACKAGE).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


@functools.cache
def _tree(path: Path) -> ast.Module:
    """A module's syntax tree, parsed once for all the tests of this file."""
    return ast.parse(path.read_text(encoding="utf-8"))


def import_graph() -> dict[str, set[str]]:
    """Module -> the package's modules it imports: every import, at the top, in a function or
    under TYPE_CHECKING, and the packages whose `__init__` such an import runs (a cycle through
    any of them is a layer reaching back up)."""
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        deps: set[str] = set()
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.Import):
                deps.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*up, base] if base else up)
                deps.update(f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names)
        # importing `a.b.c` runs `a/b/__init__.py` first, so that package's imports are on the path
        # too (its own modules excepted: their package is always being imported before them)
        deps.update(parent for d in list(deps) for i in range(2, d.count(".") + 1)
                    if not name.startswith((parent := ".".join(d.split(".")[:i])) + "."))
        graph[name] = {d for d in deps if d in modules and d != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        order[v] = low[v] = len(order)
        stack.append(v)
        for w in graph[v]:
            if w not in order:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], order[w])
        if low[v] == order[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in order:
            visit(v)
    return found


def test_cycles_are_found() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_in_the_package() -> None:
    graph = import_graph()
    assert "repodoc_lsp.server.server" in graph["repodoc_lsp.server.hover"]  # the graph sees imports
    assert cycles(graph) == []


def test_the_server_type_registers_no_feature() -> None:
    """Features import the server type, never the other way: only `app` lists them."""
    graph = import_graph()
    features = {m.__name__ for m in app.FEATURES}
    assert not graph["repodoc_lsp.server.server"] & features
    importers = {name for name, deps in graph.items() if "repodoc_lsp.server.app" in deps}
    assert importers == {"repodoc_lsp.server"}


def test_every_module_with_handlers_is_listed() -> None:
    """A server module that defines `register` is in FEATURES (else its handlers never exist)."""
    registering = {name for name, path in _modules().items() if name.startswith("repodoc_lsp.server.")
                   and "\ndef register(" in path.read_text(encoding="utf-8")}
    assert registering == {m.__name__ for m in app.FEATURES}


def test_every_handler_gets_the_server() -> None:
    """pygls passes the server to a handler whose first parameter is `ls` or annotated with the
    server's type, and converts a command's arguments with `typing.get_type_hints` when the
    command runs: an annotation that does not resolve at run time makes every call of it fail."""
    server = app.create_server()
    fm = server.protocol.fm
    handlers = {**fm.features, **fm.commands}
    assert {"textDocument/hover", "initialize", "shutdown", "repodoc.generate", "repodoc.showPage"} <= set(handlers)
    for name, handler in handlers.items():
        original = getattr(handler, "func", handler)
        assert has_ls_param_or_annotation(original, RepodocServer), name
        hints = typing.get_type_hints(original)  # what pygls does to a command's handler
        first = next(iter(original.__code__.co_varnames))
        assert hints[first] is RepodocServer, name


MAX_FUNCTION_LINES = 80  # issue 37: a function reads in one screen or two


def long_functions(tree: ast.AST) -> list[tuple[str, int]]:
    """(name, lines) of each function or method in `tree`, nested ones too, longer than
    MAX_FUNCTION_LINES (from its `def` line to its last line)."""
    return [(node.name, node.end_lineno - node.lineno + 1) for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno is not None
            and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES]


def test_long_functions_are_found() -> None:
    assert long_functions(ast.parse("def fits():\n" + "    pass\n" * (MAX_FUNCTION_LINES - 1))) == []
    nested = "class C:\n    async def method(self):\n" + "        pass\n" * MAX_FUNCTION_LINES
    assert long_functions(ast.parse(nested)) == [("method", MAX_FUNCTION_LINES + 1)]


def test_no_function_over_80_lines() -> None:
    found = {f"{name.removeprefix('repodoc_lsp.')}:{function}": lines for name, path in _modules().items()
             for function, lines in long_functions(_tree(path))}
    assert found == {}


MAX_MODULE_LINES = 500  # issue 37: a module is one room, read whole


def test_no_module_over_500_lines() -> None:
    found = {name: lines for name, path in _modules().items()
             if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES}
    assert found == {}
