"""refs.resolve and refs.extract on the causes of false alarms and missed renames found on real
projects (issue 34): re-exports and `currentmodule`, members defined in bases or by assignment, a
same-named test class, dynamic modules, heads that are not the project's packages, declared
dependencies, reST section underlines of backticks, history in a page."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from helpers import make_workspace

from repodoc_lsp.config import Settings
from repodoc_lsp.refs import check
from repodoc_lsp.refs.extract import HISTORY, NAME, Ref, rest_refs
from repodoc_lsp.refs.outside import declared_dependencies
from repodoc_lsp.refs.resolve import Resolver
from repodoc_lsp.store.workspace import Workspace

FILES = {
    "pyproject.toml": '[project]\nname = "kit"\ndependencies = ["its-dangerous>=2", "Blinker"]\n'
                      '[project.optional-dependencies]\nfast = ["ujson"]\n',
    "src/kit/__init__.py": "from .core import Context as Context\nfrom .lazy import *\n",
    "src/kit/core.py": (
        "class Base:\n    flag = True\n\n    def shared(self):\n        pass\n\n\n"
        "class Context(Base):\n    __slots__ = ('slot_value',)\n    size: int = 0\n\n"
        "    def __init__(self):\n        self.obj = None\n\n"
        "    def later(self):\n        self.late_value = 1\n\n"
        "    def invoke(self):\n        pass\n\n\n"
        "class Failure(Exception):\n    pass\n"
    ),
    "src/kit/lazy.py": (
        "__all__ = ['eager']\n\ndef eager():\n    pass\n\n"
        "_LAZY = {'Lazy': '.core'}\n\n\ndef __getattr__(name):\n    return _LAZY[name]\n"
    ),
    "src/kit/runner.py": "class Runner:\n    def invoke(self, accessor=None):\n        pass\n",
    "src/kit/strings.py": (
        "import logging\n\nLOGGER = logging.getLogger('kit.async_errors')\nFILTERS = {\"xmlattr\": len}\n"
        "CONFIG = {'SECRET_KEY': None}\n\n\n"
        "def cached(f):\n    def wrapper():\n        pass\n"
        "    wrapper.cache_parameters = lambda: {}\n    return wrapper\n\n\n"
        "class Template:\n    @classmethod\n    def make(cls):\n        t = object.__new__(cls)\n"
        "        t.root_render = None\n        return t\n"
    ),
    "src/kit/maps.py": "import typing\n\n\nclass Headers(typing.Mapping[str, str]):\n"
                       "    def raw(self):\n        pass\n\n\n"
                       "class Proxy:\n    def __getattr__(self, name):\n        return 1\n\n"
                       "    def close_smartly(self):\n        pass\n",
    "src/kit/hooks.py": "def marker(name):\n    return name\n\n\nMARK = marker(\"kit\")\n",
    "tests/test_kit.py": "import kit\n\n\nclass Context(kit.Context):\n    def anything(self):\n        pass\n",
    "tests/app.py": "def run():\n    pass\n",
}


@pytest.fixture(scope="module")
def resolver(tmp_path_factory: pytest.TempPathFactory) -> Resolver:
    root = make_workspace(tmp_path_factory.mktemp("real") / "ws", FILES)
    ws = Workspace(root, Settings(), use_cache=False)
    ws.scan(jobs=1)
    return Resolver(ws, check.build_index(ws))


def _stale(resolver: Resolver, text: str, *, module: str = "", role: str = "meth") -> str | None:
    found = resolver.check(Ref(NAME, text, 1, 0, explicit=True, role=role, module=module), "docs/api.rst")
    return None if found is None else found.message


def test_members_are_checked_on_the_class_a_package_re_exports(resolver: Resolver) -> None:
    assert _stale(resolver, "kit.Context.invoke") is None
    assert _stale(resolver, "kit.Context.no_such_method") == \
        "`kit.Context.no_such_method`: `no_such_method` is not a member of Context (src/kit/core.py)"
    # under `.. currentmodule:: kit`, as Sphinx reads it
    assert _stale(resolver, "Context.no_such_method", module="kit") is not None
    assert _stale(resolver, "Context.invoke", module="kit") is None


def test_a_member_is_what_the_class_or_a_base_defines_assigns_or_declares(resolver: Resolver) -> None:
    for member in ("shared", "flag", "size", "obj", "late_value", "slot_value"):
        assert _stale(resolver, f"kit.Context.{member}", role="attr") is None, member
    assert _stale(resolver, "kit.core.Failure.args", role="attr") is None  # a builtin base's
    assert _stale(resolver, "kit.core.Failure.nothing", role="attr") is not None
    # a test's subclass of the same name, a method of another class, a keyword: none stand in
    assert _stale(resolver, "Context.anything") is not None
    assert _stale(resolver, "Context.accessor", role="attr") is not None


def test_under_a_current_module_a_missing_function_is_reported_not_a_variable_or_a_loose_name(
        resolver: Resolver) -> None:
    assert _stale(resolver, "gone_function", module="kit", role="func") == \
        "`gone_function`: `gone_function` is not defined in kit (src/kit/__init__.py)"
    assert _stale(resolver, "self.popitem", module="kit") is None  # a variable's attribute
    assert _stale(resolver, "webob.Response", module="kit", role="class") is None  # another library's
    assert _stale(resolver, "SECRET_KEY", module="kit", role="data") is None  # a config key, a parameter
    assert _stale(resolver, "__wrapped__", module="kit", role="attr") is None
    assert _stale(resolver, "BaseHTTPServer.BaseHTTPRequestHandler", role="class") is None  # Python 2's


def test_a_name_the_page_s_own_example_defines_is_not_stale(resolver: Resolver) -> None:
    text = "Use :func:`envkey` and :func:`nokey`::\n\n    def envkey(*args):\n        pass\n"
    assert [s.text for s in check.check_doc(resolver, "docs/keys.rst", text)[0]] == ["nokey"]


def test_a_class_named_by_the_default_role_is_checked(resolver: Resolver) -> None:
    assert _stale(resolver, "Gizmo", role="obj") == "`Gizmo` is not defined in the workspace"
    assert _stale(resolver, "Gizmo", module="kit", role="obj") is not None
    assert _stale(resolver, "Context", module="kit", role="obj") is None


def test_a_dynamic_module_offers_what_it_names_not_everything(resolver: Resolver) -> None:
    assert _stale(resolver, "kit.lazy.eager", role="func") is None
    assert _stale(resolver, "kit.lazy.Lazy", role="class") is None  # its lazy table names it
    assert _stale(resolver, "kit.lazy.Nothing", role="class") is not None
    assert _stale(resolver, "kit.eager", role="func") is None  # through the star import


def test_only_the_project_s_packages_and_no_dependency_are_workspace_names(resolver: Resolver) -> None:
    assert resolver.project_tops() == {"kit"}
    assert _stale(resolver, "app.run") is None  # a variable, not tests/app.py
    assert _stale(resolver, "its_dangerous", role="mod") is None  # declared, not installed here
    assert _stale(resolver, "ujson.dumps", role="func") is None
    assert declared_dependencies(resolver.ws.root) >= {"its_dangerous", "blinker", "ujson"}


def test_rest_underlines_of_backticks_are_no_fences_and_history_is_skipped() -> None:
    text = ("Title\n`````\n\n:class:`kit.A`\n\n.. versionchanged:: 2.0\n    Was :func:`kit.old`.\n\n"
            "Other\n`````\n\n:func:`kit.b`\n\n```\n:func:`kit.code`\n```\n")
    assert [(r.text, r.line) for r in rest_refs(text)] == [("kit.A", 4), ("kit.b", 12)]
    # interpreted text with a title (Sphinx's default role, as marshmallow's docs write it)
    titled = rest_refs("The `from_dict <kit.Schema.from_dict>` method; `site <https://x.org>`_.\n")
    assert [(r.text, r.col) for r in titled] == [("kit.Schema.from_dict", 16)]
    # Sphinx's default role (conf.py's `default_role = "any"`): interpreted text is a reference
    plain = "Raise `TryAgain`; see `code <kit.A>`.\n\n.. autoclass:: kit.Stream()\n"
    assert sorted((r.text, r.explicit) for r in rest_refs(plain)) == [("TryAgain", False), ("kit.A", False),
                                                                 ("kit.Stream", True)]
    assert sorted((r.text, r.role) for r in rest_refs(plain, "obj"))[:2] == [("TryAgain", "obj"), ("kit.A", "obj")]
    assert all(HISTORY.search(p) for p in ("docs/upgrading.rst", "docs/deprecations.rst", "docs/announce/1.0.rst"))
    assert not HISTORY.search("docs/api.rst")


def test_a_suggestion_is_a_typo_s_fix_of_the_same_kind_never_a_guessed_rename() -> None:
    from repodoc_lsp.refs.suggest import confident as _confident

    assert _confident("Gadgit", {"Gadget": "class", "Widget": "class"}) == "Gadget"
    assert _confident("from_pyfile", {"from_file": "method"}) == ""  # another method, not a typo
    assert _confident("complete", {"complete_var": "attribute"}) == ""
    assert _confident("namedtuple_dict_structure_factory", {"namedtuple_dict_unstructure_factory": "function"}) == ""
    assert _confident("group_contains", {"_group_contains": "method"}) == ""  # its private twin
    assert _confident("on_bind_field", {"_bind_field": "method"}) == ""
    assert _confident("sizee", {"size": "attribute", "sized": "method"}, kinds=frozenset({"attribute"})) == "size"
    assert _confident("sizee", {"size": "attribute", "sized": "method"}) == ""  # two as near: no guess
    # capitals and the first letter make another name, not a typo (cachetools' caches)
    assert _confident("TLRUCache", {"LRUCache": "class"}) == ""
    assert _confident("MRUCache", {"LRUCache": "class"}) == ""
    assert _confident("ContentSecuirtyPolicy", {"ContentSecurityPolicy": "class"}) == "ContentSecurityPolicy"


def test_history_is_checked_only_with_the_refs_history_setting(tmp_path: pytest.TempPathFactory) -> None:
    files = {"kit/__init__.py": "def live():\n    pass\n",
             "docs/upgrading.rst": "Upgrading\n=========\n\n:func:`kit.gone` is gone.\n",
             "docs/api.rst": "API\n===\n\n:func:`kit.live`\n\n.. versionchanged:: 2.0\n    Was :func:`kit.old`.\n"}
    root = make_workspace(tmp_path / "ws", files)  # type: ignore[operator]
    for history, expected in ((False, []), (True, ["docs/api.rst", "docs/upgrading.rst"])):
        ws = Workspace(root, Settings(refs_history=history), use_cache=False)
        ws.scan(jobs=1)
        assert sorted(s.rel for s in check.check_workspace(ws).stale) == expected


def test_without_a_package_at_the_root_sub_projects_packages_are_the_project_s(
        tmp_path: pytest.TempPathFactory) -> None:
    files = {"packages/shop/pyproject.toml": "[project]\nname = 'shop'\n",
             "packages/shop/shop/__init__.py": "def sell():\n    pass\n",
             "README.md": "`shop.sell` and `shop.buy`\n"}
    ws = Workspace(make_workspace(tmp_path / "ws", files), Settings(), use_cache=False)  # type: ignore[operator]
    ws.scan(jobs=1)
    assert [s.text for s in check.check_workspace(ws).stale] == ["shop.buy"]


def test_only_python_s_own_modules_are_imported_for_a_base_class(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A base class of the standard library is imported to list its members; a checkout's module of
    the same name on the path (`python -m` from its root) is never taken for it."""
    from repodoc_lsp.refs.outside import from_stdlib

    assert from_stdlib("json") and from_stdlib("sys") and not from_stdlib("no_such_module_here")
    (tmp_path / "turtle.py").write_text("raise SystemExit('ran the checkout')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "turtle", raising=False)
    assert not from_stdlib("turtle")


def test_a_dotted_name_the_code_spells_as_a_string_is_no_python_name(resolver: Resolver) -> None:
    """A logger's name, an entry-point group, an environ key: `"kit.async_errors"` in the code."""
    for explicit in (True, False):
        ref = Ref(NAME, "kit.async_errors", 1, 0, explicit=explicit, module="kit" if explicit else "")
        assert resolver.check(ref, "docs/api.rst") is None
    assert _stale(resolver, "kit.async_gone", role="") is not None


def test_a_name_bound_somewhere_is_not_missing_from_the_current_module(resolver: Resolver) -> None:
    """A filter's key (`"xmlattr": ...`), an attribute set on a function (`wrapper.cache_parameters =`)."""
    assert _stale(resolver, "xmlattr", module="kit", role="func") is None
    assert _stale(resolver, "cache_parameters", module="kit", role="func") is None
    assert _stale(resolver, "cache_gone", module="kit", role="func") is not None


def test_a_role_inside_a_class_description_is_looked_up_on_that_class(resolver: Resolver) -> None:
    text = (".. currentmodule:: kit\n\n.. class:: Context\n\n    Calls :meth:`invoke` and :meth:`nothing_here`.\n\n"
            ".. method:: strings.Template.make()\n\n    Sets :attr:`root_render`.\n\nOut :meth:`invoke2`.\n")
    refs = [r for r in rest_refs(text) if r.role in ("meth", "attr")]  # (the descriptions are checked too)
    assert [(r.text, r.cls) for r in refs] == [("invoke", "Context"), ("nothing_here", "Context"),
                                               ("root_render", "strings.Template"), ("invoke2", "")]
    stale = [resolver.check(r, "docs/api.rst") for r in refs]
    assert [v.message if v else None for v in stale[:3]] == [
        None, "`nothing_here`: `nothing_here` is not a member of Context (src/kit/core.py)", None]


def test_the_imports_of_example_code_are_checked_as_python_resolves_them(resolver: Resolver) -> None:
    """A page's example code imports the project's names exactly (an MkDocs page names its classes
    mostly there): a renamed class is caught; another library's imports are not judged."""
    from repodoc_lsp.refs.extract import markdown_refs

    md = ("# Use\n\n```python\nfrom kit.core import Context, Gone as G\nimport kit.nothing\n"
          "from fastapi import Depends\n```\n\n    from kit import Context\n")
    refs = markdown_refs(md)
    assert [(r.text, r.line, r.col, r.module) for r in refs] == [
        ("Context", 4, 21, "kit.core"), ("Gone", 4, 30, "kit.core"), ("kit.nothing", 5, 7, ""),
        ("Depends", 6, 20, "fastapi"), ("Context", 9, 20, "kit")]
    assert [v.message if (v := resolver.check(r, "docs/use.md")) else None for r in refs] == [
        None, "`Gone`: `Gone` is not defined in kit.core (src/kit/core.py)",
        "`kit.nothing`: `nothing` is not defined in kit (src/kit/__init__.py)", None, None]
    rst = "Example::\n\n    >>> from kit.core import Failure, Missing\n"
    assert [r.text for r in rest_refs(rst) if resolver.check(r, "docs/use.rst")] == ["Missing"]


def test_a_change_reads_only_the_docs_that_can_name_it(tmp_path: Path) -> None:
    """`--since`/`--staged`: a doc holding no name the changed file defines (now or before) and
    not its file's name is not read; one naming the removed name is, and reports it."""
    files = {"kit/__init__.py": "", "kit/shapes.py": "def draw_renamed():\n    pass\n",
             "kit/other.py": '"""Other: see :func:`kit.other.run`."""\n\n\ndef run():\n    pass\n',
             "docs/shapes.rst": "Shapes\n======\n\n:func:`kit.shapes.draw`\n",
             "docs/other.rst": "Other\n=====\n\n:func:`kit.other.run` and :func:`kit.other.gone`\n"}
    ws = Workspace(make_workspace(tmp_path / "ws", files), Settings(), use_cache=False)
    ws.scan(jobs=1)
    report = check.check_workspace(ws, only={"kit/shapes.py"},
                                   old_sources={"kit/shapes.py": "def draw():\n    pass\n"}, since="HEAD")
    assert [(s.rel, s.text) for s in report.stale] == [("docs/shapes.rst", "kit.shapes.draw")]
    assert report.files == 2  # kit/shapes.py and docs/shapes.rst; not kit/other.py, docs/other.rst, kit/__init__.py


def test_a_description_written_by_hand_is_checked_and_a_constant_is_no_parameter(resolver: Resolver) -> None:
    """`.. function:: name` names what it describes (as autodoc's directives do), in its class's
    context when inside one (a member is stale only when the code never names it: one may be added at
    run time); `:data:`NEED_DATA`` is a module's constant (a config key is spelled
    in the code: `{'SECRET_KEY': None}`), while `:data:`timeout`` may be a parameter."""
    callback = ".. function:: my_stop(retry_state)\n\n   Write your own.\n"  # no current module: the reader's
    assert not [r for r in rest_refs(callback) if resolver.check(r, "docs/api.rst")]
    text = (".. currentmodule:: kit\n\n.. function:: eager()\n\n.. function:: gone_alias(x)\n\n"
            ".. class:: Context\n\n    .. attribute:: size\n\n    .. method:: vanished(a)\n\n"
            "    .. method:: cache_parameters()\n\n"
            ".. data:: SECRET_KEY\n\nUse :data:`NEED_DATA` and :data:`timeout`.\n\n"
            ".. autoclass:: Context\n   :members: invoke, size, went\n")
    stale = [r.text for r in rest_refs(text) if resolver.check(r, "docs/api.rst")]
    # a member described by hand that the code names (set at run time, as `wrapper.cache_parameters =`) is
    # not stale; one the code never names is (`vanished`)
    assert stale == ["gone_alias", "vanished", "NEED_DATA", "went"]
    assert _stale(resolver, "kit.Context.vanished", role="class") is not None


def test_a_module_alias_removed_by_a_change_is_looked_for(tmp_path: Path) -> None:
    """`--since`: `padnone = pad_none` gone from the code is looked for in the docs, as a def is."""
    files = {"kit/__init__.py": "", "kit/recipes.py": "def pad_none():\n    pass\n",
             "docs/api.rst": "API\n===\n\nUse ``padnone`` or ``pad_none``.\n"}
    ws = Workspace(make_workspace(tmp_path / "ws", files), Settings(), use_cache=False)
    ws.scan(jobs=1)
    old = "def pad_none():\n    pass\n\n\npadnone = pad_none\n"
    report = check.check_workspace(ws, only={"kit/recipes.py"}, old_sources={"kit/recipes.py": old}, since="HEAD")
    assert [(s.rel, s.text) for s in report.stale] == [("docs/api.rst", "padnone")]


def test_a_typing_alias_base_is_the_class_it_stands_for(resolver: Resolver) -> None:
    """`class Headers(typing.Mapping[str, str])`: its members are its own and collections.abc.Mapping's
    (`typing.Mapping` is an alias, not a class): a member neither has is stale."""
    assert _stale(resolver, "kit.maps.Headers.raw") is None
    assert _stale(resolver, "kit.maps.Headers.keys") is None  # Mapping's
    assert _stale(resolver, "kit.maps.Headers.send_push") == \
        "`kit.maps.Headers.send_push`: `send_push` is not a member of Headers (src/kit/maps.py)"


def test_an_example_s_import_list_in_parentheses_goes_on_over_its_lines(resolver: Resolver) -> None:
    """`from kit.core import (` with its names on the next lines, in Markdown, a reST literal block
    and a doctest's `...` continuation: each name is checked where it is written."""
    from repodoc_lsp.refs.extract import markdown_refs

    md = "# Use\n\n```python\nfrom kit.core import (\n    Context, Gone as G,  # two\n)\nx = (1,\n 2)\n```\n"
    assert [(r.text, r.line, r.col) for r in markdown_refs(md)] == [("Context", 5, 4), ("Gone", 5, 13)]
    rst = ("Use::\n\n    >>> from kit.core import (\n    ...     Failure,\n    ...     Missing)\n"
           "    >>> import kit.nothing\n\nEnd::\n\n    from kit.core import (Context,\n        Absent)")
    refs = rest_refs(rst)
    assert [(r.text, r.line, r.col, r.module) for r in refs] == [
        ("Failure", 4, 12, "kit.core"), ("Missing", 5, 12, "kit.core"), ("kit.nothing", 6, 15, ""),
        ("Context", 10, 26, "kit.core"), ("Absent", 11, 8, "kit.core")]
    assert [r.text for r in refs if resolver.check(r, "docs/use.rst")] == ["Missing", "kit.nothing", "Absent"]


def test_a_cross_reference_names_what_a_class_documents_not_what_its_getattr_forwards(resolver: Resolver) -> None:
    """`:meth:`Proxy.gone`` on a class with `__getattr__`: Sphinx (and `Proxy.gone` in Python) finds
    only what the class defines; code text (`proxy.gone` of an instance) may be forwarded."""
    assert _stale(resolver, "kit.maps.Proxy.close_smartly") is None
    assert _stale(resolver, "kit.maps.Proxy.close_intelligently") == \
        "`kit.maps.Proxy.close_intelligently`: `close_intelligently` is not a member of Proxy (src/kit/maps.py)"
    code = Ref(NAME, "kit.maps.Proxy.close_intelligently", 1, 0)
    assert resolver.check(code, "docs/api.rst") is None


def test_a_name_only_a_star_import_gives_is_looked_up_in_that_module(resolver: Resolver) -> None:
    """`from kit.core import *` in a page's `testsetup`, then `raise Failure` in its examples: the
    class-like names no code of the page binds are looked up in kit.core, as Python finds them."""
    from repodoc_lsp.refs.extract import markdown_refs

    rst = (".. testsetup::\n\n    from kit.core import *\n\nRaise it::\n\n    >>> raise Failure\n\n"
           ".. testcode::\n\n    class Mine(Exception):\n        pass\n\n    try:\n        go()\n"
           "    except (Gone, Mine, ValueError) as e:\n        Context()\n\n.. code-block:: bash\n\n    $ run Other\n")
    refs = [r for r in rest_refs(rst) if r.module == "kit.core"]
    assert sorted((r.text, r.line, r.col) for r in refs) == [("Context", 17, 8), ("Failure", 7, 14), ("Gone", 16, 12)]
    assert [r.text for r in refs if resolver.check(r, "docs/use.rst")] == ["Gone"]
    md = "# Use\n\n```python\nfrom kit import *\n```\n\n```python\nraise Nope(Context)\n```\n"
    assert [(r.text, r.line, r.col) for r in markdown_refs(md) if resolver.check(r, "docs/use.md")] == [("Nope", 8, 6)]
    # no star import, or two (which one gives it?): nothing is judged
    assert not [r for r in markdown_refs(md.replace("import *", "import Context")) if r.text == "Nope"]
    two = md.replace("```\n\n```python\nraise", "from os import *\n```\n\n```python\nraise")
    assert not [r for r in markdown_refs(two) if r.text == "Nope"]


def test_a_name_from_the_project_s_package_is_taken_as_written_under_a_current_module(resolver: Resolver) -> None:
    """`:class:`kit.Nothing`` under `.. module:: kit.hooks` (which spells "kit" in its code) is
    kit's `Nothing`, as Sphinx finds it (kit.hooks.kit.Nothing is no documented object)."""
    assert _stale(resolver, "kit.Nothing", module="kit.hooks", role="class") == \
        "`kit.Nothing`: `Nothing` is not defined in kit (src/kit/__init__.py)"
    assert _stale(resolver, "kit.Context", module="kit.hooks", role="class") is None
    assert _stale(resolver, "marker", module="kit.hooks", role="func") is None


def test_a_name_linked_to_a_page_of_the_docs_is_a_cross_reference(resolver: Resolver) -> None:
    """`[`QueryParams`](requests.md#query-params)`: the name is pointed at its documentation, as a
    role does; an unknown one is stale. Unlinked, or linked elsewhere, it stays code-looking text."""
    from repodoc_lsp.refs.extract import markdown_refs

    md = ("Such as [`Context`](api.md#context), [`Gizmo`](api.md#gizmo), `Widget`,\n"
          "[`Sprocket`](https://example.org/sprocket.md) and [`Cog`](#cog).\n")
    refs = [r for r in markdown_refs(md) if r.kind == NAME]
    assert [(r.text, r.explicit) for r in refs] == [("Context", True), ("Gizmo", True), ("Widget", False),
                                                    ("Sprocket", False), ("Cog", False)]
    assert [r.text for r in refs if resolver.check(r, "docs/use.md")] == ["Gizmo"]
