"""Preloaded by the render workers' fork server (`runtime.Runtime.render_context`) when a run
renders with repodoc's own templates, and imported nowhere else: they are compiled there once,
before it forks, and every render worker starts with them (`Renderer.shared`) instead of
compiling them itself. They are read from and kept in the starting process's compiled templates
(`COMPILED_VARIABLE`): a cold run renders in workers only, and the run after an edit, which renders
in its own process, found none and compiled them all (a third of its CPU). griffe (docstrings' sections)
is imported here too, once, not by each worker at its first docstring."""

from __future__ import annotations

import os

import griffe  # noqa: F401  (what `docstrings` reads docstrings' sections with, imported there on first use)

from repodoc_lsp.render.environment import COMPILED_VARIABLE
from repodoc_lsp.render.pages import Renderer

Renderer.precompile(os.environ.get(COMPILED_VARIABLE, ""))
