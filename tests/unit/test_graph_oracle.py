"""The graph's "used by" and "subclassed by" against an independent resolution with `ast`.

A seeded generator writes packages whose `__init__.py` files re-export (by name, by alias,
by star import with and without `__all__`) and user modules that name the definitions every
way Python allows (`from p import X`, `import p.m as q; q.X`, `p.X`, `from p import *`,
base classes); the oracle executes the imports symbolically, module by module, to a fixed
point, and evaluates every name and attribute chain with `ast`. Precision and recall 1.000.
"""

from __future__ import annotations

import ast
import random
from pathlib import Path

import pytest

from repodoc_lsp.config import Settings
from repodoc_lsp.store.workspace import Workspace

Value = tuple[str, str, str]  # ("def", module, qualname), ("mod", module, "") or ("member", module, "C.run")


def generate(root: Path, seed: int) -> dict[str, str]:
    """A workspace of packages p0..p2 (modules m0..m3) and user modules u0..u7; module -> file."""
    rng = random.Random(seed)
    files: dict[str, str] = {}
    defs: list[tuple[str, str]] = []  # (module, name) of classes and functions
    for p in range(3):
        exported: list[tuple[str, str]] = []
        for m in range(4):
            module = f"p{p}.m{m}"
            lines, names = [], []
            for i in range(3):
                cls = f"C{p}{m}{i}"
                base = ""
                if defs and rng.random() < 0.5:
                    bmod, bname = rng.choice([d for d in defs if d[1].startswith("C")])
                    lines.append(f"from {bmod} import {bname} as B{i}")
                    base = f"(B{i})"
                # a subclass may leave `run` to its base: `X.run` names the base's method
                own_run = not base or rng.random() < 0.5
                lines += [f"class {cls}{base}:", "    size = 1",
                          *(["    def run(self):", "        return 1"] if own_run else []), ""]
                names.append(cls)
                lines += [f"def f{p}{m}{i}():", f"    return {cls}", ""]
                names.append(f"f{p}{m}{i}")
            if rng.random() < 0.5:
                lines.append(f"__all__ = {names[: len(names) - 2]!r}")
                public = names[: len(names) - 2]
            else:
                public = names
            files[module] = "\n".join(lines) + "\n"
            defs += [(module, n) for n in names]
            how = rng.choice(["name", "alias", "star"])
            if how == "star":
                exported.append((f"from .m{m} import *", ""))
                exported += [("", n) for n in public]
            elif how == "alias":
                exported.append((f"from .m{m} import {names[0]} as A{m}, {names[1]}", ""))
                exported += [("", f"A{m}"), ("", names[1])]
            else:
                exported.append((f"from .m{m} import {names[0]}", ""))
                exported.append(("", names[0]))
        files[f"p{p}"] = "\n".join(s for s, _ in exported if s) + "\n"
    for u in range(8):
        lines, body = [], []
        for j in range(6):
            p, m = rng.randrange(3), rng.randrange(4)
            module = f"p{p}.m{m}"
            name = rng.choice([n for mod, n in defs if mod == module])
            form = rng.randrange(6)
            if form == 0:
                lines.append(f"import p{p}")
                body.append(f"p{p}.m{m}.{name}" + (".run" if name.startswith("C") and rng.random() < 0.5 else ""))
            elif form == 1:
                lines.append(f"import {module} as q{j}")
                body.append(f"q{j}.{name}")
            elif form == 2:
                lines.append(f"from {module} import {name} as n{j}")
                body.append(f"n{j}")
            elif form == 3:
                lines.append(f"from p{p} import *")
                body.append("str")  # a builtin: names nothing
            elif form == 4:
                lines.append(f"from p{p} import m{m}")
                body.append(f"m{m}.{name}.run" if name.startswith("C") else f"m{m}.{name}")
            else:
                lines.append(f"import p{p}.m{m}")
                if name.startswith("C"):
                    body.append(f"class K{j}(p{p}.m{m}.{name}):\n    pass")
                    continue
                body.append(f"p{p}.m{m}.{name}")
        text = "\n".join(lines) + "\n\n\ndef use():\n"
        text += "".join(f"    {b}\n" for b in body if not b.startswith("class"))
        text += "\n" + "\n\n".join(b for b in body if b.startswith("class")) + "\n"
        files[f"app.u{u}"] = text
    files["app"] = ""
    out = {}
    for module, text in files.items():
        parts = module.split(".")
        rel = "/".join(parts) + ("/__init__.py" if module in ("p0", "p1", "p2", "app") else ".py")
        out[module] = rel
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return out


