"""Internal utilities: atomic writes, child processes, allocator tuning, the collector paused, name suggestions, text diffs."""
