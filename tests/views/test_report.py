"""The report page (``workbench.views.report``): hostile names shown as text, hover values in the
SVG, the filmstrip's decisions, the corpus digest, and what the page holds for the sample."""

from __future__ import annotations

import html.parser
import re

import numpy as np
import pandas as pd
import pytest
from helpers import REPO
from helpers.report_inputs import HOSTILE, configs, hostile_configs, hostile_corpus
from matplotlib.figure import Figure

from workbench.core.config import RewardConfig
from workbench.data.episodes import Corpus
from workbench.data.policies.probes import PROBES
from workbench.data.sample import sample_corpus, sample_path, search_corpus
from workbench.data.storage import load_corpus
from workbench.views.plots import tip
from workbench.views.plots.exploitability import probe_pay
from workbench.views.plots.returns import ESTIMATORS, advantages
from workbench.views.report import build_report, corpus_digest, gather, render
from workbench.views.report.filmstrip import strip_decisions
from workbench.views.report.svg import figure_svg


class _Elements(html.parser.HTMLParser):
    """Every start tag with its attributes, and the text inside <script> elements."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[str] = []
        self.text: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in_script = tag == "script"

    def handle_endtag(self, tag):
        self._in_script = False

    def handle_data(self, data):
        (self.scripts if self._in_script else self.text).append(data)


def _parse(document: str) -> _Elements:
    parser = _Elements()
    parser.feed(document)
    return parser


@pytest.fixture(scope="module")
def sample_data():
    return gather(sample_corpus(), configs(), corpus_name="sample", command="workbench report sample")


@pytest.fixture(scope="module")
def hostile_page() -> str:
    return build_report(hostile_corpus(), hostile_configs(), corpus_name=HOSTILE[2], command=f"workbench {HOSTILE[0]}")


def test_markup_in_names_is_shown_as_text(hostile_page: str) -> None:
    page = _parse(hostile_page)
    # one script, the table sorter; no element carries an event handler or points outside the file
    assert len([t for t, _ in page.tags if t == "script"]) == 1
    assert "alert" not in "".join(page.scripts)
    handlers = [(t, a) for t, attrs in page.tags for a in attrs if a.lower().startswith("on")]
    assert handlers == []
    assert not [t for t, attrs in page.tags if t == "img" and not (attrs.get("src") or "").startswith("data:image/png")]
    # the names are there as text (the corpus name, config names, episode ids, policies), never as markup
    shown = "".join(page.text)
    for name in HOSTILE:
        assert name in shown
        assert "<" not in name or name not in hostile_page
    # the farmers' loops were still found and filmed under their hostile ids
    assert hostile_page.count('<div class="strip">') >= 3


def test_a_bar_and_each_point_say_their_value_on_hover() -> None:
    fig = Figure()
    ax = fig.subplots()
    ax.bar([0, 1], [2.5, 4.0], label="paid")
    ax.set_xticks([0, 1], ["stone", "wood"])
    tip(ax.scatter([1.0, 2.0, 3.0], [4.0, 5.0, 6.0]), ["e<1>", "e2", "e3"])
    svg = figure_svg(fig, title="a <test>")
    titles = re.findall(r"<title>(.*?)</title>", svg)
    # the figure's own title, two bars (category / series: height), three points as attached
    assert titles[0] == "a &lt;test&gt;"
    assert "stone / paid: 2.5" in titles and "wood / paid: 4" in titles
    assert ["e&lt;1&gt;", "e2", "e3"] == [t for t in titles if t.startswith("e")]
    # ids are prefixed, so two figures on one page never share one; references follow them
    ids = re.findall(r' id="([^"]+)"', svg)
    assert ids and all(re.match(r"f\d+-", i) for i in ids)
    for ref in re.findall(r'(?:href="#|url\(#)([^")]+)', svg):
        assert ref in ids


def test_the_filmstrip_covers_the_first_lap() -> None:
    # 16 laps over decisions 164..207: a lap is round(43 / 16) = 3 decisions; from the decision
    # before the first lap (163) to the one after it (164 + 3 + 1 = 168): 6 decisions, all shown
    assert strip_decisions(164, 207, 16) == [163, 164, 165, 166, 167, 168]
    # a 1-decision loop at the start: never below 0
    assert strip_decisions(0, 0, 1) == [0, 1, 2]
    # a long lap is thinned to 8 evenly spread decisions: linspace(9, 31, 8) rounded
    assert strip_decisions(10, 30, 1) == [9, 12, 15, 18, 22, 25, 28, 31]


def test_the_digest_is_the_episodes_not_the_storage(tmp_path) -> None:
    in_memory = Corpus(list(sample_corpus()))
    from_folder = load_corpus(sample_path())
    assert corpus_digest(in_memory) == corpus_digest(from_folder)
    assert corpus_digest(from_folder[np.arange(9)]) != corpus_digest(from_folder)


def test_the_sample_page_holds_every_section(sample_data) -> None:
    document = render(sample_data)
    for anchor in ("corpus", "configs", "returns", "audit", "shaping", "exploitability", "provenance"):
        assert f'<section id="{anchor}">' in document and f'href="#{anchor}"' in document
    assert 'id="watch"' not in document  # not a live corpus
    # the sample's facts, counted by hand from its index: 10 episodes, 4 scripted, 3 farmer, 3 random
    assert "scripted 4, farmer 3, random 3" in document
    assert f"sha256:{corpus_digest(sample_data.corpus)}" in document
    # the audit's verdict in words matches its exit status (the shaped config farms: exit 1)
    assert "Exit status 1 (flagged)" in document
    # one finding block per flag and note the audit returned
    found = sample_data.audit
    assert document.count('<div class="finding ') == len(found.flags) + len(found.notes) + len(
        found.extra.get("notes", [])
    )
    # a figure per figure function called: group returns, ranks, one comparison, 2 shares, 2 advantages
    assert document.count('<svg class="figure"') + document.count('class="figure"') >= 7


def test_a_live_corpus_too_short_for_the_watch_says_why() -> None:
    data = gather(sample_corpus(), configs(), corpus_name="sample", command="x", live=True)
    document = render(data)
    # the watch needs 12 episodes in order (workbench.analysis.overoptimisation); the sample has 10
    assert '<section id="watch">' in document and "at least 12 episodes" in document


def test_a_live_corpus_long_enough_has_its_watch_drawn() -> None:
    corpus = search_corpus()  # 72 episodes, no frames
    data = gather(corpus, configs(), corpus_name="search", command="x", live=True)
    document = render(data)
    watch = document[document.index('<section id="watch">') :]
    assert watch.count('class="figure"') == 1 and "No watch yet" not in watch
    # one alarm row per config, as the watch computed it
    assert len(data.watch.alarms) == 2
    # the corpus has no frames: each finding about an episode says so instead of a filmstrip
    assert '<div class="strip">' not in document
    about_episodes = sum(isinstance(e, dict) and "episode" in e for e in data.audit.flags["evidence"])
    assert document.count("No frames: this episode was recorded or imported without them.") >= min(about_episodes, 1)


def test_many_rollouts_are_thinned_in_the_advantages_figure() -> None:
    # 1,000 rollouts with returns 0..999: 400 drawn per estimator, spread over the returns
    rows = pd.DataFrame({"episode": [f"e{k}" for k in range(1000)], "return": np.arange(1000.0)})
    rows = rows.assign(**{name: rows["return"] - 499.5 for name in ESTIMATORS})
    fig = advantages(rows)
    drawn = [len(c.get_offsets()) for c in fig.axes[0].collections]
    assert drawn == [400, 400, 400, 400]
    assert "400 of 1000 rollouts" in fig.axes[0].get_title()


def _section(document: str, anchor: str) -> str:
    start = document.index(f'<section id="{anchor}">')
    return document[start : document.index("</section>", start)]


def test_no_probe_is_above_honest_play_under_consistent() -> None:
    # By the definition (analysis.exploitability, spec reward.md's "consistent"): consistent pays
    # 1.0 * lambda on a decision that unlocks an achievement for the first time and 0 otherwise
    # (step_beta 0, no resource shaping). A progress-free decision unlocks nothing, so every
    # probe's sustained progress-free pay is 0, honest play's too; 0 / 0 is a ratio of 0 (an
    # unpaid probe) and nothing is above.
    consistent = RewardConfig.from_file(REPO / "configs" / "consistent.yaml")
    data = gather(sample_corpus(), {"consistent": consistent}, corpus_name="sample", command="x")
    found = data.parts[0].exploitability
    assert not isinstance(found, str)
    assert sorted(found.probes["probe"]) == sorted(PROBES)  # one row per shipped probe
    assert found.honest_sustained == 0.0
    assert (found.probes["sustained"].fillna(0.0) == 0.0).all() and (found.probes["ratio"].fillna(0.0) == 0.0).all()
    assert not found.probes["above"].any()
    document = render(data)
    assert 'href="#exploitability"' in document
    section = _section(document, "exploitability")
    assert f"Under consistent, 0 of {len(PROBES)} probe loop(s) pay more than honest play" in section
    assert "No probe loop is paid anything without progress" in section
    assert "never with the achievement weights" in section
    assert section.count('class="figure"') == 1
    # one table row per probe, each saying "below"
    assert section.count("<td>below</td>") == len(PROBES) and "<td>above</td>" not in section


def test_the_sentence_agrees_with_the_table_under_a_shaped_config(sample_data) -> None:
    section = _section(render(sample_data), "exploitability")
    for part in sample_data.parts:
        probes = part.exploitability.probes
        above = int(probes["above"].sum())
        assert f"Under {part.name}, {above} of {len(PROBES)} probe loop(s)" in section
        # worst first: the sustained pay never rises down the table
        sustained = probes["sustained"].dropna().to_numpy()
        assert (np.diff(sustained) <= 0).all()
        assert f"The worst is {probes['probe'].iloc[0]} " in section
    # an above/below cell per probe and config; a figure per config
    assert section.count("<td>above</td>") + section.count("<td>below</td>") == len(PROBES) * len(sample_data.parts)
    assert section.count('class="figure"') == len(sample_data.parts)


def test_the_probe_figure_says_each_pay_on_hover() -> None:
    # two probes by hand: "a" paid 3.0 per 100 against honest 1.5 (x2, above), "b" paid 1.0 (x0.67)
    probes = pd.DataFrame(
        {
            "probe": ["a", "b"],
            "loop": ["loop a", "loop b"],
            "sustained": [3.0, 1.0],
            "ratio": [2.0, 1.0 / 1.5],
            "above": [True, False],
            "episode": ["ea", "eb"],
            "decision": [10, 20],
        }
    )
    fig = probe_pay(probes, 1.5)
    ax = fig.axes[0]
    widths = sorted(round(p.get_width(), 6) for p in ax.patches if p.get_height() == pytest.approx(0.7))
    assert widths == [1.0, 3.0]
    legend = {t.get_text() for t in ax.get_legend().get_texts()}
    assert legend == {"above honest play", "not above", "honest play (1.5)"}
    titles = re.findall(r"<title>(.*?)</title>", figure_svg(fig, title="probes"))
    assert any(t.startswith("a (loop a): 3 per 100") and "x2 honest play" in t for t in titles)
    assert any(t.startswith("b (loop b): 1 per 100") and "x0.667 honest play" in t for t in titles)
    assert any(t.startswith("honest play: 1.5 per 100") for t in titles)
