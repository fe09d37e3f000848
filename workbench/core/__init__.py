"""The core: Crafter's facts, the task app's reward function and its config, and config files."""
