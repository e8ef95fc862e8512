from repodoc_lsp.cli import main

raise SystemExit(main())
