"""The project's own modules as Python imports them: its top-level packages (at its root or in
`src/`, `lib/`, `python/`; sub-projects' when it has none), their files and module names, and
what is not the project's (importable here, or a declared dependency)."""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, NamedTuple

from repodoc_lsp.analysis.model import Import
from repodoc_lsp.analysis.relations import absolute_module, is_test_file, module_table
from repodoc_lsp.refs.outside import declared_dependencies, external

if TYPE_CHECKING:
    from repodoc_lsp.store.workspace import Workspace

# folders a project's importable packages live in (besides its root); others hold tests, examples
_PACKAGE_ROOTS = frozenset({"", "src", "lib", "python"})
_PROJECT_FILES = ("pyproject.toml", "setup.py", "setup.cfg")
_NOT_PROJECT = frozenset({"tests", "test", "testing", "docs", "doc", "examples", "example", "conftest", "setup",
                          "noxfile", "tasks", "benchmarks", "bench", "scripts", "fabfile", "conf"})


class Modules(NamedTuple):
    """The module name of each file of a workspace, and the file of each module name."""

    module_of: Mapping[str, str]
    file_of: Mapping[str, str]


def modules_by_name(files: Iterable[str]) -> Modules:
    """The files' module names made from their names alone, as their import relations have them (building
    those from every file's imports for them was a third of a check after an edit)."""
    return Modules(*module_table(set(files)))


class Project:
    """The project's modules of a workspace, worked out once (a `Resolver` lives for one check).
    `modules`: its files' module names when known (else its import relations')."""

    def __init__(self, ws: Workspace, modules: Modules | None = None) -> None:
        self.ws = ws
        self._modules = modules
        self._tops: frozenset[str] | None = None
        self._own: frozenset[str] | None = None
        self._deps: frozenset[str] | None = None
        self._module_of_rel: dict[str, str] = {}
        self._rel_of_module: dict[str, str] = {}

    def modules(self) -> Modules:
        """Every file's module name and every module name's file (the project's or not)."""
        if self._modules is None:
            relations = self.ws.relations
            self._modules = Modules(relations.module_of, relations.file_of)
        return self._modules

    def tops(self) -> frozenset[str]:
        """The project's own top-level importable names: packages and modules at its root or in
        `src/` (or `lib/`, `python/`), not a test's folder of loose files nor an example project."""
        if self._tops is None:
            self._own_files()
            self._tops = frozenset({module.split(".")[0] for module in self._module_of_rel.values()})
        return self._tops

    def owns(self, rel: str) -> bool:
        """Whether `rel` is a module of the project's own packages (not a test file)."""
        return rel in self._own_files()

    def _own_files(self) -> frozenset[str]:
        """The files of the project's own packages, with their module names as Python imports them
        (a folder without `__init__.py` inside a package is a namespace package: `flask.sansio.app`)."""
        if self._own is None:
            for top, place in self._top_places().items():
                for rel in self.modules().module_of:
                    if rel == place:
                        self._module_of_rel[rel] = top
                    elif rel.startswith(place + "/") and not is_test_file(rel):
                        tail = rel[len(place) + 1:].rsplit(".", 1)[0].split("/")
                        if tail[-1] == "__init__":
                            tail = tail[:-1]
                        if all(t.isidentifier() for t in tail):
                            self._module_of_rel[rel] = ".".join([top, *tail])
            self._rel_of_module = {m: r for r, m in sorted(self._module_of_rel.items(), reverse=True)}
            self._own = frozenset(self._module_of_rel)
        return self._own

    def _top_places(self) -> dict[str, str]:
        """Top-level name -> its package folder, or its module file."""
        tops: dict[str, str] = {}
        for relaxed in (False, True):  # relaxed: no package at the root, in sub-projects' folders
            for rel, module in self.modules().module_of.items():
                names = module.split(".")
                depth = len(names) - (0 if rel.endswith(("__init__.py", "__init__.pyi")) else 1)
                folders = rel.split("/")[:-1]
                holder = "/".join(folders[: len(folders) - depth]) if depth <= len(folders) else "?"
                if names[0] in _NOT_PROJECT or is_test_file(rel) or names[0].startswith("test_"):
                    continue
                if holder in _PACKAGE_ROOTS or (relaxed and any(
                        (self.ws.root / holder / marker).is_file() for marker in _PROJECT_FILES)):
                    place = posixpath.join(holder, names[0])
                    tops.setdefault(names[0], place if depth else rel)
            if tops:
                break
        return tops

    def file_of(self, module: str) -> str | None:
        """The workspace file of a module name (the project's own first)."""
        self._own_files()
        return self._rel_of_module.get(module) or self.modules().file_of.get(module)

    def module_name(self, rel: str) -> str:
        self._own_files()
        return self._module_of_rel.get(rel) or self.modules().module_of.get(rel, "")

    def absolute(self, rel: str, imp: Import) -> str:
        """An import's absolute module, relative ones resolved against the file's module name."""
        if not imp.level:
            return imp.module
        return absolute_module(self.module_name(rel), rel.endswith(("__init__.py", "__init__.pyi")), imp)

    def external_top(self, top: str) -> bool:
        """A module that is not the project's: importable here, or a declared dependency."""
        return top in self._declared() or external(top)

    def _declared(self) -> frozenset[str]:
        """The import names of the project's declared dependencies (pyproject dependencies and
        extras, requirements files, setup.cfg), as distribution names normalised (`-` -> `_`)."""
        if self._deps is None:
            self._deps = frozenset(declared_dependencies(self.ws.root))
        return self._deps

    def module_prefix(self, parts: list[str]) -> tuple[str, list[str]]:
        """The longest leading run of `parts` naming one of the project's modules, and the rest."""
        if parts[0] not in self.tops():
            return "", parts
        for i in range(len(parts), 0, -1):
            name = ".".join(parts[:i])
            if self.file_of(name):
                return name, parts[i:]
        return "", parts
