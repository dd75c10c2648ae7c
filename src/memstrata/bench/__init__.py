"""Benchmarks: the memory operation table, search latency, LoCoMo retrieval."""
