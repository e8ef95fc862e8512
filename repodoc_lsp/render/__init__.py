"""Facts -> Markdown. Pure: no I/O but loading templates.

`render.pages.Renderer` owns one Jinja2 environment (a user folder of templates overrides
the built-in ones by name); `render.pages.Site` is everything a page may say about the
rest of the workspace. This package's own import runs nothing, so that a worker process that
needs only the page-splitting rule (`render.parts`) does not load the whole renderer.
"""
