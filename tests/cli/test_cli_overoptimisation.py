"""``workbench overoptimisation CORPUS --config FILE``: the alarm's exit status, the printed lines, --out and --plot."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from helpers import REPO

from workbench.cli import main
from workbench.core.config import RewardConfig
from workbench.data.episodes import Corpus
from workbench.data.sample import search_corpus
from workbench.scoring import score

SHAPED = REPO / "configs" / "upstream_shaped.yaml"
SEARCH = REPO / "workbench" / "data" / "shipped" / "search_corpus"


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main(["overoptimisation", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def longest_chain(gold: np.ndarray, proxy: np.ndarray, candidates: np.ndarray) -> list[int]:
    """The longest sequence of ``candidates`` with gold never rising and proxy never falling."""
    ordered = candidates[np.lexsort((proxy[candidates], -gold[candidates]))]
    chains = [[int(i)] for i in ordered]
    for a in range(len(ordered)):
        for b in range(a):
            if proxy[ordered[b]] <= proxy[ordered[a]] and len(chains[b]) + 1 > len(chains[a]):
                chains[a] = [*chains[b], int(ordered[a])]
    return max(chains, key=len)


@pytest.fixture(scope="module")
def farming_run(tmp_path_factory):
    """A run made of the search corpus's real episodes: the random player's by achievements
    (gold rising), then the longest run of scripted and farmer episodes whose achievements never
    rise while their upstream_shaped return never falls (19 episodes: 20 achievements down to 12,
    return 21.9 up to 33.2)."""
    corpus = search_corpus()
    returns = score(corpus, RewardConfig.from_file(SHAPED)).reward_sum
    policy = corpus.index["policy"].to_numpy()
    gold = corpus.index["n_unlocked"].to_numpy()
    random = np.flatnonzero(policy == "random")
    chain = longest_chain(gold, returns, np.flatnonzero(policy != "random"))
    order = [*random[np.argsort(gold[random], kind="stable")], *chain]
    episodes = list(corpus)
    return Corpus([episodes[i] for i in order]).save(tmp_path_factory.mktemp("run") / "run")


def test_an_alarm_exits_1_and_names_where_it_began(capsys, farming_run, tmp_path):
    out_file, plot = tmp_path / "watch.csv", tmp_path / "watch.png"
    code, out, err = run(capsys, farming_run, "--config", SHAPED, "--reps", "300", "--out", out_file, "--plot", plot)
    assert code == 1, err
    assert "1 alarm(s)" in out and "upstream_shaped: ALARM from episode " in out
    alarms = pd.read_csv(tmp_path / "watch.alarms.csv")
    began = alarms.loc[0, "began_at"]
    assert f"ALARM from episode {began}:" in out
    series = pd.read_csv(tmp_path / "watch.series.csv")
    # the decline starts inside the chain (after the random player's 24 episodes)
    assert series["episode"].tolist().index(began) > 24
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_no_alarm_exits_0_and_too_short_a_run_exits_2(capsys):
    code, out, err = run(
        capsys, SEARCH, "--config", SHAPED, "--config", REPO / "configs" / "consistent.yaml", "--reps", "200"
    )
    assert code == 0, err
    assert "0 alarm(s)" in out and "consistent: no alarm:" in out
    code, _, err = run(capsys, "sample", "--config", SHAPED)
    assert code == 2 and "at least 12 episodes in order, got 10" in err


def test_help_reads_well(capsys):
    with pytest.raises(SystemExit):
        main(["overoptimisation", "--help"])
    out = capsys.readouterr().out
    assert "Gao, Schulman and Hilton (2022)" in out and "exit status: 0 no alarm, 1 an alarm fired" in out
