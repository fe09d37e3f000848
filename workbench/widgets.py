"""Interactive views (ipywidgets 8) over the scoring engine. They hold controls, not logic:
every number comes from ``workbench.scoring``, every figure from ``workbench.plots``-style
matplotlib code, every file from ``RewardConfig`` methods.

``Tuner``: strategy, lambda, a weight slider and a k-limit box per achievement (grouped as
``workbench/data/crafter.yaml`` groups them), resource tables under "advanced"; each change
re-scores the corpus (weights only recombine cached arrays) and redraws, with live lint, a
per-episode returns table, and buttons to save the config or export it into a training TOML.

``Replayer``: an episode's recorded frames step by step beside its state, the current
decision's components and the cumulative returns with a cursor.

``Compare``: two configs side by side over the corpus: which pays more for progress
(``workbench.alignment``), per group and per episode, and which components changed.
"""

from __future__ import annotations

import html
import io
import time
from pathlib import Path
from typing import Any

import ipywidgets as w
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from workbench.alignment import group_comparison, progress_summary
from workbench.config import RewardConfig
from workbench.episodes import Corpus
from workbench.plots import PALETTE, compare_configs, cumulative_return
from workbench.reward import STRATEGIES
from workbench.scoring import Comparison, Scores, compare, prepare, score
from workbench.tables import ACHIEVEMENT_GROUPS, ACHIEVEMENTS, TASK_APP_RESOURCE_WEIGHTS

#: Slider ranges: wide enough for the shipped configs, fine enough to tune by hand.
WEIGHT_RANGE = (-2.0, 10.0, 0.05)
LAMBDA_RANGE = (-1.0, 2.0, 0.05)
RESOURCE_RANGE = (0.0, 1.0, 0.01)
#: What the task app pays an achievement with no weight / limit entry.
DEFAULT_WEIGHT, DEFAULT_LIMIT = 1.0, 1
GROUP_TITLES = {"collect": "collect", "make": "make", "place": "place", "combat_and_survival": "combat and survival"}


#: Resolution of the figures widgets show (pixels per inch).
WIDGET_DPI = 80


def figure_png(figure: Figure) -> bytes:
    """A figure rendered to PNG bytes (Agg), for an ``ipywidgets.Image``.

    The figure keeps the Agg canvas it is drawn on, so drawing the same figure again after
    changing its artists reuses the canvas's renderer and its text-metrics cache: about 40%
    cheaper than ``savefig``, which draws on a new canvas every time (text is most of the cost).
    """
    if not isinstance(figure.canvas, FigureCanvasAgg):
        FigureCanvasAgg(figure)
    figure.set_dpi(WIDGET_DPI)
    buffer = io.BytesIO()
    figure.canvas.print_png(buffer)
    return buffer.getvalue()


def returns_figure(scores: Scores, corpus: Corpus) -> Figure:
    """Shaped return per episode, coloured by policy: the Tuner's live picture."""
    episodes = scores.episodes
    policies = episodes["episode"].map(corpus.groups("policy")).to_numpy()
    colors = {policy: PALETTE[i % len(PALETTE)] for i, policy in enumerate(dict.fromkeys(policies))}
    fig = Figure(figsize=(7.0, 3.2), layout="constrained")
    ax = fig.subplots()
    x = np.arange(len(episodes))
    ax.bar(x, episodes["reward_sum"], color=[colors[p] for p in policies])
    ax.set_xticks(x, [str(e) for e in episodes["episode"]], rotation=60, ha="right", fontsize=7)
    ax.axhline(0, color="0.3", linewidth=0.8)
    ax.set(title=_returns_title(scores), ylabel="shaped return")
    handles = [Patch(color=color, label=policy) for policy, color in colors.items()]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, title="policy")
    return fig


def _returns_title(scores: Scores) -> str:
    return f"Shaped return per episode ({scores.config.effective_strategy})"


def redraw_returns(figure: Figure, scores: Scores) -> bytes:
    """``returns_figure`` updated in place to new scores of the same corpus, as PNG: only the
    bar heights, the y range and the title change, so the canvas is reused (``figure_png``)."""
    ax = figure.axes[0]
    for bar, value in zip(ax.containers[0], scores.episodes["reward_sum"]):
        bar.set_height(value)
    ax.relim()
    ax.autoscale_view()
    ax.set_title(_returns_title(scores))
    return figure_png(figure)