class Oracle:
    """Imports executed symbolically to a fixed point; names evaluated with `ast`."""

    def __init__(self, root: Path, modules: dict[str, str]) -> None:
        self.modules = modules
        self.trees = {m: ast.parse((root / rel).read_text()) for m, rel in modules.items()}
        self.classes = {(m, node.name): node for m, tree in self.trees.items() for node in tree.body
                        if isinstance(node, ast.ClassDef)}
        self.ns: dict[str, dict[str, Value]] = {m: {} for m in modules}
        changed = True
        while changed:
            changed = False
            for module, tree in self.trees.items():
                ns = self._execute(module, tree)
                if ns != self.ns[module]:
                    self.ns[module], changed = ns, True

    def _absolute(self, module: str, node: ast.ImportFrom) -> str:
        if not node.level:
            return node.module or ""
        package = module if self.modules[module].endswith("__init__.py") else module.rpartition(".")[0]
        return ".".join(x for x in (package, node.module) if x)

    def attr(self, value: Value | None, name: str) -> Value | None:
        if value is None:
            return None
        kind, module, _ = value
        if kind == "mod":
            found = self.ns[module].get(name)
            if found is None and f"{module}.{name}" in self.modules:
                return ("mod", f"{module}.{name}", "")
            return found
        if kind == "def" and (module, value[2]) in self.classes:
            return self.member((module, value[2]), name)
        return None

    def member(self, cls: tuple[str, str], name: str) -> Value | None:
        """An attribute of the class itself (not an instance): its body's names, else its bases'."""
        node = self.classes[cls]
        for statement in node.body:
            if getattr(statement, "name", None) == name or any(
                    getattr(t, "id", None) == name for t in getattr(statement, "targets", ())):
                return ("member", cls[0], f"{cls[1]}.{name}")
        for base in node.bases:
            found = self.evaluate(cls[0], base)
            if found is not None and found[0] == "def" and (found[1], found[2]) in self.classes:
                return self.member((found[1], found[2]), name)
        return None

    def _execute(self, module: str, tree: ast.Module) -> dict[str, Value]:
        ns: dict[str, Value] = {}
        for node in tree.body:
            if isinstance(node, ast.ClassDef | ast.FunctionDef):
                ns[node.name] = ("def", module, node.name)
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.name in self.modules:
                        ns[a.asname or a.name.split(".")[0]] = ("mod", a.name if a.asname else a.name.split(".")[0], "")
            elif isinstance(node, ast.ImportFrom):
                source = self._absolute(module, node)
                for a in node.names:
                    if a.name == "*":
                        exported = self._all(source)
                        ns.update({k: v for k, v in self.ns[source].items() if k in exported})
                    else:
                        value = self.attr(("mod", source, ""), a.name)
                        if value is not None:
                            ns[a.asname or a.name] = value
        return ns

    def _all(self, module: str) -> set[str]:
        for node in self.trees[module].body:
            if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "__all__":
                return set(ast.literal_eval(node.value))
        return {k for k in self.ns[module] if not k.startswith("_")}

    def evaluate(self, module: str, node: ast.expr) -> Value | None:
        if isinstance(node, ast.Name):
            return self.ns[module].get(node.id)
        if isinstance(node, ast.Attribute):
            return self.attr(self.evaluate(module, node.value), node.attr)
        return None

    def uses_and_subclasses(self) -> tuple[set[tuple[Value, str]], set[tuple[Value, Value]]]:
        uses: set[tuple[Value, str]] = set()
        subclasses: set[tuple[Value, Value]] = set()
        for module, tree in self.trees.items():
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom):
                    source = self._absolute(module, node)
                    for a in node.names:
                        if a.name != "*" and (v := self.attr(("mod", source, ""), a.name)) and v[0] == "def":
                            uses.add((v, module))
                elif isinstance(node, ast.Name | ast.Attribute):
                    v = self.evaluate(module, node)
                    if v is not None and v[0] in ("def", "member"):
                        uses.add((v, module))
                elif isinstance(node, ast.ClassDef):
                    for base in node.bases:
                        v = self.evaluate(module, base)
                        if v is not None and v[0] == "def":
                            subclasses.add((v, ("def", module, node.name)))
        return {(v, m) for v, m in uses if v[1] != m}, subclasses


