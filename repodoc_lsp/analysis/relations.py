"""Relations between the files of a workspace: which module a file is, what
its imports resolve to, who imports it, and which tests do.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from collections.abc import Iterable, Mapping, MutableMapping

from repodoc_lsp.analysis.model import Import

STDLIB = frozenset(sys.stdlib_module_names) | {"__future__"}


def is_test_file(rel: str) -> bool:
    parts = rel.split("/")
    name = parts[-1]
    if not name.endswith(".py"):
        return False
    return (
        name.startswith("test_")
        or name.endswith("_test.py")
        or name == "conftest.py"
        or any(p in ("tests", "test", "testing") for p in parts[:-1])
    )


def module_names(rel: str, files: set[str]) -> list[str]:
    """Dotted names a Python file is importable as: from its package root, and from the root.

    From a package root below the workspace's root, not by a name of the standard library
    (`tools/typing.py`, `src/json/__init__.py`): Python finds the standard library's module first
    on every path but the first one (the workspace's root for `python -m`, a script's own folder),
    so `import typing` anywhere else is the standard library's, not that file."""
    if not rel.endswith((".py", ".pyi")):
        return []
    parts = rel.rsplit(".", 1)[0].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    if not parts or not all(p.isidentifier() for p in parts[-1:]):
        return []
    # Walk up while the folder is a package (has __init__.py).
    start = len(rel.split("/")) - 1  # index of the file's folder in parts-space
    top = start
    folders = rel.split("/")[:-1]
    while top > 0 and "/".join(folders[:top]) + "/__init__.py" in files:
        top -= 1
    names = []
    by_package = ".".join(parts[top:])
    if by_package and (not top or parts[top] not in STDLIB):
        names.append(by_package)
    from_root = ".".join(parts)
    if from_root and from_root not in names and all(p.isidentifier() for p in parts):
        names.append(from_root)
    return names



def module_table(files: set[str]) -> tuple[dict[str, str], dict[str, str]]:
    """file -> its module name, and module name -> its file (the first by path): what the files' names
    say, without their imports."""
    module_of: dict[str, str] = {}
    file_of: dict[str, str] = {}
    for rel in sorted(files):
        names = module_names(rel, files)
        if names:
            module_of[rel] = names[0]
        for name in names:
            file_of.setdefault(name, rel)
    return module_of, file_of


def absolute_module(module: str, is_package: bool, imp: Import) -> str:
    """The absolute module a relative import (`imp.level` > 0) names, from the module name of the
    file it is in and whether that file is a package's `__init__`; as written when it climbs past
    the top."""
    package = module.split(".") if module else []
    if not is_package and package:
        package = package[:-1]
    up = imp.level - 1
    if up > len(package):
        return imp.module
    package = package[: len(package) - up] if up else package
    tail = imp.module.lstrip(".")
    return ".".join([*package, tail] if tail else package)

Users = Mapping[str, Iterable[str]]  # target file -> the files importing it
NameUsers = Mapping[tuple[str, str], Iterable[str]]  # (target file, imported name) -> the files importing it