class Tuner:
    """Tune a RewardConfig on a corpus: every control change re-scores and redraws.

    ``tuner.config`` is the config the controls describe; ``tuner.scores`` the latest scores;
    ``tuner.last_update_ms`` how long the last re-score and redraw took. Display it in a
    notebook (``tuner`` as a cell's last line) or use ``tuner.widget``.
    """

    def __init__(self, corpus: Corpus, config: RewardConfig | None = None) -> None:
        self.corpus = corpus
        self.prepared = prepare(corpus)
        self.initial = config or RewardConfig(strategy="per_achievement")
        # Names the controls do not cover (misspelled achievements) are kept as they are, so
        # lint keeps pointing at them and saving never silently drops what the user wrote.
        self._extra_weights = {k: v for k, v in self.initial.weights.items() if k not in ACHIEVEMENTS}
        self._extra_limits = {k: v for k, v in self.initial.k_limits.items() if k not in ACHIEVEMENTS}
        self._build_controls()
        self._build_outputs()
        self.widget = w.VBox([w.HBox([self._controls_box, self._outputs_box])])
        self.update()
        for control in self._all_controls():
            control.observe(self._on_change, names="value")

    # -- the config the controls describe ---------------------------------------------------
    @property
    def config(self) -> RewardConfig:
        weights = {name: s.value for name, s in self.weight_sliders.items()
                   if s.value != DEFAULT_WEIGHT or name in self.initial.weights}
        limits = {name: box.value for name, box in self.limit_boxes.items()
                  if box.value != DEFAULT_LIMIT or name in self.initial.k_limits}
        # The sliders own every item they show: an item slid back to the task app's weight
        # drops out of the overrides even if the starting config overrode it.
        initial = dict(self.initial.resource_overrides)
        inventory = {item: weight for item, weight in initial.pop("inventory", {}).items()
                     if item not in self.resource_sliders}
        inventory.update({item: s.value for item, s in self.resource_sliders.items()
                          if s.value != TASK_APP_RESOURCE_WEIGHTS.inventory_weight(item)})
        overrides = {**initial, **({"inventory": inventory} if inventory else {})}
        return self.initial.with_changes(
            strategy=self.strategy.value,
            indicator_lambda=float(self.lam.value),
            weights={**weights, **self._extra_weights},
            k_limits={**limits, **self._extra_limits},
            resource_overrides=overrides,
        )

    # -- building ---------------------------------------------------------------------------
    def _build_controls(self) -> None:
        start = self.initial
        self.strategy = w.Dropdown(options=list(STRATEGIES), value=start.effective_strategy, description="strategy")
        low, high, step = LAMBDA_RANGE
        self.lam = w.FloatSlider(value=start.indicator_lambda, min=low, max=high, step=step,
                                 description="lambda", continuous_update=False)
        low, high, step = WEIGHT_RANGE
        self.weight_sliders = {
            name: w.FloatSlider(value=float(start.weights.get(name, DEFAULT_WEIGHT)), min=low, max=high, step=step,
                                description=name, continuous_update=False, style={"description_width": "150px"},
                                layout=w.Layout(width="360px"))
            for name in ACHIEVEMENTS
        }
        self.limit_boxes = {
            name: w.IntText(value=int(start.k_limits.get(name, DEFAULT_LIMIT)), description="k",
                            style={"description_width": "15px"}, layout=w.Layout(width="80px"))
            for name in ACHIEVEMENTS
        }
        groups = w.Accordion(children=[
            w.VBox([w.HBox([self.weight_sliders[n], self.limit_boxes[n]]) for n in names])
            for names in ACHIEVEMENT_GROUPS.values()
        ], titles=tuple(GROUP_TITLES.get(g, g) for g in ACHIEVEMENT_GROUPS))
        resource = start.resource_weights
        low, high, step = RESOURCE_RANGE
        self.resource_sliders = {
            item: w.FloatSlider(value=resource.inventory_weight(item), min=low, max=high, step=step,
                                description=item, continuous_update=False, style={"description_width": "110px"})
            for item in TASK_APP_RESOURCE_WEIGHTS.inventory
        }
        advanced = w.Accordion(children=[w.VBox([
            w.HTML("<i>Inventory shaping weights (per_achievement only). Overrides are a workbench "
                   "extension: the task app cannot read them and export drops them.</i>"),
            *self.resource_sliders.values(),
        ])], titles=("advanced: resource tables",))
        self.path = w.Text(value="my_reward.yaml", description="save as")
        self.toml_path = w.Text(value="", placeholder="training.toml", description="export to")
        self.save_button = w.Button(description="Save YAML", icon="save")
        self.export_button = w.Button(description="Export into TOML", icon="upload")
        self.file_status = w.HTML()
        self.save_button.on_click(lambda _: self._file_action(self.save))
        self.export_button.on_click(lambda _: self._file_action(self.export))
        files = w.VBox([w.HBox([self.path, self.save_button]), w.HBox([self.toml_path, self.export_button]), self.file_status])
        self._controls_box = w.VBox([self.strategy, self.lam, groups, advanced, files], layout=w.Layout(width="480px"))

    def _build_outputs(self) -> None:
        self.figure = w.Image(format="png")
        self.table = w.HTML()
        self.lint_view = w.HTML()
        self.timing = w.HTML()
        self.progress_view = w.HTML()  # does the shaping still rank episodes as progress does?
        self._plot: Figure | None = None  # built on the first update, then redrawn in place
        self._outputs_box = w.VBox([self.lint_view, self.progress_view, self.figure, self.timing, self.table])

    def _all_controls(self) -> list[w.Widget]:
        return [self.strategy, self.lam, *self.weight_sliders.values(), *self.limit_boxes.values(),
                *self.resource_sliders.values()]

    # -- reacting ---------------------------------------------------------------------------
    def _on_change(self, _change: dict[str, Any]) -> None:
        self.update()

    def update(self) -> None:
        """Re-score the corpus under the controls' config and redraw everything."""
        start = time.perf_counter()
        config = self.config
        self.scores = score(self.prepared, config)
        if self._plot is None:
            self._plot = returns_figure(self.scores, self.corpus)
        self.figure.value = redraw_returns(self._plot, self.scores)
        self.table.value = self._returns_table()
        self.lint_view.value = self._lint_html(config)
        self.progress_view.value = f"<b>progress:</b> {html.escape(progress_summary(self.scores))}"
        self.last_update_ms = (time.perf_counter() - start) * 1000
        self.timing.value = f"<small>re-scored {self.prepared.n_decisions:,} decisions and redrew in {self.last_update_ms:.0f} ms</small>"

    def _returns_table(self):
        episodes = self.scores.episodes[["episode", "reward_sum", "resource_reward", "env_return", "unique_achievements_total"]]
        return episodes.rename(columns={"reward_sum": "shaped return", "resource_reward": "resource (before lambda)",
                                        "env_return": "Crafter return", "unique_achievements_total": "achievements"}
                               ).to_html(index=False, float_format="%.3f")

    @staticmethod
    def _lint_html(config: RewardConfig) -> str:
        findings = config.lint()
        if not findings:
            return "<b>lint:</b> no findings"
        colors = {"error": "#D55E00", "warning": "#E69F00", "info": "#0072B2"}
        items = "".join(
            f"<li><span style='color:{colors.get(f.level, 'black')}'>{f.level}</span> <code>{html.escape(f.key)}</code>: "
            f"{html.escape(f.message)}</li>"
            for f in findings
        )
        return f"<b>lint:</b><ul>{items}</ul>"

    # -- files ------------------------------------------------------------------------------
    def save(self, path: str | Path | None = None, *, overwrite: bool = False) -> Path:
        """Write the current config as YAML (atomic; an existing file needs ``overwrite``)."""
        return self.config.to_file(path or self.path.value, overwrite=overwrite)

    def export(self, toml_path: str | Path | None = None) -> Path:
        """Write the current config's step_rewards into an existing training TOML."""
        return self.config.export_into(toml_path or self.toml_path.value)

    def _file_action(self, action) -> None:
        try:
            written = action()
        except (OSError, ValueError) as error:  # ConfigError is a ValueError
            self.file_status.value = f"<span style='color:#D55E00'>{html.escape(str(error))}</span>"
        else:
            self.file_status.value = f"wrote <code>{html.escape(str(written))}</code>"

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)