def _score(found: set, expected: set) -> tuple[float, float]:
    hit = len(found & expected)
    return (hit / len(found) if found else 1.0, hit / len(expected) if expected else 1.0)


@pytest.mark.parametrize("seed", range(1, 11))
def test_used_by_and_subclassed_by_match_an_independent_resolution(tmp_path: Path, seed: int) -> None:
    modules = generate(tmp_path, seed)
    module_of = {rel: m for m, rel in modules.items()}
    oracle_uses, oracle_subclasses = Oracle(tmp_path, modules).uses_and_subclasses()
    ws = Workspace(tmp_path, Settings(), use_cache=False)
    ws.scan(jobs=1)
    graph = ws.graph()
    found_uses: set[tuple[Value, str]] = set()
    found_subclasses: set[tuple[Value, Value]] = set()
    for module, rel in modules.items():
        for d in graph.definitions(rel):
            if d.kind == "method":  # `m0.C000.run`: named through its class or a subclass
                found_uses |= {(("member", module, d.qualname), module_of[user]) for user in graph.users(d.key)}
            if "." in d.qualname or d.kind not in ("class", "function"):
                continue
            value = ("def", module, d.qualname)
            found_uses |= {(value, module_of[user]) for user in graph.users(d.key)}
            found_subclasses |= {(value, ("def", module_of[r], q)) for r, q in graph.subclasses(d.key)}
    assert len(oracle_uses) > 40 and len(oracle_subclasses) > 5  # the workspace exercises both
    assert sum(v[0] == "member" for v, _ in oracle_uses) > 1  # methods too
    assert _score(found_uses, oracle_uses) == (1.0, 1.0), (found_uses - oracle_uses, oracle_uses - found_uses)
    assert _score(found_subclasses, oracle_subclasses) == (1.0, 1.0), (
        found_subclasses - oracle_subclasses, oracle_subclasses - found_subclasses)


def _answers(ws: Workspace) -> dict:
    graph = ws.graph()
    found = {}
    for rel in sorted(ws.facts):
        for d in graph.definitions(rel):
            found[d.key] = (graph.users(d.key), graph.subclasses(d.key), graph.bases(d.key))
    return found


@pytest.mark.parametrize("seed", [5, 6, 7])
def test_saves_update_the_graph_as_a_fresh_build_would(tmp_path: Path, seed: int) -> None:
    """Files rewritten one at a time (other seeds' versions: re-exports, bases and uses change),
    one removed and one added: after each step the graph equals one built afresh."""
    rng = random.Random(seed)
    modules = generate(tmp_path / "ws", seed)
    ws = Workspace(tmp_path / "ws", Settings(), use_cache=False)
    ws.scan(jobs=1)
    ws.graph()
    for i in range(3):  # other versions of every file
        generate(tmp_path / f"v{i}", seed * 100 + i)
    rels = sorted(modules.values())
    for step in range(8):
        version = rng.randrange(3)
        rel = rng.choice(rels)
        if step == 5:
            (ws.root / rel).unlink()
        else:
            (ws.root / rel).parent.mkdir(parents=True, exist_ok=True)
            (ws.root / rel).write_bytes((tmp_path / f"v{version}" / rel).read_bytes())
        change = ws.update_file(rel)
        assert change.files <= {rel}
        fresh = Workspace(ws.root, Settings(), use_cache=False)
        fresh.scan(jobs=1)
        assert _answers(ws) == _answers(fresh), f"step {step}: {rel}"


