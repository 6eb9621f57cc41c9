"""Benchmarks: `make bench` prints one table per area and the targets side by side."""
