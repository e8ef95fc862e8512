from __future__ import annotations

from pathlib import Path

import pytest

from repodoc_lsp.config import ConfigError, Settings, apply, load_settings, project_name


def test_defaults_then_pyproject_then_overrides(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "p"\n[tool.repodoc]\noutput = "site"\njobs = 2\n')
    settings, problems = load_settings(tmp_path, {"jobs": 3, "maxWorkspaceSymbols": 5})
    assert (settings.output, settings.jobs, settings.max_workspace_symbols) == ("site", 3, 5)
    assert problems == [] and project_name(tmp_path, settings) == "p"


def test_strict_names_the_key_and_lenient_falls_back() -> None:
    with pytest.raises(ConfigError, match="maxWorkspaceSymbols: expected a number >= 1, got 0"):
        apply(Settings(), {"maxWorkspaceSymbols": 0}, source="settings", strict=True)
    settings, problems = apply(Settings(), {"outputDir": 3, "nope": 1, "exclude": ["a/**"]},
                               source="settings", strict=False)
    assert settings.output == "docs" and settings.exclude == ("a/**",)
    assert problems[0] == "settings: outputDir: expected a string, got 3"
    assert problems[1].startswith("settings: unknown key 'nope'")


def test_project_name_falls_back_to_folder(tmp_path: Path) -> None:
    assert project_name(tmp_path, Settings()) == tmp_path.name
