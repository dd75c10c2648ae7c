"""The derived SQLite index: schema, writes, catch-up with the files. Rebuildable from files."""
