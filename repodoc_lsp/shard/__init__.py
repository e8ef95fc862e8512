"""Past one machine: the analysis and the pages split across jobs (a CI matrix), merged to the tree one
machine writes (issue #40, examples/README.md).

- `split.py`: which share a file (`analyze --shard K/N`) or a page (`generate --pages K/N`) belongs to.
- `facts_file.py`: the facts file, the only thing that goes from an analysis job to a page job:
  versioned, gzip-compressed JSON lines, data only (a shard file is untrusted input).
- `analyze.py`: `repodoc analyze --shard K/N --output FILE`.
- `graph_job.py`: `repodoc graph --facts FILE... --pages M --output DIR`: the symbol graph built once, what
  each page share's pages ask of it written to that share's answers file (`answers.py`); or linked in
  shares by link jobs (`--link K/N`, `links.py`).
- `answering.py`: a page share's answers from the graph it is given (whole, or from the link records).
- `pages.py`: `repodoc generate --facts FILE... [--pages K/N [--graph DIR]]`: the workspace taken from facts
  files (with `--graph`, the graph's answers instead of the graph).
- `merge.py`: `repodoc merge DIR... --out DIR`.
- `command.py`: the command line of the four.
"""
