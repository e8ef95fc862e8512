"""Past one machine: the analysis and the pages split across jobs (a CI matrix), merged to the tree one
machine writes (issue #40, examples/README.md).

- `split.py`: which share a file (`analyze --shard K/N`) or a page (`generate --pages K/N`) belongs to.
- `facts_file.py`: the facts file, the only thing that goes from an analysis job to a page job:
  versioned, gzip-compressed JSON lines, data only (a shard file is untrusted input).
- `analyze.py`: `repodoc analyze --shard K/N --output FILE`.
- `pages.py`: `repodoc generate --facts FILE... [--pages K/N]`: the workspace taken from facts files.
- `merge.py`: `repodoc merge DIR... --out DIR`.
- `command.py`: the command line of the three.
"""
