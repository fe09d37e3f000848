"""Helpers that tests and data generators share: task-app rollout responses played on real Crafter.

Not imported by the rest of the package; ``workbench.testing.rollouts`` imports Crafter.
"""
