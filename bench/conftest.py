"""Benchmarks run with `pytest bench --benchmark-enable`; see docs/performance.md."""
