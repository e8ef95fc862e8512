"""The symbol graph on a small workspace: re-exports, aliases, stars, members, bases, updates."""

from __future__ import annotations

from pathlib import Path

import pytest

from repodoc_lsp.analysis import analyse_source
from repodoc_lsp.config import Settings
from repodoc_lsp.store.workspace import Workspace

FILES = {
    "torch/__init__.py": "from torch import nn\nfrom torch._tensor import Tensor\n__all__ = ['Tensor']\n",
    "torch/_tensor.py": "class Tensor:\n    shape = ()\n\n    def add(self, other):\n        return self\n",
    "torch/nn/__init__.py": "from .modules import *\nfrom . import functional as F\n",
    "torch/nn/functional.py": "def relu(x):\n    return x\n\n\ndef _private(x):\n    return x\n",
    "torch/nn/modules/__init__.py": (
        "from .module import Module\nfrom .linear import Linear, Identity\n"
        "__all__ = ['Module', 'Linear']\n"),
    "torch/nn/modules/module.py": (
        "class Module:\n    training: bool = True\n\n    def __init__(self):\n        self.hooks = {}\n\n"
        "    def forward(self, x):\n        raise NotImplementedError\n"),
    "torch/nn/modules/linear.py": (
        "from .module import Module\n\n\nclass Identity(Module):\n    pass\n\n\n"
        "class Linear(Module):\n    def forward(self, x):\n        return x\n"),
    "app/models.py": (
        "import torch\nimport torch.nn as nn\nfrom torch.nn import Linear as L\n\n\n"
        "class Net(nn.Module):\n    def __init__(self):\n        self.fc = nn.Linear()\n\n"
        "    def forward(self, x):\n        return torch.nn.functional.relu(self.fc(x))\n\n\n"
        "def make():\n    return L(), Net()\n"),
    "app/star.py": "from torch.nn import *\n\n\ndef f():\n    return Linear, Identity\n",
    "app/tensors.py": (
        "import torch\n\n\nclass MyTensor(torch.Tensor):\n    pass\n\n\n"
        "def g(t):\n    return torch.Tensor.add(t, t), MyTensor.shape\n"),
    "app/notes.md": "# Linear\n",
}


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    for rel, text in FILES.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    ws = Workspace(tmp_path, Settings(), use_cache=False)
    ws.scan(jobs=1)
    return ws


LINEAR = ("torch/nn/modules/linear.py", "Linear")
MODULE = ("torch/nn/modules/module.py", "Module")


def test_analysis_gives_aliases_stars_attributes_and_references() -> None:
    facts = analyse_source("m.py", FILES["app/models.py"].encode())
    assert [b for i in facts.imports for b in i.bindings()] == [("torch", ""), ("nn", ""), ("L", "Linear")]
    refs = dict(facts.reference_lines())
    assert refs["nn.Linear"] == (8,) and refs["torch.nn.functional.relu"] == (11,) and refs["L"] == (15,)
    assert "self.fc" not in refs and "x" not in refs  # only names bound at module level
    star = analyse_source("s.py", FILES["app/star.py"].encode())
    assert star.imports[0].star and star.imports[0].bindings() == []
    module = analyse_source("m.py", FILES["torch/nn/modules/module.py"].encode())
    assert [(a.qualname, a.annotation, a.value) for a in module.attributes] == [
        ("Module.training", "bool", "True"), ("Module.hooks", "", "{}")]


def test_uses_through_reexports_aliases_and_stars(ws: Workspace) -> None:
    g = ws.graph()
    assert g.resolve("app/models.py", "nn.Linear") == LINEAR
    assert g.resolve("app/models.py", "L") == LINEAR
    assert g.resolve("app/star.py", "Linear") == LINEAR
    assert g.resolve("app/star.py", "Identity") is None  # not in modules' __all__
    assert g.resolve("app/models.py", "torch.nn.functional.relu") == ("torch/nn/functional.py", "relu")
    assert sorted(g.users(LINEAR)) == ["app/models.py", "app/star.py", "torch/nn/modules/__init__.py"]
    assert g.users(LINEAR)["app/models.py"] == (3, 8, 15)
    # the table as the graph holds it (its own file among the users when it names it), not a copy
    assert g.users_table(LINEAR) == g.users(LINEAR, own=True) and g.users_table(LINEAR) is g.users_table(LINEAR)
    assert g.users_table(("app/models.py", "no such name")) == {}
    uses = [(u.rel, u.line, u.within) for u in g.uses(LINEAR) if u.rel == "app/models.py"]
    assert uses == [("app/models.py", 3, ""), ("app/models.py", 8, "Net.__init__"), ("app/models.py", 15, "make")]


