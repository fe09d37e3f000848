"""Recording a probe corpus in real Crafter: each probe's episodes named after it, its loop labelled."""

from __future__ import annotations

import pytest

from workbench.data.probe_corpus import load_probes, record_probes
from workbench.errors import RecordingError, TargetExistsError

pytestmark = pytest.mark.crafter


def test_record_two_probes_then_refuse_to_overwrite_and_continue_with_resume(tmp_path):
    out = tmp_path / "probes"
    reports = record_probes(out, probes=["drink_at_cap", "stone_pairs_1"], episodes=1, max_steps=40, progress=False)
    assert [len(r.recorded) for r in reports] == [1, 1] and all(r.ok for r in reports)
    corpus = load_probes(out)
    assert corpus.index["policy"].tolist() == ["drink_at_cap", "stone_pairs_1"]
    metadata = corpus.episode_extras(0).metadata
    assert metadata["max_steps"] == 40 and "loop_spans" in metadata
    with pytest.raises(TargetExistsError):
        record_probes(out, probes=["drink_at_cap"], episodes=1, max_steps=40, progress=False)
    again = record_probes(out, probes=["drink_at_cap"], episodes=1, max_steps=40, resume=True, progress=False)
    assert again[0].skipped == ["drink_at_cap-s43-00000"] and not again[0].recorded
    with pytest.raises(RecordingError, match="expected some of"):
        record_probes(tmp_path / "other", probes=["moonwalk"], progress=False)
