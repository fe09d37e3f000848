"""Analyses over scores: alignment and rank statistics, diagnostics, weight search, scorecards."""
