"""The output folder: pages written atomically, the manifest of what repodoc wrote, file modes, site files."""
