"""Where pages go when nobody chose: `docs/`, unless `docs/` is the project's own documentation
(a Sphinx `conf.py`, an `mkdocs.yml` building it, any page repodoc did not write): then
`repodoc-docs/`, the same choice for every caller (`config.load_settings`), kept once its
manifest is there; the project's docs stay inputs."""

from __future__ import annotations

from pathlib import Path

from helpers import make_workspace, write_manifest

from repodoc_lsp import MARKER
from repodoc_lsp.config import OWN_OUTPUT, default_output, load_settings, output_notice
from repodoc_lsp.server.settings import output_refusal, settings_for
from repodoc_lsp.store.discover import InputFilter

PAGE = MARKER + "\n# a page\n"


def _output(root: Path) -> str:
    return load_settings(root)[0].output


def test_docs_when_it_is_missing_empty_or_only_ours(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", {"a.py": "x = 1\n"})
    assert default_output(root) == ("docs", "")
    (root / "docs").mkdir()
    assert _output(root) == "docs"
    make_workspace(root, {"docs/a.py_docs.md": PAGE, "docs/sub/index.md": PAGE, "docs/.gitkeep": "",
                          "docs/a.py_docs.md.orig": PAGE})  # ours without a manifest, hidden files
    assert _output(root) == "docs"


def test_own_documentation_moves_the_default(tmp_path: Path) -> None:
    for files, why in (
        ({"docs/conf.py": "project = 'x'\n", "docs/index.rst": "X\n=\n"}, "docs/conf.py"),
        ({"docs/index.md": "# mine\n"}, "docs/index.md"),
        ({"docs/a.py_docs.md": PAGE, "docs/guide/intro.rst": "Intro\n"}, "docs/guide/intro.rst"),
        ({"mkdocs.yml": "site_name: x\n"}, "mkdocs.yml builds it"),  # MkDocs' docs_dir is docs/
        ({"mkdocs.yml": "site_name: x\ndocs_dir: 'docs/'  # ours\n"}, "mkdocs.yml builds it"),
    ):
        root = make_workspace(tmp_path / str(len(list(tmp_path.iterdir()))), {"a.py": "x = 1\n", **files})
        settings = load_settings(root)[0]
        assert settings.output == OWN_OUTPUT == "repodoc-docs", files
        assert output_notice(root, settings) == (
            f"repodoc: docs/ holds your own documentation ({why}); writing to repodoc-docs/ "
            "(set `output` in [tool.repodoc] to choose)")
    root = make_workspace(tmp_path / "elsewhere", {"mkdocs.yml": "docs_dir: site_src\n"})
    assert _output(root) == "docs"


def test_the_choice_is_kept_by_the_manifest(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", {"a.py": "x = 1\n", "docs/conf.py": "project = 'x'\n"})
    settings = load_settings(root)[0]
    (root / OWN_OUTPUT).mkdir()
    write_manifest(root / OWN_OUTPUT, {"pages": {}})
    assert output_notice(root, settings) == ""  # said on the first run only
    assert load_settings(root)[0] == settings  # the same settings: nothing for the server to redo
    (root / "docs/conf.py").unlink()  # the project's docs gone: the tree stays where it is
    assert _output(root) == OWN_OUTPUT and output_notice(root, load_settings(root)[0]) == ""
    # A tree written in docs/ (an earlier version, or chosen) stays there, whatever else is in it.
    other = make_workspace(tmp_path / "old", {"docs/index.md": "# mine\n"})
    write_manifest(other / "docs", {"pages": {}})
    assert _output(other) == "docs"


def test_a_person_setting_is_never_moved(tmp_path: Path) -> None:
    files = {"a.py": "x = 1\n", "docs/conf.py": "project = 'x'\n"}
    root = make_workspace(tmp_path / "ws", {**files, "pyproject.toml": '[tool.repodoc]\noutput = "docs"\n'})
    settings = load_settings(root)[0]
    assert settings.output == "docs" and output_notice(root, settings) == ""
    bare = make_workspace(tmp_path / "bare", files)
    assert load_settings(bare, {"output": "site/pages"})[0].output == "site/pages"  # --out, editor
    assert settings_for(bare, {"outputDir": "docs"})[0].output == "docs"
    assert load_settings(bare, {"output": None})[0].output == OWN_OUTPUT  # the CLI without --out


def test_the_server_decides_the_same_and_the_docs_stay_inputs(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", {"a.py": "x = 1\n", "docs/conf.py": "project = 'x'\n",
                                            "docs/index.rst": "X\n=\n"})
    settings = settings_for(root, {})[0]
    assert settings == load_settings(root)[0] and settings.output == OWN_OUTPUT
    assert output_refusal(root, {}, settings) == ""
    inputs = InputFilter(root, settings)
    assert inputs.is_input(root / "docs/index.rst") and inputs.is_input(root / "docs/conf.py")
    make_workspace(root, {"repodoc-docs/a.py_docs.md": PAGE})
    assert not inputs.is_input(root / "repodoc-docs/a.py_docs.md")


def test_the_notice_names_the_docs_tool_first(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", {"docs/Makefile": "html:\n", "docs/source/conf.py": "x = 1\n",
                                            "docs/source/index.rst": "X\n"})
    assert "(docs/source/conf.py)" in load_settings(root)[0].output_chosen
