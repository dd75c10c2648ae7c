"""Benchmarks: seed 002's operation table, search latency, LoCoMo retrieval."""
