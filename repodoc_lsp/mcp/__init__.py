"""`repodoc mcp [ROOT]`: the workspace's docs for coding agents, over the Model Context Protocol (stdio).

The answers come from the language server's own root (`server/state.py`: the workspace's facts,
symbol graph and keyword index, built and updated by the same code) and pages from the renderer
the CLI uses (`generate.page_renderer`): nothing here analyses, indexes or renders by itself.

- `docs.py`: the workspace as the tools read it (`Docs`: loaded on the root's thread, kept
  current with the disk, every path kept inside the workspace);
- `disk.py`: what changed on disk since the last look (sizes, modification times, modes);
- `saved.py`: the keyword index the last session left, so that a restart answers searches
  while the symbol graph is built again;
- `tools.py`: the tools' answers; `pages.py`: pages and sections (tools and resources);
- `server.py`: the SDK's server wiring them, and `serve`.
"""