def _everything(ws: Workspace) -> tuple[dict, dict]:
    """Every graph answer, and what each file's docstrings mention."""
    graph = ws.graph()
    return _answers(ws), {rel: graph.mentioned(rel) for rel in sorted(ws.facts)}


@pytest.mark.parametrize("seed", [3, 8])
def test_files_added_and_removed_in_batches_update_the_graph_as_a_fresh_build_would(tmp_path: Path,
                                                                                     seed: int) -> None:
    """A checkout: files appear and vanish in batches (a package's `__init__.py` among them, so
    module names of files that stay change) and one at a time; the graph is re-linked where the
    changed names reach, never rebuilt, and after each step equals one built afresh."""
    rng = random.Random(seed)
    generate(tmp_path / "full", seed)
    rels = sorted(p.relative_to(tmp_path / "full").as_posix() for p in (tmp_path / "full").rglob("*.py"))
    package = [rel for rel in rels if rel.startswith("p2/")]  # a top-level package, all of it
    later = set(rng.sample(rels, len(rels) // 2)) | {"p1/__init__.py", *package}
    root = tmp_path / "ws"

    def put(rel: str, text: bytes | None = None) -> None:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes((tmp_path / "full" / rel).read_bytes() if text is None else text)

    for rel in sorted(set(rels) - later):
        put(rel)
    (root / "app/notes.py").write_text('"""See `p1.m0.C100` and :class:`m0.C100`."""\n')
    # a folder without __init__.py that appears: only `ns.tool` and `tool` are new names, not `ns`
    (root / "app/tools.py").write_text("import ns.tool\nfrom ns.tool import helper\n\nns.tool.helper(helper)\n")
    (tmp_path / "full/ns").mkdir()
    (tmp_path / "full/ns/tool.py").write_text("def helper(x):\n    return x\n")
    package.append("ns/tool.py")
    ws = Workspace(root, Settings(), use_cache=False)
    ws.scan(jobs=1)
    graph = ws.graph()
    first = sorted({*sorted(later)[: len(later) // 2], "p1/__init__.py", *package})
    later.add("ns/tool.py")
    gone = rng.sample(sorted(set(rels) - later), 3)
    steps: list[tuple[list[str], list[str]]] = [
        (first, []),  # files appear (p1 becomes a package: its modules' names change; p2 is new)
        ([], gone),  # files vanish
        (sorted(later - set(first)), ["p1/__init__.py"]),  # the rest appear, p1 is no package again
        ([gone[0]], []),  # one file comes back alone
    ]
    for step, (added, removed) in enumerate(steps):
        for rel in added:
            put(rel)
        for rel in removed:
            (root / rel).unlink()
        if len(added) == 1:
            change = ws.update_file(added[0])
        else:  # and a file that stays changes in the same batch
            changed = rng.choice(sorted(set(ws.facts) - set(removed)))
            put(changed, (root / changed).read_bytes() + b"\n\nclass Extra(object):\n    pass\n")
            change = ws.update_files([*added, *removed, changed])
        assert change.structural
        assert ws.graph() is graph, "rebuilt, not updated"
        fresh = Workspace(root, Settings(), use_cache=False)
        fresh.scan(jobs=1)
        assert _everything(ws) == _everything(fresh), f"step {step}"
    assert ws.relations.module_of["p1/m0.py"] == "m0"  # the last steps did change module names
    assert ws.graph().users(("ns/tool.py", "helper")) == {"app/tools.py": (2, 4)}