def test_members_inherited_and_attributes(ws: Workspace) -> None:
    g = ws.graph()
    assert g.resolve("app/tensors.py", "torch.Tensor.add") == ("torch/_tensor.py", "Tensor.add")
    assert g.resolve("app/tensors.py", "MyTensor.shape") == ("torch/_tensor.py", "Tensor.shape")  # inherited
    assert g.resolve("app/models.py", "nn.Module.training") == ("torch/nn/modules/module.py", "Module.training")
    assert g.definition("torch/nn/modules/module.py", "Module.hooks").kind == "attribute"
    assert "app/tensors.py" in g.users(("torch/_tensor.py", "Tensor.shape"))


def test_bases_and_subclasses(ws: Workspace) -> None:
    g = ws.graph()
    assert g.subclasses(MODULE) == [("app/models.py", "Net"), ("torch/nn/modules/linear.py", "Identity"), LINEAR]
    assert g.bases(("app/models.py", "Net")) == (MODULE,)
    assert g.subclasses(("torch/_tensor.py", "Tensor")) == [("app/tensors.py", "MyTensor")]


def test_a_save_updates_the_graph_and_says_what_changed(ws: Workspace) -> None:
    g = ws.graph()
    change = ws.update_file("app/star.py", b"from torch.nn import Module\n\n\nclass Mine(Module):\n    pass\n")
    assert ws.graph() is g  # updated in place, not rebuilt
    assert "app/star.py" not in g.users(LINEAR)
    assert ("app/star.py", "Mine") in g.subclasses(MODULE)
    assert {"torch/nn/modules/linear.py", "torch/nn/modules/module.py", "app/star.py"} <= change.xref
    # a re-export removed: every file that resolved through it follows
    ws.update_file("torch/nn/modules/__init__.py", b"from .module import Module\n")
    assert g.resolve("app/models.py", "nn.Linear") is None
    assert sorted(g.users(LINEAR)) == []
    ws.update_file("torch/nn/modules/__init__.py", FILES["torch/nn/modules/__init__.py"].encode())
    assert g.resolve("app/models.py", "nn.Linear") == LINEAR


def test_files_added_and_removed_rebuild(ws: Workspace) -> None:
    ws.graph()
    (ws.root / "app/more.py").write_text("from torch.nn.modules.linear import Linear\n")
    change = ws.update_file("app/more.py")
    assert change.structural and "app/more.py" in ws.graph().users(LINEAR)
    (ws.root / "app/more.py").unlink()
    ws.update_file("app/more.py")
    assert "app/more.py" not in ws.graph().users(LINEAR)


