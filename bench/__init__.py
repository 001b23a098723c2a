"""Performance benchmarks: ``make bench`` runs them all and rewrites docs/performance.md."""