class Relations:
    """Import graph of a workspace. Rebuild when files are added or removed;
    `update` when one file's imports change."""

    def __init__(self, imports: Mapping[str, Iterable[Import]], saved: tuple[Users, NameUsers] | None = None) -> None:
        """The relations of the files of `imports`. `saved`: `imported_by` and `name_users` as made of these
        very imports (`saved_tables`), taken as they are: `imports` is then kept as given (a mapping that
        makes a file's imports when first read) and a file's are resolved only when asked (`links_of`)."""
        self.files = set(imports)
        self.module_of, self.file_of = module_table(self.files)
        self.top_level = {name.split(".", 1)[0] for name in self.file_of}
        self.imported_by: dict[str, set[str]] = defaultdict(set)
        # (target file, imported name) -> importing files
        self.name_users: dict[tuple[str, str], set[str]] = defaultdict(set)
        self._imports: MutableMapping[str, tuple[Import, ...]] = {}
        # rel -> (category, target files, absolute module) of each import, in the order of
        # `_imports[rel]`; the target files: one per imported name (see `resolve`). No table per
        # import besides (import -> targets, a file's (target, name) pairs: more than a third of the
        # relations' memory on a large workspace): `targets_of` reads this, `update` resolves a file's old pairs again
        # (the same files: `file_of` is fixed for a Relations' life)
        self.links: dict[str, tuple[tuple[str, tuple[str, ...], str], ...]] = {}
        self._tests: frozenset[str] | None = None  # the test files (`is_test_file`), made when first asked
        if saved is not None:
            self._imports = imports  # type: ignore[assignment]  # a file's read (and resolved) when asked
            self.imported_by.update((target, set(users)) for target, users in saved[0].items())
            self.name_users.update((pair, set(users)) for pair, users in saved[1].items())
            return
        for rel, imps in imports.items():
            self.update(rel, imps)

    def saved_tables(self) -> tuple[dict[str, list[str]], dict[tuple[str, str], list[str]]]:
        """`imported_by` and `name_users` as `Relations(imports, saved)` takes them (empty entries left out)."""
        return ({target: sorted(users) for target, users in self.imported_by.items() if users},
                {pair: sorted(users) for pair, users in self.name_users.items() if users})

    def links_of(self, rel: str) -> tuple[tuple[str, tuple[str, ...], str], ...]:
        """(category, target files, absolute module) of each import of `rel`, in order."""
        found = self.links.get(rel)
        if found is None:
            if rel not in self._imports:
                return ()
            found = self.links[rel] = tuple(link for link, _ in self._resolved(rel, self._imports[rel]))
        return found

    def update(self, rel: str, imports: Iterable[Import]) -> set[str]:
        """Re-resolve one file's imports; returns the files whose "Imported by" changed."""
        links = self.links_of(rel)
        old = {t for _, targets, _ in links for t in targets}
        for imp, (_, _, module) in zip(self._imports.get(rel, ()), links, strict=True):
            for target, name in self._resolve(module, imp):
                if name and target != rel:
                    self.name_users[(target, name)].discard(rel)
        for target in old:
            self.imported_by[target].discard(rel)
        imps = tuple(imports)
        self._imports[rel] = imps
        new: set[str] = set()
        resolved = self._resolved(rel, imps)
        for (_, targets, _), pairs in resolved:
            for target in targets:
                if target != rel:
                    self.imported_by[target].add(rel)
                    new.add(target)
            for target, name in pairs:
                if name and target != rel:
                    self.name_users[(target, name)].add(rel)
        self.links[rel] = tuple(link for link, _ in resolved)
        return old ^ new

    def _resolved(self, rel: str, imports: Iterable[Import]
                  ) -> list[tuple[tuple[str, tuple[str, ...], str], list[tuple[str, str]]]]:
        """Each import's (category, target files, absolute module) and (file, name) pairs (`resolve`)."""
        resolved = []
        for imp in imports:
            # a relative one's made here: every file's `from . import x` its own string otherwise
            module = sys.intern(self.absolute(rel, imp)) if imp.level else imp.module
            pairs = self._resolve(module, imp)
            if not pairs:
                targets: tuple[str, ...] = ()
            elif len(pairs) == 1:
                targets = (pairs[0][0],)
            else:
                targets = tuple(dict.fromkeys(t for t, _ in pairs))
            resolved.append(((self._category(imp, targets), targets, module), pairs))
        return resolved

    def target(self, rel: str, imp: Import) -> str | None:
        """The first file an import names (its link in a page)."""
        targets = self.targets_of(rel, imp)
        return targets[0] if targets else None

    def targets_of(self, rel: str, imp: Import) -> tuple[str, ...]:
        """The workspace files an import of `rel` names."""
        for known, (_, targets, _) in zip(self._imports.get(rel, ()), self.links_of(rel), strict=True):
            if known == imp:
                return targets
        return ()

    def imports_of(self, rel: str) -> tuple[Import, ...]:
        return self._imports.get(rel, ())

    def absolute(self, rel: str, imp: Import) -> str:
        """The absolute dotted module of an import (relative ones resolved against the file); of a
        path import (`level` -1: `#include`, `./x` of JS/TS, Rust's `mod x;`), the workspace file it
        names, else its path as written."""
        if not imp.level:
            return imp.module
        if imp.level < 0:
            from repodoc_lsp.analysis.treesitter import resolve_path_import

            return resolve_path_import(rel, imp, self.files) or imp.module
        return absolute_module(self.module_of.get(rel, ""), rel.endswith("__init__.py"), imp)

    def resolve(self, rel: str, imp: Import) -> list[tuple[str, str]]:
        """One (file, name) per imported name: `from pkg import a` names the module `pkg.a`
        when it is a file of the workspace (name ""), else `pkg` (name "a"); `import pkg.mod`
        names `pkg.mod` only."""
        return self._resolve(self.absolute(rel, imp), imp)

    def _resolve(self, module: str, imp: Import) -> list[tuple[str, str]]:
        if imp.level < 0:
            return [(module, "")] if module in self.files else []
        if module.startswith(".") or (module and module.split(".", 1)[0] not in self.top_level):
            return []  # every module of the workspace starts with a top-level name
        base = self.file_of.get(module) if module else None
        if not imp.names:
            return [(base, "")] if base else []
        pairs: list[tuple[str, str]] = []
        for name in imp.names:
            sub = self.file_of.get(f"{module}.{name}" if module else name)
            if sub:
                pairs.append((sub, ""))
            elif base:
                pairs.append((base, name))
        return pairs

    def category(self, rel: str, imp: Import) -> str:
        """'workspace', 'stdlib' or 'third-party'."""
        return self._category(imp, self.targets_of(rel, imp))

    def _category(self, imp: Import, targets: tuple[str, ...]) -> str:
        if imp.level > 0 or targets:
            return "workspace"
        if imp.level < 0:
            return "third-party"
        top = imp.module.split(".", 1)[0]
        if top in STDLIB:
            return "stdlib"
        if top in self.top_level:
            return "workspace"
        return "third-party"

    def tests_of(self, rel: str) -> list[str]:
        importers = self.imported_by.get(rel)
        if not importers:
            return []
        tests = self._tests
        if tests is None:  # the test files among them, once (a package's `__init__.py` can have thousands of importers)
            tests = self._tests = frozenset(f for f in self.files if is_test_file(f))
        found = importers & tests
        if not importers <= self.files:  # none: every importer is a file of the workspace
            found |= {f for f in importers if f not in self.files and is_test_file(f)}
        return sorted(found)

    def importers(self, rel: str) -> list[str]:
        return sorted(self.imported_by.get(rel, ()))

    def importer_count(self, rel: str) -> int:
        """How many files import `rel` (what a folder's index and llms.txt rank by)."""
        return len(self.imported_by.get(rel, ()))
