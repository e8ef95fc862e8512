"""Facts -> Markdown. Pure: no I/O but loading templates.

`Renderer` owns one Jinja2 environment (a user folder of templates overrides
the built-in ones by name); `Site` is everything a page may say about the
rest of the workspace. Both are imported on first use: a module of this package
(`render.parts`, which the symbol graph reads) loads without the renderer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from repodoc_lsp.render.pages import Renderer
    from repodoc_lsp.render.site import Site

__all__ = ["Renderer", "Site"]


def __getattr__(name: str) -> Any:
    if name == "Renderer":
        from repodoc_lsp.render.pages import Renderer

        return Renderer
    if name == "Site":
        from repodoc_lsp.render.site import Site

        return Site
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
