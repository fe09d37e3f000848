"""Saving imports: all or nothing, --overwrite, full disks and unwritable folders."""

from __future__ import annotations

from helpers.hostile import RECOMMENDED, SAMPLE_ROLLOUTS, cli, good_rollout, one_line_error, saved_ids, tree, write_json


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
