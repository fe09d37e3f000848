"""The sample corpus shipped in the package (``workbench.data.sample``)."""

from __future__ import annotations

import importlib.util

import numpy as np
from helpers import REPO

import workbench.data.sample
from workbench.data.sample import sample_corpus, sample_path

SCRIPT = REPO / "scripts" / "make_sample_corpus.py"


def _script():
    spec = importlib.util.spec_from_file_location("make_sample_corpus", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


MAKER = _script()
PARTS = {policy: (episodes, max_steps) for policy, episodes, max_steps in MAKER.PLAN}


def test_sample_corpus_has_the_documented_parts():
    corpus = sample_corpus()
    counts = corpus.index.groupby("policy").size().to_dict()
    assert counts == {policy: episodes for policy, (episodes, _) in PARTS.items()}
    assert corpus.index["has_frames"].all() and (corpus.index["source"] == "recorded").all()
    for policy, (_, max_steps) in PARTS.items():
        assert (corpus.select(policy=policy).index["steps"] <= max_steps).all()


def test_every_sample_episode_loads_with_its_frames():
    for episode in sample_corpus():
        frames = episode.frames
        assert frames.images.shape == (episode.n_steps + 1, 64, 64, 3) and frames.images.dtype == np.uint8
        np.testing.assert_array_equal(frames.step_decision, episode.step_decisions())
        assert episode.metadata["crafter_version"] == "1.8.3"


def test_sample_corpus_is_small_and_inside_the_package():
    path = sample_path()
    assert path.is_relative_to(REPO / "workbench" / "data")
    size = sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
    assert size <= 20e6, f"the sample corpus is {size / 1e6:.1f} MB; keep it under 20 MB"


def test_scripted_episodes_get_further_than_random_ones():
    index = sample_corpus().index
    by_policy = index.groupby("policy")["n_unlocked"].mean()
    assert by_policy["scripted"] > by_policy["random"]


def test_the_docstring_names_the_command_and_plan_that_made_it():
    doc = " ".join(workbench.data.sample.__doc__.split())
    assert ".venv/bin/python scripts/make_sample_corpus.py --overwrite" in doc
    assert f"corpus seed {MAKER.SEED}" in doc
    for policy, (episodes, max_steps) in PARTS.items():
        assert f"{episodes} {policy} episodes" in doc and f"most {max_steps}" in doc
    assert {e.metadata["corpus_seed"] for e in sample_corpus()} == {MAKER.SEED}


def test_shipped_import_examples_import_and_verify():
    from workbench.data.importers import import_crafter_recorder, import_rollouts
    from workbench.data.sample import sample_imports_path
    from workbench.scoring import verify_logged

    examples = sample_imports_path()
    recorded = import_crafter_recorder(examples / "recorder", progress=False)
    assert recorded.ok and len(recorded.corpus) == 2 and recorded.corpus.index["has_frames"].all()
    rollouts = import_rollouts(examples / "rollouts", progress=False)
    assert rollouts.ok and len(rollouts.corpus) == 4
    assert rollouts.corpus["shaped-run-21-e2"].metadata["follows"] == "shaped-run-21-e1"
    mismatches = verify_logged(rollouts.corpus)
    assert mismatches.attrs["decisions_checked"] == rollouts.corpus.n_decisions
    # The one decision that does not reproduce is the documented limit of on_done = reset
    # rollouts (tutorial 05): the end state before it was rebuilt without its losses.
    assert mismatches[["episode", "decision"]].values.tolist() == [["shaped-run-21-e2", 1]]
    assert "not stored by the rollout" in mismatches["note"].iloc[0]


SEARCH_SCRIPT = REPO / "scripts" / "make_search_corpus.py"


def _search_maker():
    spec = importlib.util.spec_from_file_location("make_search_corpus", SEARCH_SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SEARCH_MAKER = _search_maker()
SEARCH_PARTS = {policy: (episodes, max_steps) for policy, episodes, max_steps in SEARCH_MAKER.PLAN}


def test_search_corpus_has_the_documented_parts_and_no_frames():
    from workbench.data.sample import search_corpus, search_corpus_path

    corpus = search_corpus()
    index = corpus.index
    assert index.groupby("policy").size().to_dict() == {policy: n for policy, (n, _) in SEARCH_PARTS.items()}
    assert not index["has_frames"].any() and (index["source"] == "recorded").all()
    assert {e.metadata["corpus_seed"] for e in corpus} == {SEARCH_MAKER.SEED}
    for policy, (_, max_steps) in SEARCH_PARTS.items():
        assert (corpus.select(policy=policy).index["steps"] <= max_steps).all()
    by_policy = index.groupby("policy")["n_unlocked"].mean()
    assert by_policy["scripted"] > by_policy["farmer"] > by_policy["random"]
    path = search_corpus_path()
    assert path.is_relative_to(REPO / "workbench" / "data")
    size = sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
    assert size <= 5e6, f"the search corpus is {size / 1e6:.1f} MB; keep it under 5 MB"
    doc = " ".join(workbench.data.sample.__doc__.split())
    assert ".venv/bin/python scripts/make_search_corpus.py --overwrite" in doc
    assert f"corpus seed {SEARCH_MAKER.SEED}" in doc
    for policy, (episodes, max_steps) in SEARCH_PARTS.items():
        assert f"{episodes} {policy} episodes of at most {max_steps}" in doc