#: How much the Replayer enlarges Crafter's 64x64 frames (nearest neighbour: crisp pixels).
FRAME_SCALE = 5


def enlarged_png(frame: np.ndarray, scale: int = FRAME_SCALE) -> bytes:
    """A 64x64 frame as PNG, enlarged by repeating pixels so they stay sharp."""
    from matplotlib.image import imsave

    buffer = io.BytesIO()
    imsave(buffer, frame.repeat(scale, axis=0).repeat(scale, axis=1), format="png")
    return buffer.getvalue()


class Replayer:
    """Replay an episode's frames step by step beside its rewards under a config.

    Frames are the recorded ones (Crafter cannot be re-simulated). The state shown at step t is
    the one after the last decision completed by then; the components are those of the
    decision step t belongs to; the cumulative plot has a cursor at that decision.
    """

    def __init__(self, corpus: Corpus, config: RewardConfig, *, episode: str | None = None) -> None:
        with_frames = corpus.index.loc[corpus.index["has_frames"], "episode"].tolist()
        if not with_frames:
            raise ValueError("no episode in this corpus has frames: record without --no-frames to replay")
        self.corpus, self.config = corpus, config
        self.scores = score(corpus, config)
        self.episode_picker = w.Dropdown(options=with_frames, value=episode or with_frames[0], description="episode")
        self.play = w.Play(interval=200, step=1, description="play")
        self.step = w.IntSlider(description="step", continuous_update=True, layout=w.Layout(width="420px"))
        w.jslink((self.play, "value"), (self.step, "value"))
        self.frame = w.Image(format="png")
        self.state_view = w.HTML()
        self.components_view = w.HTML()
        self.plot = w.Image(format="png")
        self.widget = w.VBox([
            w.HBox([self.episode_picker, self.play, self.step]),
            w.HBox([self.frame, w.VBox([self.state_view, self.components_view])]),
            self.plot,
        ])
        self.episode_picker.observe(lambda _: self._load_episode(), names="value")
        self.step.observe(lambda _: self.show(), names="value")
        self._load_episode()

    def _load_episode(self) -> None:
        self.episode = self.corpus[self.episode_picker.value]
        self.frames = self.episode.load_frames(keep=False)  # only the shown episode's frames stay in memory
        self.states = self.episode.states()
        # One figure per episode; a step only moves its cursor (see figure_png).
        self._plot = cumulative_return(self.scores, self.episode.id, cursor=1)
        self._cursor = next(line for line in self._plot.axes[0].get_lines() if line.get_label() == "current decision")
        ends = np.cumsum([len(d) for d in self.episode.actions])  # last step of each decision
        self._ends = ends
        self.play.max = self.step.max = int(ends[-1])
        if self.step.value == 0:
            self.show()
        else:
            self.step.value = 0

    def decision_at(self, step: int) -> int:
        """The 1-based decision that step ``step`` belongs to (0 for the reset frame)."""
        return 0 if step == 0 else int(self.frames.step_decision[step - 1])

    def completed_at(self, step: int) -> int:
        """How many decisions are complete once ``step`` steps have run."""
        return int(np.searchsorted(self._ends, step, side="right"))

    def show(self) -> None:
        """Draw the frame, state, components and cursor for the slider's step."""
        step = self.step.value
        decision, completed = self.decision_at(step), self.completed_at(step)
        self.frame.value = enlarged_png(self.frames.images[step])
        self.state_view.value = self._state_html(completed)
        self.components_view.value = self._components_html(decision)
        self._cursor.set_xdata([max(decision, 1)] * 2)
        self.plot.value = figure_png(self._plot)

    def _state_html(self, completed: int) -> str:
        state = self.states[completed]
        inventory = ", ".join(f"{k} {v}" for k, v in state["inventory"].items() if v)
        unlocked = ", ".join(k for k, v in state["achievements_status"].items() if v) or "none"
        return (f"<b>after decision {completed}</b> of {self.episode.n_decisions}<br>"
                f"<b>inventory</b>: {html.escape(inventory)}<br><b>achievements</b>: {html.escape(unlocked)}")

    def _components_html(self, decision: int) -> str:
        if decision == 0:
            return "<i>reset frame: no decision yet</i>"
        components = self.scores.components
        rows = components[(components["episode"] == self.episode.id) & (components["decision"] == decision)]
        if rows.empty:
            return f"<b>decision {decision}</b>: pays nothing"
        table = rows[["kind", "name", "delta", "weight", "scaled"]].to_html(index=False, float_format="%.3f")
        return f"<b>decision {decision}</b>: {rows['scaled'].sum():.3f}{table}"

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)


