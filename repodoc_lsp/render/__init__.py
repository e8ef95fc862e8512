"""Facts -> Markdown. Pure: no I/O but loading templates.

`Renderer` owns one Jinja2 environment (a user folder of templates overrides
the built-in ones by name); `Site` is everything a page may say about the
rest of the workspace.
"""

from repodoc_lsp.render.pages import Renderer
from repodoc_lsp.render.site import Site

__all__ = ["Renderer", "Site"]
