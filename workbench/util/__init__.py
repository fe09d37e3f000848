"""Internal utilities: atomic writes, child processes, allocator tuning, the collector paused, names imported on first use, name suggestions, text diffs."""
