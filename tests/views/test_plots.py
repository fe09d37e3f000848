"""Every figure builds from the sample corpus, returns a Figure and is labelled."""

from __future__ import annotations

import pytest
from helpers import REPO
from matplotlib.figure import Figure

from workbench.core.config import RewardConfig
from workbench.data.sample import sample_corpus
from workbench.scoring import compare, score
from workbench.views import plots


@pytest.fixture(scope="module")
def setting():
    corpus = sample_corpus()
    shaped = RewardConfig.from_file(REPO / "configs" / "upstream_shaped.yaml")
    recommended = RewardConfig.from_file(REPO / "configs" / "recommended.yaml")
    return corpus, score(corpus, shaped), compare(corpus, shaped, recommended)


def _figures(setting):
    corpus, scores, comparison = setting
    episode = corpus.ids[0]
    return [
        plots.decision_components(scores, episode),
        plots.cumulative_return(scores, episode, cursor=10),
        plots.achievement_timeline(corpus[0]),
        plots.compare_configs(comparison, labels=("upstream", "recommended")),
        plots.compare_configs(comparison, labels=("upstream", "recommended"), corpus=corpus),
        plots.component_share(scores, corpus=corpus),
        plots.return_vs_achievements(scores, corpus),
    ]


@pytest.mark.slow
def test_every_figure_is_returned_titled_and_labelled(setting, tmp_path):
    for number, figure in enumerate(_figures(setting)):
        assert isinstance(figure, Figure)
        for axes in figure.axes:
            if axes.get_title():  # twin axes share the main axes' title
                assert axes.get_xlabel()
        assert any(axes.get_title() for axes in figure.axes)
        figure.savefig(tmp_path / f"{number}.png")
        assert (tmp_path / f"{number}.png").stat().st_size > 5_000


def test_unknown_episode_is_named(setting):
    _, scores, _ = setting
    with pytest.raises(KeyError, match="no-such-episode"):
        plots.decision_components(scores, "no-such-episode")


def test_stacked_bars_add_up_to_the_decision_rewards(setting):
    corpus, scores, _ = setting
    episode = corpus.ids[0]
    figure = plots.decision_components(scores, episode)
    heights = sum(patch.get_height() for patch in figure.axes[0].patches)
    expected = scores.decisions.loc[scores.decisions["episode"] == episode, "reward"].sum()
    assert heights == pytest.approx(expected)


def _text_boxes(figure) -> list[tuple[str, object]]:
    """Every shown tick label and legend text of ``figure`` with its box in display pixels."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(figure)  # a Figure() has no canvas of its own to draw on
    canvas.draw()
    renderer = canvas.get_renderer()
    boxes = []
    for axes in figure.axes:
        for axis in (axes.xaxis, axes.yaxis):
            low, high = sorted(axis.get_view_interval())
            for tick in axis.get_major_ticks():  # only the ticks drawn: those inside the view
                label = tick.label1
                if low - 1e-9 <= tick.get_loc() <= high + 1e-9 and label.get_visible() and label.get_text():
                    boxes.append((label.get_text(), label.get_window_extent(renderer)))
        legend = axes.get_legend()
        for text in legend.get_texts() if legend is not None else []:
            boxes.append((text.get_text(), text.get_window_extent(renderer)))
    return boxes


def test_uuid_policies_and_long_names_never_overlap_or_leave_the_figure():
    from helpers.long_names import long_name, uuid_policies

    from workbench.analysis.diagnostics import diagnose
    from workbench.views.plots.diagnostics import diagnosis_figure

    corpus = uuid_policies(sample_corpus())
    shaped = RewardConfig.from_file(REPO / "configs" / "upstream_shaped.yaml")
    recommended = RewardConfig.from_file(REPO / "configs" / "recommended.yaml")
    scores = score(corpus, shaped)
    names = (long_name("upstream_shaped"), long_name("recommended"))
    figures = [
        plots.component_share(scores, corpus=corpus),
        plots.return_vs_achievements(scores, corpus),
        plots.compare_configs(compare(corpus, shaped, recommended), labels=names, corpus=corpus),
        diagnosis_figure(diagnose(corpus, shaped, reps=50)),
    ]
    for figure in figures:
        boxes = _text_boxes(figure)
        assert any("…" in text for text, _ in boxes)  # the UUIDs were shortened where they are shown
        width, height = figure.bbox.width, figure.bbox.height
        for text, box in boxes:
            assert box.x0 >= -1 and box.x1 <= width + 1 and box.y0 >= -1 and box.y1 <= height + 1, text
        for i, (a, p) in enumerate(boxes):
            for b, q in boxes[i + 1 :]:
                overlap_x = min(p.x1, q.x1) - max(p.x0, q.x0)
                overlap_y = min(p.y1, q.y1) - max(p.y0, q.y0)
                assert not (overlap_x > 1 and overlap_y > 1), (a, b)


def test_dollar_signs_in_names_are_drawn_as_written():
    """A policy called ``cost $5 vs $8`` keeps its dollars: matplotlib would otherwise read the
    text between them as mathtext and draw an italic ``5 vs`` with no dollar signs."""
    import copy

    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from workbench.data.episodes import Corpus

    name = "cost $5 vs $8"
    corpus = sample_corpus()
    episodes = []
    for episode_id in corpus.ids:
        episode = copy.copy(corpus[episode_id])
        episode.metadata = {**episode.metadata, "policy": name}
        episodes.append(episode)
    renamed = Corpus(episodes)
    scores = score(renamed, RewardConfig.from_file(REPO / "configs" / "upstream_shaped.yaml"))
    figure = plots.return_vs_achievements(scores, renamed)
    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    (shown,) = figure.axes[0].get_legend().get_texts()
    drawn = shown.get_window_extent(canvas.get_renderer()).width
    # The same characters drawn literally in the same font on a figure of their own: as wide.
    # As mathtext ("5 vs" in italics, no dollars) the legend text would be about a third narrower.
    reference = Figure(dpi=figure.dpi)
    plain = reference.text(0, 0, name, fontproperties=shown.get_fontproperties(), parse_math=False)
    reference_canvas = FigureCanvasAgg(reference)
    reference_canvas.draw()
    assert drawn == pytest.approx(plain.get_window_extent(reference_canvas.get_renderer()).width, rel=0.01)


def test_every_figure_function_draws_text_literally():
    """Each public figure function of the plots package goes through ``literal_text``."""
    import inspect

    from workbench.views.plots import diagnostics, exploitability, overoptimisation, returns, search

    checked = []
    for module in (plots, diagnostics, exploitability, overoptimisation, returns, search):
        for name, function in inspect.getmembers(module, inspect.isfunction):
            if function.__module__ != module.__name__ or name.startswith("_"):
                continue
            if inspect.signature(function).return_annotation == "Figure":
                assert hasattr(function, "__wrapped__"), f"{module.__name__}.{name} reads $ as mathtext"
                checked.append(name)
    # 6 in the package itself, 1 diagnostics, 1 exploitability, 1 over-optimisation, 3 returns, 2 search
    assert len(checked) == 14, checked