#: How Compare titles ``alignment.group_comparison``'s columns.
GROUP_COLUMN_TITLES = {"mean_achievements": "mean achievements", "mean_return_a": "mean return A",
                       "mean_return_b": "mean return B", "return_per_achievement_a": "per achievement A",
                       "return_per_achievement_b": "per achievement B"}


class Compare:
    """Two configs side by side over a corpus.

    Pick A and B among named configs (``add`` more, e.g. a Tuner's ``tuner.config``). Shows, for
    each: how well the shaped return agrees with progress (Spearman's rho against achievements
    unlocked, and the episode pairs it ranks against progress), the mean return per group
    (``by``, e.g. policy); then the ``plots.compare_configs`` figure, the per-episode returns
    and ranks, and the components whose corpus totals changed most. ``comparison`` holds the
    latest ``scoring.Comparison``.
    """

    def __init__(self, corpus: Corpus, configs: dict[str, RewardConfig], *, a: str | None = None,
                 b: str | None = None, by: str = "policy", top: int = 12) -> None:
        if not configs:
            raise ValueError("Compare needs at least one named config, e.g. {'shaped': RewardConfig.from_file(...)}")
        self.corpus, self.by, self.top = corpus, by, top
        self.prepared = prepare(corpus)
        self.configs = dict(configs)
        names = list(self.configs)
        for side, name in (("a", a), ("b", b)):
            if name is not None and name not in self.configs:
                raise KeyError(f"{side}={name!r} is not one of the configs {names}")
        self.picker_a = w.Dropdown(options=names, value=a or names[0], description="A")
        self.picker_b = w.Dropdown(options=names, value=b or names[min(1, len(names) - 1)], description="B")
        self.swap_button = w.Button(description="Swap A and B", icon="exchange")
        self.swap_button.on_click(lambda _: self.swap())
        self.summary = w.HTML()
        self.figure = w.Image(format="png")
        self.episodes_view = w.HTML()
        self.components_view = w.HTML()
        tables = w.Tab(children=[self.episodes_view, self.components_view], titles=("episodes", "components"))
        self.widget = w.VBox([w.HBox([self.picker_a, self.picker_b, self.swap_button]), self.summary, self.figure, tables])
        self._updating = False
        self.update()
        for picker in (self.picker_a, self.picker_b):
            picker.observe(lambda _: self.update(), names="value")

    @property
    def config_a(self) -> RewardConfig:
        return self.configs[self.picker_a.value]

    @property
    def config_b(self) -> RewardConfig:
        return self.configs[self.picker_b.value]

    def add(self, name: str, config: RewardConfig, *, side: str | None = None) -> None:
        """Offer ``config`` as ``name`` (replacing a config of that name); with ``side`` ("a" or
        "b") also pick it there."""
        if side not in (None, "a", "b"):
            raise ValueError(f"side must be 'a', 'b' or None, not {side!r}")
        self.configs[name] = config
        self._updating = True  # one re-score for the whole change, not one per widget event
        try:
            for picker in (self.picker_a, self.picker_b):
                value = picker.value
                picker.options = list(self.configs)
                picker.value = value
            if side is not None:
                (self.picker_a if side == "a" else self.picker_b).value = name
        finally:
            self._updating = False
        self.update()

    def swap(self) -> None:
        """Exchange A and B."""
        self._updating = True
        try:
            self.picker_a.value, self.picker_b.value = self.picker_b.value, self.picker_a.value
        finally:
            self._updating = False
        self.update()

    def update(self) -> None:
        """Compare the picked configs and redraw everything."""
        if self._updating:
            return
        labels = (f"A: {self.picker_a.value}", f"B: {self.picker_b.value}")
        self.comparison: Comparison = compare(self.prepared, self.config_a, self.config_b)
        self.summary.value = self._summary_html(labels)
        self.figure.value = figure_png(compare_configs(self.comparison, labels=labels, top=self.top, corpus=self.corpus, by=self.by))
        self.episodes_view.value = self._episodes_html()
        self.components_view.value = self._components_html()

    def _summary_html(self, labels: tuple[str, str]) -> str:
        rows = []
        for label, scores in zip(labels, (self.comparison.a, self.comparison.b)):
            config = scores.config
            rows.append(f"<li><b>{html.escape(label)}</b>: {config.effective_strategy}, lambda x{config.effective_lambda:g}; "
                        f"{html.escape(progress_summary(scores))}</li>")
        table = group_comparison(self.comparison, self.corpus, by=self.by).rename(columns=GROUP_COLUMN_TITLES)
        return f"<ul>{''.join(rows)}</ul>{table.to_html(index=False, float_format='%.3f')}"

    def _episodes_html(self) -> str:
        groups = self.corpus.groups(self.by)
        episodes = self.comparison.episodes.assign(**{self.by: lambda t: t["episode"].map(groups)})
        columns = ["episode", self.by, "env_return", "return_a", "return_b", "difference", "rank_a", "rank_b"]
        return episodes[columns].to_html(index=False, float_format="%.3f")

    def _components_html(self) -> str:
        """The ``top`` components whose corpus totals changed most between A and B."""
        changes = self.comparison.largest_changes(self.top)
        return changes[["component", "total_a", "total_b", "difference"]].to_html(index=False, float_format="%.3f")

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)