def test_bad_input_does_not_break_the_graph(tmp_path: Path) -> None:
    files = {
        "a/__init__.py": "from .b import *\nfrom .c import X\n",
        "a/b.py": "from a import *\nfrom a import Y\nclass Y(Y):\n    pass\n",  # cycles, self base
        "a/c.py": "from .c import X\nX.y.z\nclass Z(Missing, metaclass=M, **kw):\n    pass\n",
        "a/broken.py": "from a import X\ndef f(:\n",
        "a/deep.py": "import a\n" + "x = a" + ".b" * 40 + "\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    ws = Workspace(tmp_path, Settings(), use_cache=False)
    ws.scan(jobs=1)
    g = ws.graph()
    assert g.resolve("a/c.py", "X") is None
    assert g.bases(("a/b.py", "Y")) == ()
    assert g.bases(("a/c.py", "Z")) == ()
    assert g.resolve("a/deep.py", "a.b") == ("a/b.py", "")


def test_a_class_defined_twice_keeps_the_bases_of_the_definition_it_records(tmp_path: Path) -> None:
    """`if/else` definitions of one class name: the graph records the first one, its line and its bases."""
    (tmp_path / "m.py").write_text(
        "class A:\n    pass\n\n\nclass B:\n    pass\n\n\n"
        "if FLAG:\n    class C(A):\n        pass\nelse:\n    class C(B):\n        pass\n")
    ws = Workspace(tmp_path, Settings(), use_cache=False)
    ws.scan(jobs=1)
    g = ws.graph()
    assert g.bases(("m.py", "C")) == (("m.py", "A"),)
    assert g.subclasses(("m.py", "A")) == [("m.py", "C")] and g.subclasses(("m.py", "B")) == []


def test_a_name_a_star_import_did_not_export_resolves_once_it_does(tmp_path: Path) -> None:
    """`from m import *` with `b` outside `m.__all__`: the user depends on `m` all the same, so a
    save adding `b` to `__all__` re-links it (it was left naming nothing)."""
    (tmp_path / "m.py").write_text("__all__ = ['a']\n\n\ndef a():\n    pass\n\n\ndef b():\n    pass\n")
    (tmp_path / "u.py").write_text("from m import *\n\n\ndef use():\n    return b()\n")
    ws = Workspace(tmp_path, Settings(), use_cache=False)
    ws.scan(jobs=1)
    graph = ws.graph()
    assert graph.users(("m.py", "b")) == {}
    ws.update_file("m.py", b"__all__ = ['a', 'b']\n\n\ndef a():\n    pass\n\n\ndef b():\n    pass\n")
    assert graph.users(("m.py", "b")) == {"u.py": (5,)}


def test_queries_during_a_re_link_see_each_class_with_its_bases(ws: Workspace) -> None:
    """The server answers hovers on other threads while a batch re-links files: whatever moment
    a query lands on, a class keeps its bases and a file its docstring mentions."""
    g = ws.graph()
    net = ("app/models.py", "Net")
    seen: list[tuple] = []
    link = g._link

    def spying_link(rel: str) -> object:  # a query at each step of the re-link, as another thread's would
        seen.append((g.bases(net), g.ancestors(LINEAR), g.subclasses(MODULE)))
        return link(rel)

    g._link = spying_link  # type: ignore[method-assign]
    ws.update_file("app/models.py", (FILES["app/models.py"] + "# saved\n").encode())  # Net re-links
    ws.update_file("torch/nn/modules/linear.py", (FILES["torch/nn/modules/linear.py"] + "# saved\n").encode())
    assert len(seen) >= 2
    assert all(bases == (MODULE,) and ancestors == [MODULE] and net in subclasses
               for bases, ancestors, subclasses in seen), seen


def test_what_resolution_consulted_is_kept_compactly(ws: Workspace) -> None:
    """The files a resolution consulted are only iterated: kept as tuples, not sets (on the
    17,150-file corpus, 182 a file and 11 a memoised name: 173 + 328 MB as frozensets, a fifth
    as tuples). The graph re-links as before (test_graph_oracle)."""
    import sys

    graph = ws.graph()
    assert graph._deps and all(type(deps) is tuple for deps in graph._deps.values())
    entries = sum(len(deps) for deps in graph._deps.values())
    assert sum(sys.getsizeof(deps) for deps in graph._deps.values()) <= 8 * entries + 64 * len(graph._deps)
    graph._relink(set(graph._views), set())  # a re-link keeps them so too
    assert all(type(deps) is tuple for deps in graph._deps.values())


def test_dependents_are_found_from_the_dependencies_and_surfaces_kept_as_digests(ws: Workspace) -> None:
    """The server's graph keeps no table of dependents (on the 17,150-file corpus 195 MB of sets
    per file and name): a change finds the files that consulted what changed in one pass over
    what each file consulted; a file's surface (what other resolutions see of it: 83 MB as
    values) is kept as a 16-byte digest. The graph re-links as before (test_graph_oracle)."""
    graph = ws.graph()
    assert not any(isinstance(v, dict) and v and all(isinstance(x, set) for x in v.values())
                   for v in vars(graph).values())  # no dict of sets
    inverse: dict[str, set[str]] = {}
    for rel, deps in graph._deps.items():
        for dep in deps:
            inverse.setdefault(dep, set()).add(rel)
    for dep, rels in inverse.items():
        assert graph._dependents({dep}) == rels
    assert graph._dependents(set()) == set() and graph._dependents({"nowhere.py"}) == set()
    every = set(inverse)
    assert graph._dependents(every) == set(graph._deps)
    assert all(type(view.surface) is bytes and len(view.surface) == 16 for view in graph._views.values())


def test_a_graph_built_once_keeps_the_same_dependencies_and_answers_the_same(tmp_path: Path, ws: Workspace) -> None:
    """`repodoc generate` builds the graph once and never updates it (Workspace(incremental=False)):
    the same resolution, memoised across files, each answer with the files it consulted: what each
    file's link consulted is the incremental graph's (kept for the next run to take its links), and
    every answer is the incremental graph's."""
    once = Workspace(ws.root, Settings(), use_cache=False, incremental=False)
    once.scan(jobs=1)
    # its scan sketched each Python file's view as the facts arrived; the graph took the sketches
    own = {rel: sketch for rel, (_key, sketch) in once._sketches.items() if sketch is not None}
    assert set(own) == {rel for rel in FILES if rel.endswith(".py")}
    full, built = ws.graph(), once.graph()
    assert not once._sketches and not ws._sketches
    for rel, made in own.items():
        view, fresh = built._views[rel], full._views[rel]
        assert view.defs is made.own[0] and view.mentions is made.own[5]
        assert (view.defs, view.starts, view.ends, view.quals, view.bases, view.mentions, view.parts,
                view.bindings, view.imported, view.stars) == \
               (fresh.defs, fresh.starts, fresh.ends, fresh.quals, fresh.bases, fresh.mentions, fresh.parts,
                fresh.bindings, fresh.imported, fresh.stars)
    assert full._deps
    assert {rel: set(deps) for rel, deps in built._deps.items()} == {rel: set(deps) for rel, deps in full._deps.items()}
    assert full._marks and not built._marks  # nor the mentions' marks, which only an update compares
    keys = [d.key for rel in sorted(full._views) for d in full.definitions(rel)]
    assert len(keys) > 20
    for key in keys:
        assert built.uses(key) == full.uses(key)
        assert built.subclasses(key) == full.subclasses(key) and built.bases(key) == full.bases(key)
        assert built.members(key) == full.members(key) and built.ancestors(key) == full.ancestors(key)
    for rel in full._views:
        assert built.mentioned(rel) == full.mentioned(rel)
    with pytest.raises(RuntimeError):
        built.update("app/star.py", once.facts["app/star.py"])
    with pytest.raises(RuntimeError):
        once.update_file("app/star.py", b"X = 1\n")


def test_a_graph_s_first_link_holds_what_linking_every_file_again_finds(ws: Workspace) -> None:
    """A graph's first build is a link pass of every file against empty tables, the same pass as an
    update's: linking every file again finds nothing changed and leaves every table as it was."""
    graph = ws.graph()
    tables = (graph._users, graph._bases, graph._shown_bases, graph._subclasses, graph._classes, graph._mentioned,
              graph._marks, graph._deps)
    before = [{k: (dict(v) if isinstance(v, dict) else v) for k, v in table.items()} for table in tables]
    assert graph._users and graph._subclasses and graph._marks
    assert graph._relink(set(graph._views), set()) == set()
    after = (graph._users, graph._bases, graph._shown_bases, graph._subclasses, graph._classes, graph._mentioned,
             graph._marks, graph._deps)
    assert [{k: (dict(v) if isinstance(v, dict) else v) for k, v in table.items()} for table in after] == before


def test_the_server_s_graph_is_built_from_its_scan_without_reading_the_facts_again(tmp_path: Path, ws: Workspace
                                                                                  ) -> None:
    """The server's scan forgets each file's facts once the cache holds them (`release`); it sketches
    each file's view as its facts arrive, so the graph is built without reading any facts back from
    the cache (a tenth of the server's indexing on the 17,150-file corpus), answering as a graph built
    from the facts. A file whose content changed since is read from the cache as before."""
    settings = Settings(cache_dir=str(tmp_path / "cache"))
    server = Workspace(ws.root, settings)
    assert server.scan(jobs=1, release=True)
    assert not any(server.facts.loaded(rel) for rel in FILES)  # forgotten: the cache holds them
    assert server.sketched() == set(FILES)
    sketches = dict(server._sketches)
    reads: list[set[str]] = []
    get_many = server.cache.get_many
    server.cache.get_many = lambda keys: reads.append(keys) or get_many(keys)  # type: ignore[method-assign]
    told: list[str] = []
    built, full = server.graph(each=lambda batch: told.extend(rel for rel, _ in batch)), ws.graph()
    assert reads == [] and told == []
    assert set(built._views) == set(full._views)
    for rel, fresh in full._views.items():
        view = built._views[rel]
        assert (view.defs, view.bindings, view.imported, view.stars, view.all_names, view.refs, view.surface) == \
               (fresh.defs, fresh.bindings, fresh.imported, fresh.stars, fresh.all_names, fresh.refs, fresh.surface)
    for key in [d.key for rel in sorted(full._views) for d in full.definitions(rel)]:
        assert built.uses(key) == full.uses(key) and built.subclasses(key) == full.subclasses(key)
    # a sketch of other content than the file's now is not taken: its facts are read (and told)
    again = Workspace(ws.root, settings)
    assert again.scan(jobs=1, release=True) and again.sketched() == set()  # all from the cache now
    again._sketches = sketches | {"app/star.py": (server.digests["app/models.py"], None)}
    assert again.sketched() == set(FILES) - {"app/star.py"}
    assert again.graph(each=lambda batch: told.extend(rel for rel, _ in batch)).uses(LINEAR) == full.uses(LINEAR)
    assert told == ["app/star.py"]


def test_a_batch_of_changed_files_finds_their_dependents_once(ws: Workspace) -> None:
    """Finding a changed file's dependents is a pass over every file's dependencies (45 ms on
    the 17,150-file corpus), so a batch (a checkout) re-links its changed files as one step, at
    its end: one pass, however many files changed; the answers are those of a fresh graph."""
    graph = ws.graph()
    passes = []
    dependents = graph._dependents
    graph._dependents = lambda asked: passes.append(set(asked)) or dependents(asked)  # type: ignore[method-assign]
    edits = {"torch/_tensor.py": FILES["torch/_tensor.py"] + "\n\ndef extra():\n    pass\n",
             "torch/nn/functional.py": FILES["torch/nn/functional.py"] + "\n\ndef gelu(x):\n    return x\n",
             "app/star.py": FILES["app/star.py"] + "\n\nclass More:\n    pass\n"}
    change = ws.update_files(list(edits), {rel: text.encode() for rel, text in edits.items()})
    assert passes == [set(edits)] and change.files == set(edits)
    fresh = Workspace(ws.root, Settings(), use_cache=False)
    for rel, text in edits.items():
        (ws.root / rel).write_text(text)
    fresh.scan(jobs=1)
    for rel in sorted(graph._views):
        for d in graph.definitions(rel):
            assert graph.uses(d.key) == fresh.graph().uses(d.key), d.key


def test_a_files_view_and_what_it_names_are_compact(ws: Workspace) -> None:
    """What the graph keeps per file is compact (the 17,150-file corpus: the views' definitions,
    spans and bindings and the table of what each file names took about 300 MB): a definition is
    an int (its line and kind; a `Def` is made when asked), the spans are arrays of lines beside a
    tuple of qualnames, the names imports bind are interned, and what a file names is not kept
    (read from the users' tables when the file re-links). Answers as before (test_graph_oracle);
    `within` as the spans say."""
    from array import array

    graph = ws.graph()
    modules: dict[str, list[str]] = {}
    for rel, view in graph._views.items():
        assert view.defs and all(type(code) is int for code in view.defs.values())
        assert type(view.starts) is array and type(view.ends) is array and len(view.quals) == len(view.starts)
        spans = list(zip(view.starts, view.ends, view.quals, strict=True))
        assert spans == sorted(spans)
        for line in range(1, max(view.ends, default=1) + 2):
            holding = [qual for start, end, qual in spans if start <= line <= end]
            assert view.within(line) == (holding[-1] if holding else "")
        for d in graph.definitions(rel):
            assert graph.definition(rel, d.qualname) == d and (not d.qualname or graph.named(rel, d.line, d.name))
        for module, _, _ in view.imported:
            modules.setdefault(module, []).append(module)
    assert not hasattr(graph, "_out")  # what a file names is read from the users' tables
    one = {rel: graph._named_by({rel}).get(rel, {}) for rel in graph._views}
    for rel, named in one.items():
        assert named == {key: table[rel] for key, table in graph._users.items() if rel in table}
    assert graph._named_by(set(graph._views)) == {rel: named for rel, named in one.items() if named}
    assert any(one.values())
    shared = [names for names in modules.values() if len(names) > 1]
    assert shared and all(all(name is names[0] for name in names) for names in shared)


def test_an_outline_of_some_kinds_or_the_module_level_is_the_outline_filtered(ws: Workspace) -> None:
    """Gathering a page's inputs asks for a file's classes, functions and methods (`_xref`), or its
    module-level classes and functions (`_users_by_name`): picked before sorting, in the same order;
    and how many files use a definition without making their table (`user_count`)."""
    graph = ws.graph()
    rels = [rel for rel in FILES if rel.endswith(".py")]
    asked = 0
    for rel in rels:
        whole = graph.outline(rel)
        assert graph.outline(rel, ("class", "function", "method")) == \
            [(q, k) for q, k in whole if k in ("class", "function", "method")]
        top = graph.outline(rel, ("class", "function"), top=True)
        assert top == [(q, k) for q, k in whole if k in ("class", "function") and "." not in q]
        for qual, _kind in whole:
            assert graph.user_count((rel, qual)) == len(graph.users((rel, qual)))
            asked += bool(graph.users((rel, qual)))
    assert asked > 5 and graph.outline("app/models.py", ("class",), top=True) == [("Net", "class")]
    assert graph.outline("nowhere.py", ("class",)) == [] and graph.user_count(("nowhere.py", "X")) == 0


def test_an_outline_with_users_tables_and_a_class_s_member_lists_answer_as_their_parts(ws: Workspace) -> None:
    """`_xref` asks for a file's definitions some file names, with their tables, and every class
    (`outline_users`), and `_inherited` for an ancestor's kind and member names in one call
    (`member_lists`): the same as `outline`, `users_table`, `kind` and `member_names` one by one."""
    graph = ws.graph()
    named = 0
    for rel in [rel for rel in FILES if rel.endswith(".py")] + ["nowhere.py"]:
        kinds = ("class", "function", "method")
        expected = [(q, k, graph.users_table((rel, q))) for q, k in graph.outline(rel, kinds)
                    if k == "class" or graph.users_table((rel, q))]
        assert graph.outline_users(rel, kinds, every="class") == expected
        assert graph.outline_users(rel, kinds) == [row for row in expected if row[2]]
        named += sum(1 for _q, k, table in expected if k != "class" and table)
        for qual, _kind in [*graph.outline(rel), ("Nowhere", "")]:
            key = (rel, qual)
            assert graph.member_lists(key) == (graph.kind(key), graph.member_names(key),
                                               list(graph.member_names(key, public=True)))
    assert named >= 2 and graph.outline_users("nowhere.py", ("class",), every="class") == []
    assert graph.member_lists(MODULE) == ("class", ("training", "__init__", "hooks", "forward"),
                                          ["training", "hooks", "forward"])
    assert graph.member_lists(MODULE)[2] is graph.member_lists(MODULE)[2]  # the graph's own list, kept


def test_members_inherited_whole_are_the_graph_s_own_list_and_one_base_needs_no_walk(ws: Workspace) -> None:
    """A page lists the public members of an ancestor none of which its class redefines as the graph's
    own list (one object wherever it is inherited whole, pickled once per part), not a copy; the
    ancestors of a class with one base that has none are that base (the walk's answer)."""
    from repodoc_lsp.render.gather import _inherited

    graph = ws.graph()
    inherited = _inherited(graph, LINEAR)
    assert [(r, q, members) for r, q, _anchor, members, _redefined in inherited] == \
        [(*MODULE, ["training", "hooks"])]  # `forward` redefined
    assert _inherited(graph, ("torch/nn/modules/linear.py", "Identity"))[0][3] is graph.member_lists(MODULE)[2]
    assert graph.ancestors(LINEAR) == [MODULE] and graph.ancestors(MODULE) == []
    assert graph.ancestors(("app/models.py", "Net")) == [MODULE]  # `nn.Module`


def test_the_graph_is_given_the_page_part_rule_and_the_facts_loader_knows_no_graph() -> None:
    """Imports follow the flow: the symbol graph (`knowledge/`) imports nothing of `render/` (it is
    given each file's part map: `Graph(parts=...)`), and loading facts (`store/facts.py`) imports
    nothing of `knowledge/` (an analysis worker sends facts or a skip reason, and the cache row)."""
    import ast

    import repodoc_lsp

    package = Path(repodoc_lsp.__file__).parent

    def imported(path: Path) -> set[str]:  # absolute imports anywhere in the module (the package's are)
        nodes = list(ast.walk(ast.parse(path.read_text(encoding="utf-8"))))
        return {node.module or "" for node in nodes if isinstance(node, ast.ImportFrom)} | \
            {a.name for node in nodes if isinstance(node, ast.Import) for a in node.names}

    knowledge = {path.name: imported(path) for path in (package / "knowledge").glob("*.py")}
    assert len(knowledge) >= 6
    assert not {m for deps in knowledge.values() for m in deps if m.startswith("repodoc_lsp.render")}, knowledge
    assert not {m for m in imported(package / "store" / "facts.py") if m.startswith("repodoc_lsp.knowledge")}


def test_a_definition_s_part_is_the_rule_s_the_graph_is_given(tmp_path: Path) -> None:
    """The graph keeps the part map its caller's rule gives each file (keyed by kind and qualname),
    and a save that moves a mentioned definition to another part says the mentioning file changed."""
    from repodoc_lsp.analysis.model import FileFacts
    from repodoc_lsp.render.parts import definition_parts, member_parts

    (tmp_path / "big.py").write_text("class C:\n    def m(self):\n        pass\n\n\ndef f():\n    pass\n")
    (tmp_path / "doc.py").write_text('"""See `big.C.m` and `big.f`."""\n')
    moved = {"on": False}

    def parts(facts: FileFacts) -> dict[tuple[str, str], int]:  # a rule that splits big.py when told
        return {("method", "C.m"): 2, ("function", "f"): 3} if moved["on"] and facts.symbols else {}

    ws = Workspace(tmp_path, Settings(), use_cache=False, parts=parts)
    ws.scan(jobs=1)
    graph = ws.graph()
    assert graph.mentioned("doc.py") == {"big.C.m": ("big.py", "C.m"), "big.f": ("big.py", "f")}
    assert graph.part(("big.py", "C.m")) == graph.part(("big.py", "f")) == 1
    moved["on"] = True
    change = ws.update_file("big.py", (tmp_path / "big.py").read_bytes() + b"# saved\n")
    assert graph.part(("big.py", "C.m")) == 2 and graph.part(("big.py", "f")) == 3
    assert "doc.py" in change.xref  # its page's links into big.py's parts change
    facts = ws.facts["big.py"]
    assert definition_parts(facts) == {} == member_parts(facts)  # the real rule: a small file stays whole
