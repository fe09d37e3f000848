"""Crafter Reward Workbench."""
