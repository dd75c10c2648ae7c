"""The store: one engine per home folder, and a view per principal acting on it."""
