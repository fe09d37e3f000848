"""``workbench report`` and ``workbench audit --report``: the page written, never over a file unless asked."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
from helpers.hostile import cli, one_line_error
from helpers.report_inputs import RECOMMENDED, SHAPED

from workbench.data.sample import sample_corpus
from workbench.data.storage import save_corpus


def test_report_writes_one_page_and_names_its_command(capsys, tmp_path: Path) -> None:
    out = tmp_path / "out" / "report.html"
    code, printed, _ = cli("report", "sample", "--config", SHAPED, "--config", RECOMMENDED, "--out", out, capsys=capsys)
    assert code == 0 and f"wrote {out}" in printed
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and page.count("<script>") == 1
    assert f"workbench report sample --config {SHAPED} --config {RECOMMENDED} --out {out}" in page
    assert 100_000 < out.stat().st_size < 5_000_000  # a few MB at most for the sample


def test_report_never_overwrites_unless_asked(capsys, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    out.write_text("mine")
    code, _, err = cli("report", "sample", "--config", SHAPED, "--out", out, capsys=capsys)
    assert code == 2 and out.read_text() == "mine"
    one_line_error(err, out, "--overwrite")
    code, _, _ = cli("report", "sample", "--config", SHAPED, "--out", out, "--overwrite", capsys=capsys)
    assert code == 0 and out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_report_refuses_a_symlink_and_a_wrong_suffix(capsys, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.txt"
    target.write_text("keep")
    link = tmp_path / "report.html"
    os.symlink(target, link)
    code, _, err = cli("report", "sample", "--config", SHAPED, "--out", link, "--overwrite", capsys=capsys)
    assert code == 2 and target.read_text() == "keep"
    one_line_error(err, link)
    code, _, err = cli("report", "sample", "--config", SHAPED, "--out", tmp_path / "report.pdf", capsys=capsys)
    assert code == 2
    one_line_error(err, "report.pdf", ".html")


def test_audit_report_keeps_the_exit_status_and_says_it_in_words(capsys, tmp_path: Path) -> None:
    flagged, clean = tmp_path / "flagged.html", tmp_path / "clean.html"
    # the shaped config pays the sample farmers' stone loop: a flag, exit 1 (tests/cli/test_cli_audit.py)
    code, _, err = cli("audit", "sample", "--config", SHAPED, "--report", flagged, capsys=capsys)
    assert code == 1 and f"wrote {flagged}" in err
    assert "Exit status 1 (flagged)" in flagged.read_text(encoding="utf-8")
    code, _, _ = cli("audit", "sample", "--config", SHAPED, "--report", flagged, capsys=capsys)
    assert code == 2  # exists, no --overwrite: nothing audited, nothing written
    # consistent pays no resource shaping: nothing farms, nothing dominates past the bar, exit 0
    code, _, _ = cli("audit", "sample", "--config", consistent(), "--report", clean, capsys=capsys)
    assert code == 0 and "Exit status 0 (clean)" in clean.read_text(encoding="utf-8")


def test_audit_follow_report_is_written_when_the_run_ends(capsys, tmp_path: Path) -> None:
    source, target, page = tmp_path / "recording", tmp_path / "corpus", tmp_path / "live.html"
    save_corpus(sample_corpus()[np.arange(3)], source)  # three scripted episodes of the sample
    argv = ["audit", target, "--config", consistent(), "--follow", source, "--interval", "0.01", "--max-polls", "3"]
    code, out, err = cli(*argv, "--json", "--report", page, capsys=capsys)
    assert code == 0 and json.loads(out)["clean"] is True  # --json stays one document on stdout
    assert f"wrote {page}" in err
    document = page.read_text(encoding="utf-8")
    # a followed run is live: the watch is there, and says it needs 12 episodes (3 came)
    assert '<section id="watch">' in document and "at least 12 episodes" in document
    assert "Exit status 0 (clean)" in document


def consistent() -> Path:
    """The shipped consistent config (no resource shaping: nothing to farm)."""
    return SHAPED.with_name("consistent.yaml")
