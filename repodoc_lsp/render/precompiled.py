"""Preloaded by the render workers' fork server (`runtime.Runtime.render_context`) when a run
renders with repodoc's own templates, and imported nowhere else: they are compiled there once,
before it forks, and every render worker starts with them (`Renderer.shared`) instead of
compiling them itself."""

from __future__ import annotations

from repodoc_lsp.render.pages import Renderer

Renderer.precompile()
