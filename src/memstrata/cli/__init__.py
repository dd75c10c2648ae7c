"""The `memstrata` command line: one module per command group, translating only."""
