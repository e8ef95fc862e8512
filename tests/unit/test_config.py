from __future__ import annotations

from pathlib import Path

import pytest

from repodoc_lsp.config import ConfigError, Settings, apply, load_settings, project_name
from repodoc_lsp.envlimits import env_seconds


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


def test_env_seconds(monkeypatch: pytest.MonkeyPatch) -> None:
    """REPODOC_LOCK_TIMEOUT and REPODOC_PROCESS_TIMEOUT: a number, at least the minimum; else the default."""
    monkeypatch.delenv("REPODOC_TEST_SECONDS", raising=False)
    assert env_seconds("REPODOC_TEST_SECONDS", 30.0, minimum=0.5) == 30.0
    for value, expected in (("2.5", 2.5), ("0", 0.5), ("-3", 0.5), ("seven", 30.0), ("", 30.0)):
        monkeypatch.setenv("REPODOC_TEST_SECONDS", value)
        assert env_seconds("REPODOC_TEST_SECONDS", 30.0, minimum=0.5) == expected, value
    monkeypatch.setenv("REPODOC_TEST_SECONDS", "-3")
    assert env_seconds("REPODOC_TEST_SECONDS", 300.0) == 0.0
