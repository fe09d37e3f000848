"""Compatibility names: the reference scorer now lives in ``workbench.reference``."""

from workbench.reference import DecisionResult, EpisodeResult, actions_summary, score_episode, stepwise_summary

__all__ = ["DecisionResult", "EpisodeResult", "actions_summary", "score_episode", "stepwise_summary"]
