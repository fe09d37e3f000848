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
