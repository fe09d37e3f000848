"""Saving imports: all or nothing, --overwrite, full disks and unwritable folders."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.hostile import (
    RECOMMENDED,
    SAMPLE_ROLLOUTS,
    cli,
    good_rollout,
    one_line_error,
    rollout,
    saved_ids,
    text_obs,
    tree,
    write_json,
)

from workbench.data.storage import load_corpus


def test_import_overwrite(tmp_path, capsys):
    source = write_json(tmp_path / "r.json", good_rollout())
    out = tmp_path / "o"
    assert cli("import", "rollouts", source, "--out", out, "--quiet", capsys=capsys)[0] == 0
    saved = tree(out)
    code, _, err = cli("import", "rollouts", source, "--out", out, "--quiet", capsys=capsys)
    assert code == 2
    one_line_error(err, out, "good", "--overwrite")
    assert tree(out) == saved
    assert cli("import", "rollouts", source, "--out", out, "--quiet", "--overwrite", capsys=capsys)[0] == 0
    assert saved_ids(out)[0] == "good"


def test_import_into_a_full_disk_leaves_nothing_and_loses_nothing(tmp_path, full_disk, capsys):
    out = full_disk / "corpus"
    small = write_json(tmp_path / "small.json", good_rollout("kept"))
    first = cli("import", "rollouts", small, "--out", out, "--quiet", capsys=capsys)
    saved = tree(out) if first[0] == 0 else {}
    code, _, err = cli("import", "rollouts", SAMPLE_ROLLOUTS, "--out", out, "--quiet", capsys=capsys)
    assert code == 2
    one_line_error(err, out)
    assert tree(out) == saved if out.exists() else saved == {}
    if (full_disk / "filler").exists():  # room again: the retry succeeds (no orphan blocks it)
        (full_disk / "filler").unlink()
        assert cli("import", "rollouts", SAMPLE_ROLLOUTS, "--out", out, "--quiet", capsys=capsys)[0] == 0
        assert len(saved_ids(out)) == 4 + len(saved and [1])


def test_import_into_an_unwritable_folder(read_only_dir, capsys):
    code, _, err = cli("import", "rollouts", SAMPLE_ROLLOUTS, "--out", read_only_dir / "o", "--quiet", capsys=capsys)
    assert code == 2
    one_line_error(err, read_only_dir / "o")


def test_score_out_into_an_unwritable_folder(read_only_dir, capsys):
    code, _, err = cli("score", "--config", RECOMMENDED, "sample", "--out", read_only_dir / "s.csv", capsys=capsys)
    assert code == 2
    one_line_error(err, read_only_dir)


def _batch(tmp_path, bad: dict) -> Path:
    """A JSONL of a good response, ``bad``, then another good one."""
    file = tmp_path / "batch.jsonl"
    lines = [good_rollout("good1"), bad, good_rollout("good2")]
    file.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return file


def _with(run_id: str, edit) -> dict:
    response = good_rollout(run_id)
    edit(response)
    return response


@pytest.mark.parametrize(
    "bad, words",
    [
        (
            _with("listed", lambda r: r["trajectories"][0].update(policy_id=["a", "b"])),
            "policy is ['a', 'b'], not a string",
        ),
        (good_rollout("\ud800x"), "not valid UTF-8"),
        (
            _with(
                "keyed",
                lambda r: r["trajectories"][0]["steps"][0].update(info={"stepwise": {"\udc80": 2}}),
            ),
            "not valid UTF-8",
        ),
        (
            _with(
                "deep",
                lambda r: r["trajectories"][0].update(
                    env_id=[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[0]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]
                ),
            ),
            "nested more than 32 deep",
        ),
        (
            rollout("wood", [text_obs(0, inventory="empty"), text_obs(1, inventory="wood:1"), text_obs(2)]),
            "status_collect_wood",
        ),
    ],
)
def test_an_episode_that_cannot_be_stored_is_its_own_problem(tmp_path, capsys, bad, words):
    source = _batch(tmp_path, bad)
    out = tmp_path / "out"
    code, stdout, _ = cli("import", "rollouts", source, "--out", out, "--quiet", capsys=capsys)
    assert code == 1
    problems = [line for line in stdout.splitlines() if line.startswith("  - ")]
    assert len(problems) == 1 and str(source) in problems[0] and "line 2" in problems[0], stdout
    assert words in problems[0], problems[0]
    assert sorted(saved_ids(out)) == ["good1", "good2"]


def test_a_seed_past_int64_is_kept_in_the_metadata(tmp_path, capsys):
    source = _batch(tmp_path, _with("huge", lambda r: r.update(request={"env": {"seed": 2**70}})))
    out = tmp_path / "out"
    assert cli("import", "rollouts", source, "--out", out, "--quiet", capsys=capsys)[0] == 0
    corpus = load_corpus(out)
    assert sorted(corpus.ids) == ["good1", "good2", "huge"]
    assert corpus["huge"].metadata["seed"] == 2**70
    assert corpus.index.set_index("episode").loc["huge", "seed"] == 2**70


def test_a_failed_import_never_removes_what_another_writer_saved_meanwhile(tmp_path, capsys, monkeypatch):
    import errno
    from contextlib import contextmanager

    from helpers.episodes import make_episode

    from workbench.data.episodes import Corpus
    from workbench.data.importers import pipeline
    from workbench.data.storage import save_corpus

    out = tmp_path / "out"
    save_corpus(Corpus([make_episode("before")]), out)
    real = pipeline.staged_save

    @contextmanager
    def another_writer_then_a_full_disk(root, **kwargs):
        save_corpus(Corpus([make_episode("other")]), root)  # lands after the import began, before its save

        def full(corpus):
            raise OSError(errno.ENOSPC, "No space left on device")

        with real(root, **kwargs) as save:
            save.add = full
            yield save

    monkeypatch.setattr(pipeline, "staged_save", another_writer_then_a_full_disk)
    source = write_json(tmp_path / "r.json", good_rollout("mine"))
    code, _, err = cli("import", "rollouts", source, "--out", out, "--quiet", capsys=capsys)
    assert code == 2
    one_line_error(err, out, "No space left")
    assert sorted(saved_ids(out)) == ["before", "other"]


def test_a_failed_import_into_a_new_folder_leaves_no_folder(tmp_path, capsys, monkeypatch):
    import errno

    from workbench.data.storage import columnar

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(columnar, "_write_frames", full)
    out = tmp_path / "new" / "corpus"
    source = write_json(tmp_path / "r.json", good_rollout("mine"))
    assert cli("import", "rollouts", source, "--out", out, "--quiet", capsys=capsys)[0] == 2
    assert not out.exists()
