"""The source of truth: safe paths, locks, atomic rewrites and durable JSONL/Markdown appends."""
