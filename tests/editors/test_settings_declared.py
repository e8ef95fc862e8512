"""One declaration of the settings: `repodoc_lsp.config.FIELDS`. VS Code's package.json, the
extension's key lists, the Neovim plugin's table and the README tables are generated from it by
editors/gen_settings.py; these tests fail when any of them disagrees."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path
from types import ModuleType

from repodoc_lsp.config import FIELDS, Settings

REPO = Path(__file__).resolve().parents[2]


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_settings", REPO / "editors" / "gen_settings.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_declaration_agrees_with_fields() -> None:
    assert _generator().stale() == [], "run python editors/gen_settings.py"


def test_package_json_offers_every_server_setting() -> None:
    package = json.loads((REPO / "editors" / "vscode" / "package.json").read_text())
    props = package["contributes"]["configuration"]["properties"]
    for field in FIELDS:
        prop = props[f"repodoc.{field.editor_key}"]
        default = getattr(Settings(), field.name)
        assert prop["default"] == (list(default) if isinstance(default, tuple) else default), field.name
    restricted = package["capabilities"]["untrustedWorkspaces"]
    assert restricted["supported"] == "limited"
    for key in ("templates", "cacheDir", "pythonPath", "outputDir", "interpreter", "serverCommand"):
        assert f"repodoc.{key}" in restricted["restrictedConfigurations"]
    assert package["scripts"]["vscode:prepublish"]


def test_a_disagreement_is_found(tmp_path: Path) -> None:
    gen = _generator()
    for path in gen.outputs():
        copy = tmp_path / path.relative_to(REPO)
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, copy)
    gen.REPO = tmp_path
    assert gen.stale() == []
    readme = tmp_path / "README.md"
    readme.write_text(readme.read_text().replace("| `jobs` | `jobs` | `0` |", "| `jobs` | `jobs` | `4` |"))
    lua = tmp_path / "editors" / "nvim" / "lua" / "repodoc" / "fields.lua"
    lua.write_text(lua.read_text().replace('{ key = "jobs"', '{ key = "workers"'))
    assert gen.stale() == [lua, readme]
