"""Name resolution over the files' views: what a name read in a file names, and which files (and
module names) the answer consulted.

A name is resolved the way Python would bind it: a file's own definitions, then its imports, then its
star imports (a module's `__all__`, else its public names), then a submodule of a package; so
`from .linear import Linear` in `torch/nn/modules/__init__.py` and `from .modules import *` in
`torch/nn/__init__.py` make `torch.nn.Linear`, `nn.Linear` and `from torch.nn import Linear` all name
`torch/nn/modules/linear.py`'s class. Attribute chains follow modules and classes (with members
inherited from workspace classes); a value's type is never inferred. Every answer carries the files
it consulted (`deps`): a change to one of them re-links the file that asked.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from dataclasses import dataclass

from repodoc_lsp.analysis.model import reference_lines
from repodoc_lsp.analysis.relations import Relations
from repodoc_lsp.knowledge.views import Key, View

# A dependency on a module name (whichever file is that module, or none), beside the files a
# resolution consulted: files that appear or vanish re-link only the files that looked up their
# names. No file's path starts with it.
NAME = "\x00"
NOWHERE: Key = ("", "")

# definition -> the lines of a file naming it: one name's lines as `reference_lines` gives them
# (sorted, each once: most definitions are named by one name of the file), a set once there are more
Found = dict[Key, "tuple[int, ...] | set[int]"]


@dataclass(slots=True)
class Linked:
    """What linking one file found: the definitions it names (with the lines), its classes with
    workspace bases (in `_bases`), the definitions its docstrings' mentions name, and the files and
    names it consulted."""

    out: Found
    classes: list[Key]
    mentioned: dict[str, Key]
    deps: set[str]


class Resolver:
    """Resolution over `_views` (rel -> View), memoised per file and name with the files consulted
    (`_memo`, emptied before and after each link pass). `_bases` holds the bases of the classes of
    the files linked so far (a class of a file not linked yet has its bases resolved when asked)."""

    def __init__(self, relations: Relations) -> None:
        self.relations = relations
        self._views: MutableMapping[str, View] = {}
        # file -> name -> (what it names, the files consulted): a table per file, tuples not sets
        self._memo: dict[str, dict[str, tuple[Key | None, tuple[str, ...]]]] = {}
        self._bases: dict[Key, tuple[Key, ...]] = {}
        self._names: dict[str, str] = {}  # module name -> NAME + module name, one string per name

    def _forget_lookups(self) -> None:
        """Forget what lookups answered: before and after a link pass, which changes the answers."""
        self._memo.clear()

    # -- one file ----------------------------------------------------------------------
    def _link(self, rel: str) -> Linked:
        """Resolve what the file `rel` names (its imports, then every dotted name it reads), its
        classes' bases and the names its docstrings mention."""
        view = self._views[rel]
        deps: set[str] = {rel}
        out: Found = {}
        for module, name, line in view.imported:
            target = self._import(module, name, deps, set())
            if target is not None:
                _add(out, target, (line,))
        self._link_names(view, deps, out)
        out.pop(NOWHERE, None)
        return Linked(out, self._link_bases(view, deps), self._link_mentions(view, deps), deps)

    def _link_names(self, view: View, deps: set[str], out: Found) -> None:
        """Each dotted name the file reads: every key found on the way is named on its lines. A
        name's head is looked up in the file's own table of the memo directly (most are there)."""
        rel, memo = view.rel, self._memo
        own = memo.get(rel)
        if own is None:
            own = memo[rel] = {}
        for dotted, lines in reference_lines(view.refs):
            key: Key = (rel, "")
            for part in dotted.split("."):
                if key[1]:
                    step = self._member(key, part, deps, set())
                else:
                    table = own if key[0] is rel else memo.get(key[0])
                    hit = None if table is None else table.get(part)
                    if hit is None:
                        step = self._lookup(key[0], part, deps, set())
                    else:
                        step = hit[0]
                        if hit[1]:
                            deps.update(hit[1])
                if step is None:
                    break
                key = step
                _add(out, key, lines)

    def _link_bases(self, view: View, deps: set[str]) -> list[Key]:
        """The classes of the file that name workspace classes as their bases (itself never), their
        bases written to `_bases` as each is resolved (a later class's lookups read them)."""
        classes = []
        rel = view.rel
        for qual, names in view.bases.items():
            found = []
            for dotted in names:
                target = self._resolve(rel, dotted, deps)
                if target is not None and self._kind(target) == "class" and target != (rel, qual):
                    found.append(target)
            if found:
                key = (rel, qual)
                classes.append(key)
                self._bases[key] = tuple(dict.fromkeys(found))
        return classes

    def _link_mentions(self, view: View, deps: set[str]) -> dict[str, Key]:
        """The definitions the names the file's docstrings mention resolve to, in the file's
        namespace or from the workspace's top."""
        mentioned = {}
        for dotted in view.mentions:
            target = self._resolve(view.rel, dotted, deps) or self._absolute(dotted, deps)
            if target is not None and target != NOWHERE:
                mentioned[dotted] = target
        return mentioned

    # -- lookups -------------------------------------------------------------------------
    def _resolve(self, rel: str, dotted: str, deps: set[str]) -> Key | None:
        parts = dotted.split(".")
        key = self._lookup(rel, parts[0], deps, set())
        for part in parts[1:]:
            if key is None:
                return None
            key = self._member(key, part, deps, set())
        return key

    def _absolute(self, dotted: str, deps: set[str]) -> Key | None:
        """A dotted name read from the workspace's top: its longest module prefix, then members."""
        parts = dotted.split(".")
        for i in range(len(parts), 0, -1):
            key = self._module(".".join(parts[:i]), deps)
            if key is None:
                continue
            for part in parts[i:]:
                key = self._member(key, part, deps, set()) if key is not None else None
            return key
        return None

    def _kind(self, key: Key) -> str:
        view = self._views.get(key[0])
        return view.kind(key[1]) if view else ""

    def _module(self, module: str, deps: set[str]) -> Key | None:
        """The module of that dotted name, if a workspace file is it; the name is a dependency
        either way (a file that appears or vanishes changes the answer), or, when no workspace
        module starts as it does, its top level."""
        top = module.partition(".")[0]
        looked = module if top in self.relations.top_level else top  # `os.path`: its top level stands for it
        name = self._names.get(looked)
        if name is None:
            name = self._names[looked] = NAME + looked
        deps.add(name)
        rel = self.relations.file_of.get(module)
        return (rel, "") if rel is not None and rel in self._views else None

    def _import(self, module: str, name: str, deps: set[str], seen: set[tuple[str, str]]) -> Key | None:
        """What `from module import name` (name "": `import module`) names: a name of the
        module, else its submodule."""
        if not name:
            return self._module(module, deps)
        base = self._module(module, deps)
        found = None if base is None else self._lookup(base[0], name, deps, seen)
        if found is None:
            found = self._module(f"{module}.{name}" if module else name, deps)
        return found

    def _lookup(self, rel: str, name: str, deps: set[str], seen: set[tuple[str, str]]) -> Key | None:
        """What `name` is in file `rel`'s namespace (`_namespace`), memoised with the files consulted."""
        table = self._memo.get(rel)
        if table is None:
            table = self._memo[rel] = {}
        else:
            memo = table.get(name)
            if memo is not None:
                deps.update(memo[1])
                return memo[0]
        if (rel, name) in seen:
            return None
        seen.add((rel, name))
        mine: set[str] = {rel}
        found = self._namespace(rel, name, mine, seen)
        deps |= mine
        table[name] = (found, tuple(mine))
        return found

    def _namespace(self, rel: str, name: str, deps: set[str], seen: set[tuple[str, str]]) -> Key | None:
        """`name` in file `rel`: a definition, an import, a star import, a submodule of a package."""
        view = self._views.get(rel)
        if view is None:
            return None
        if name in view.defs and name:
            return (rel, name)
        bound = view.bindings.get(name)
        if bound is not None:
            return self._import(bound[0], bound[1], deps, seen)
        for module in view.stars:
            star = self._module(module, deps)
            if star is None:
                continue
            deps.add(star[0])  # its `__all__` or names decide, even when `name` is not among them
            exported = self._views[star[0]].all_names
            if (name in exported) if exported else not name.startswith("_"):
                found = self._lookup(star[0], name, deps, seen)
                if found is not None:
                    return found
        if rel.endswith("__init__.py"):
            package = self.relations.module_of.get(rel)
            if package:
                return self._module(f"{package}.{name}", deps)
        return None

    def _member(self, key: Key, name: str, deps: set[str], seen: set[Key]) -> Key | None:
        """`name` looked up on a module or a class (members inherited from workspace classes)."""
        rel, qual = key
        if not qual:
            return self._lookup(rel, name, deps, set())
        if key in seen or self._kind(key) != "class":
            return None
        seen.add(key)
        deps.add(rel)
        view = self._views[rel]
        member = f"{qual}.{name}"
        if member in view.defs:
            return (rel, member)
        bases = self._bases.get(key)
        if bases is None:  # not linked yet (building): resolve the bases now
            bases = tuple(b for d in view.bases.get(qual, ())
                          if (b := self._resolve(rel, d, deps)) is not None and self._kind(b) == "class")
        for base in bases:
            found = self._member(base, name, deps, seen)
            if found is not None:
                return found
        return None


def _add(out: Found, key: Key, lines: tuple[int, ...]) -> None:
    """`lines` name `key`: a tuple kept as given while it is the only one (most), else a set."""
    held = out.get(key)
    if held is None:
        out[key] = lines
    elif isinstance(held, tuple):
        out[key] = {*held, *lines}
    else:
        held.update(lines)
