from __future__ import annotations

from pathlib import Path

from repodoc_lsp.analysis import analyse_source
from repodoc_lsp.analysis.relations import Relations, is_test_file, module_names
from repodoc_lsp.config import Settings
from repodoc_lsp.store.workspace import Workspace

FILES = {
    "pkg/__init__.py": "from .core import X\n",
    "pkg/core.py": "import os\nimport numpy\nfrom pkg.sub import helpers\nfrom ..outside import y\n",
    "pkg/sub/__init__.py": "",
    "pkg/sub/helpers.py": "from .. import core\n",
    "tests/test_core.py": "from pkg.core import X\n",
}


def _relations() -> Relations:
    return Relations({rel: analyse_source(rel, text.encode()).imports for rel, text in FILES.items()})


def test_module_names() -> None:
    files = set(FILES)
    assert module_names("pkg/sub/helpers.py", files) == ["pkg.sub.helpers"]
    assert module_names("pkg/__init__.py", files) == ["pkg"]
    assert module_names("tests/test_core.py", files) == ["test_core", "tests.test_core"]


def test_resolution_categories_importers_and_tests() -> None:
    rels = _relations()
    imps = {i.module: i for i in analyse_source("pkg/core.py", FILES["pkg/core.py"].encode()).imports}
    assert rels.category("pkg/core.py", imps["os"]) == "stdlib"
    assert rels.category("pkg/core.py", imps["numpy"]) == "third-party"
    assert rels.target("pkg/core.py", imps["pkg.sub"]) == "pkg/sub/helpers.py"
    assert rels.target("pkg/core.py", imps["..outside"]) is None
    assert rels.importers("pkg/core.py") == ["pkg/__init__.py", "pkg/sub/helpers.py", "tests/test_core.py"]
    assert rels.tests_of("pkg/core.py") == ["tests/test_core.py"]
    assert rels.name_users[("pkg/core.py", "X")] == {"pkg/__init__.py", "tests/test_core.py"}


def test_update_one_file() -> None:
    rels = _relations()
    changed = rels.update("tests/test_core.py", analyse_source("t.py", b"import pkg.sub.helpers\n").imports)
    assert changed == {"pkg/core.py", "pkg/sub/helpers.py"}
    assert rels.tests_of("pkg/core.py") == [] and rels.tests_of("pkg/sub/helpers.py") == ["tests/test_core.py"]


def test_is_test_file() -> None:
    assert is_test_file("tests/helpers.py") and is_test_file("a/test_x.py") and is_test_file("x_test.py")
    assert not is_test_file("pkg/testing_utils.md") and not is_test_file("pkg/core.py")


def test_one_target_per_imported_name() -> None:
    """`from pkg import a, b` names the modules pkg.a and pkg.b; a name that is not a module
    of the workspace names the package."""
    files = {"pkg/__init__.py": "def helper():\n    pass\n", "pkg/a.py": "", "pkg/b.py": "",
             "ns/x.py": "", "ns/y.py": "",
             "use.py": "from pkg import a, b, helper\nfrom ns import x, y\nimport pkg.a\nfrom pkg import nothing\n"}
    rels = Relations({rel: analyse_source(rel, text.encode()).imports for rel, text in files.items()})
    imps = analyse_source("use.py", files["use.py"].encode()).imports
    assert [rels.targets_of("use.py", i) for i in imps] == [
        ("pkg/a.py", "pkg/b.py", "pkg/__init__.py"), ("ns/x.py", "ns/y.py"), ("pkg/a.py",), ("pkg/__init__.py",)]
    assert rels.importers("pkg/b.py") == ["use.py"] and rels.importers("ns/y.py") == ["use.py"]
    assert rels.name_users[("pkg/__init__.py", "helper")] == {"use.py"}
    assert ("pkg/__init__.py", "a") not in rels.name_users
    changed = rels.update("use.py", analyse_source("use.py", b"from pkg import a\n").imports)
    assert changed == {"pkg/b.py", "pkg/__init__.py", "ns/x.py", "ns/y.py"}
    assert rels.importers("pkg/b.py") == [] and rels.name_users[("pkg/__init__.py", "helper")] == set()


def test_a_file_named_as_the_standard_library_below_the_root_does_not_shadow_it() -> None:
    """`tools/typing.py` (no `__init__.py` in tools/) is what `import typing` finds only when
    tools/ is the first path (a script run from there); from anywhere else Python finds the
    standard library's `typing` before it. At the workspace's root it does shadow it (the root is
    the first path of `python -m`)."""
    files = {"tools/typing.py": "def cast(x):\n    return x\n", "tools/json/__init__.py": "",
             "tools/json/x.py": "from . import y\n", "tools/json/y.py": "", "tools/helpers.py": "",
             "signal.py": "", "pkg/__init__.py": "",
             "pkg/a.py": "import typing\nfrom typing import cast\nimport json.x\nimport signal\nimport helpers\n"}
    assert module_names("tools/typing.py", set(files)) == ["tools.typing"]
    assert module_names("tools/json/x.py", set(files)) == ["tools.json.x"]
    assert module_names("tools/helpers.py", set(files)) == ["helpers", "tools.helpers"]
    assert module_names("signal.py", set(files)) == ["signal"]
    rels = Relations({rel: analyse_source(rel, text.encode()).imports for rel, text in files.items()})
    imps = analyse_source("pkg/a.py", files["pkg/a.py"].encode()).imports
    assert [rels.targets_of("pkg/a.py", i) for i in imps] == [(), (), (), ("signal.py",), ("tools/helpers.py",)]
    assert [rels.category("pkg/a.py", i) for i in imps] == ["stdlib", "stdlib", "stdlib", "workspace", "workspace"]
    assert rels.importers("tools/typing.py") == []
    x_imps = analyse_source("tools/json/x.py", files["tools/json/x.py"].encode()).imports
    assert rels.targets_of("tools/json/x.py", x_imps[0]) == ("tools/json/y.py",)  # relative: still its package


def _tables(rels: Relations) -> tuple:
    return (rels.files, rels.module_of, rels.file_of, rels.top_level, {k: v for k, v in rels.imported_by.items() if v},
            {k: v for k, v in rels.name_users.items() if v}, rels.links, rels._imports)


def test_a_workspace_built_once_makes_its_relations_as_the_facts_arrive(tmp_path: Path) -> None:
    """The CLI's scan updates the relations with each file's imports as its facts arrive (not all at
    once on first use, after the last file): the same tables; a file the analysis skipped (not text)
    changes the files, and they are made afresh on first use."""
    for rel, text in FILES.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    ws = Workspace(tmp_path, Settings(), use_cache=False, incremental=False)
    ws.scan(jobs=1)
    made = ws._relations
    assert made is not None and made.files == set(FILES)
    assert _tables(made) == _tables(Relations(ws.facts.imports()))
    (tmp_path / "pkg/sub/__init__.py").write_bytes(b"\x00\x01binary\x00")  # skipped: not text
    again = Workspace(tmp_path, Settings(), use_cache=False, incremental=False)
    again.scan(jobs=1)
    assert "pkg/sub/__init__.py" in again.read_skipped and again._relations is None
    assert _tables(again.relations) == _tables(Relations(again.facts.imports()))
    server = Workspace(tmp_path, Settings(), use_cache=False)  # updated file by file: made on first use
    server.scan(jobs=1)
    assert server._relations is None
