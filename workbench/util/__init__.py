"""Internal utilities: atomic writes, child processes, allocator tuning, name suggestions, text diffs."""
