"""Editor settings: initializationOptions, then `workspace/configuration` (section
`repodoc`), over each root's `[tool.repodoc]`. Bad values fall back to the defaults;
the settings a workspace may not set are refused (config.Trust, README "Trust")."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from repodoc_lsp.config import Settings, load_settings, output_problem

SECTION = "repodoc"
# Keys of the `repodoc` section that belong to the editor clients, not to the server
# (VS Code's `repodoc.trace.server`, the command that starts the server).
CLIENT_ONLY = frozenset({"trace", "interpreter", "serverCommand"})


def unwrap(options: Any) -> dict[str, Any]:
    """The `repodoc` settings object from whatever a client sent (flat or nested). An empty list
    is an empty object: Lua's `{}` is sent as JSON `[]` (Neovim's `settings = {repodoc = {}}`)."""
    if not isinstance(options, Mapping):
        return {}
    inner = options.get(SECTION)
    if isinstance(inner, Mapping) or inner == [] or (SECTION in options and inner is None):
        options = inner or {}
    return {k: v for k, v in options.items() if k not in CLIENT_ONLY}


def settings_for(root: Path, editor: Mapping[str, Any]) -> tuple[Settings, list[str]]:
    """Defaults < pyproject.toml < editor settings; problems are returned, never raised."""
    return load_settings(root, editor, strict=False)


def output_refusal(root: Path, editor: Mapping[str, Any], settings: Settings) -> str:
    """Why the server must write no page of `root` ("" when it may): its output folder must be
    inside the workspace whoever set it (there is no command line to ask for more here)."""
    if "outputDir" in editor or "output" in editor:
        key = "settings: outputDir"
    elif not settings.output_chosen and settings.output != Settings().output:
        key = f"{root / 'pyproject.toml'} [tool.repodoc] output"
    else:
        key = "output"
    return output_problem(root, settings.output, key=key) or ""
