"""The app's Corpus page names the synth-ai loops that produced the open corpus and says when one
ignored the run's step_rewards weights (0.2.14 rollouts: no such line)."""

from __future__ import annotations

import json
from pathlib import Path

from workbench.data.importers import import_rollouts, import_traces
from workbench.data.importers.producers import WEIGHTS_IGNORED
from workbench.data.sample import sample_imports_path
from workbench.views.app.corpus_page import corpus_summary

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "synth-ai-0.2.24"


def test_the_corpus_page_names_the_producer_and_the_ignored_weights():
    request = json.loads((FIXTURE / "requests" / "newest_per_achievement_policy_lambda_half.json").read_text())
    traced = import_traces(FIXTURE / "synth_ai.db", config=request["policy"]["config"]["step_rewards"], progress=False)
    html = corpus_summary(traced.corpus, "traced")
    assert "producer synth-ai 0.2.16-0.2.24: 3 episode(s)" in html
    assert f"{WEIGHTS_IGNORED}: 3 episode(s)" in html


def test_the_corpus_page_of_0_2_14_rollouts_has_no_weights_line():
    corpus = import_rollouts(sample_imports_path() / "taskapp", progress=False).corpus
    html = corpus_summary(corpus, "older")
    assert "producer synth-ai 0.2.14: 4 episode(s)" in html and WEIGHTS_IGNORED not in html
