"""The Tuner: tune a RewardConfig on a corpus and see, live while dragging, what it pays for."""

from __future__ import annotations

import html
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ipywidgets as w
import numpy as np

from workbench.analysis.alignment import progress_summary
from workbench.core.config import RewardConfig
from workbench.core.crafter_facts import ACHIEVEMENT_GROUPS, ACHIEVEMENTS
from workbench.core.resource_weights import TASK_APP_RESOURCE_WEIGHTS
from workbench.core.reward import STRATEGIES
from workbench.data.episodes import Corpus
from workbench.errors import WorkbenchError
from workbench.scoring import prepare, score
from workbench.views.widgets.common import (
    CONTROL_WIDTH,
    LatestWins,
    counts_note,
    error_html,
    fixed,
    group_colors,
    groups_of,
    lined,
    lines_box,
    slider_style,
)
from workbench.views.widgets.returns_figure import ALL_POINTS_UP_TO, EXTREMES, ReturnsFigure

#: Slider ranges: wide enough for the shipped configs; step 0.01 (drag, arrow keys or typing).
WEIGHT_RANGE = (-2.0, 10.0, 0.01)
LAMBDA_RANGE = (-1.0, 2.0, 0.01)
RESOURCE_RANGE = (0.0, 1.0, 0.01)
#: What the task app pays an achievement with no weight / limit entry.
DEFAULT_WEIGHT, DEFAULT_LIMIT = 1.0, 1
GROUP_TITLES = {"collect": "collect", "make": "make", "place": "place", "combat_and_survival": "combat and survival"}
#: Undo keeps at least this many steps; changes to one control within MERGE_SECONDS are one step.
UNDO_STEPS, MERGE_SECONDS = 50, 1.0
ALL = "all policies"
#: Fixed heights of the text boxes in lines: two progress sentences (each wrapping over up to
#: four lines of 12 px text in a narrow column), the returns table (header, top 5, bottom 5, the hint) and lint.
PROGRESS_LINES, EXTREMES_LINES, LINT_LINES = 8, 14, 6
#: The returns table's cells without padding, so each row is one line high.
EXTREMES_STYLE = "<style>.workbench-extremes td, .workbench-extremes th { padding: 0 4px; }</style>"


class Tuner:
    """Tune a RewardConfig on a corpus: every control change re-scores and redraws.

    ``tuner.config`` is the config the controls describe, ``tuner.baseline`` the starting one
    (drawn as a grey ghost); ``tuner.scores`` the latest scores; ``tuner.last_update_ms`` how long
    the last re-score and redraw took in the kernel. ``link(replayer=..., compare=...)`` makes a
    click on an episode open it in a ``Replayer`` and the "send to Compare" button offer the
    config to a ``Compare``. Display it in a notebook (``tuner`` as a cell's last line).
    """

    def __init__(
        self, corpus: Corpus, config: RewardConfig | None = None, *, replayer: Any = None, compare: Any = None
    ) -> None:
        self.corpus = corpus
        self.prepared = prepare(corpus)
        self.baseline = self.initial = config or RewardConfig(strategy="per_achievement")
        self.replayer, self.compare = replayer, compare
        # Names the controls do not cover (misspelled achievements) are kept as they are, so
        # lint keeps pointing at them and saving never silently drops what the user wrote.
        self._extra_weights = {k: v for k, v in self.initial.weights.items() if k not in ACHIEVEMENTS}
        self._extra_limits = {k: v for k, v in self.initial.k_limits.items() if k not in ACHIEVEMENTS}
        groups = groups_of(corpus, "policy").reindex(list(self.prepared.ids))
        self._policies = list(dict.fromkeys(groups.astype(str)))
        self._policy_code = groups.map({p: i for i, p in enumerate(self._policies)}).to_numpy(dtype=np.int64)
        self._ids = np.array(self.prepared.ids, dtype=object)
        self.baseline_scores = score(self.prepared, self.baseline)
        self._shown: np.ndarray = np.zeros(0, dtype=np.int64)
        self._baseline_key: bytes | None = None
        self._updates = LatestWins(self.update)
        self._applying = False
        self._build_controls()
        self._build_outputs()
        outputs = w.VBox(
            [self.header, self.progress_view, self.figure.widget, self.extremes_view, self.lint_view, self.timing],
            layout=w.Layout(flex="1 1 360px", min_width="360px", overflow="hidden"),
        )
        self.widget = w.HBox([self._controls_box, outputs], layout=w.Layout(flex_flow="row wrap", width="100%"))
        self.widget.add_class("workbench-tuner")
        self.history: list[tuple] = [self._snapshot()]
        self._last_change: tuple[str, float] = ("", 0.0)
        self.update()
        for name, control in self._named_controls().items():
            control.observe(lambda change, name=name: self._on_change(name, change), names="value")
        for control in (self.policy_filter, self.episode_filter):
            control.observe(lambda change: self._updates.request(change), names="value")

    # -- the config the controls describe ---------------------------------------------------
    @property
    def config(self) -> RewardConfig:
        """The config the controls describe (names the controls do not cover kept as given)."""
        weights = {
            name: round(s.value, 6)
            for name, s in self.weight_sliders.items()
            if s.value != DEFAULT_WEIGHT or name in self.initial.weights
        }
        limits = {
            name: box.value
            for name, box in self.limit_boxes.items()
            if box.value != DEFAULT_LIMIT or name in self.initial.k_limits
        }
        # The sliders own every item they show: an item slid back to the task app's weight
        # drops out of the overrides even if the starting config overrode it.
        initial = dict(self.initial.resource_overrides)
        inventory = {
            item: weight for item, weight in initial.pop("inventory", {}).items() if item not in self.resource_sliders
        }
        inventory.update(
            {
                item: round(s.value, 6)
                for item, s in self.resource_sliders.items()
                if s.value != TASK_APP_RESOURCE_WEIGHTS.inventory_weight(item)
            }
        )
        overrides = {**initial, **({"inventory": inventory} if inventory else {})}
        return self.initial.with_changes(
            strategy=self.strategy.value,
            indicator_lambda=round(float(self.lam.value), 6),
            weights={**weights, **self._extra_weights},
            k_limits={**limits, **self._extra_limits},
            resource_overrides=overrides,
        )

    # -- building ---------------------------------------------------------------------------
    def _build_controls(self) -> None:
        start = self.initial
        full = w.Layout(width="100%")
        inside = w.Layout(width="calc(100% - 4px)")  # a text box's 2 px margins stay inside the column
        self.strategy = w.Dropdown(
            options=list(STRATEGIES),
            value=start.effective_strategy,
            description="strategy",
            style=slider_style(),
            layout=full,
        )
        low, high, step = LAMBDA_RANGE
        self.lam = w.FloatSlider(
            value=start.indicator_lambda,
            min=low,
            max=high,
            step=step,
            description="lambda",
            readout_format=".2f",
            continuous_update=True,
            style=slider_style(),
            layout=full,
        )
        self.reset_button = w.Button(
            description="Reset", icon="refresh", tooltip="back to the starting config", layout=w.Layout(width="110px")
        )
        self.undo_button = w.Button(description="Undo", icon="undo", layout=w.Layout(width="110px"))
        self.reset_button.on_click(lambda _: self.reset())
        self.undo_button.on_click(lambda _: self.undo())
        self.policy_filter = w.Dropdown(
            options=[ALL, *self._policies],
            value=ALL,
            description="show",
            layout=w.Layout(width="220px"),
            style={"description_width": "40px"},
        )
        self.episode_filter = w.Text(
            placeholder="episode id contains", layout=w.Layout(width="190px"), continuous_update=True
        )
        low, high, step = WEIGHT_RANGE
        self.weight_sliders = {
            name: w.FloatSlider(
                value=float(start.weights.get(name, DEFAULT_WEIGHT)),
                min=low,
                max=high,
                step=step,
                description=name,
                readout_format=".2f",
                continuous_update=True,
                style=slider_style(),
                layout=full,
            )
            for name in ACHIEVEMENTS
        }
        self.strategy_note = w.HTML(layout=w.Layout(min_height="20px"))
        groups = w.Accordion(
            children=[w.VBox([self.weight_sliders[n] for n in names]) for names in ACHIEVEMENT_GROUPS.values()],
            titles=tuple(f"weights: {GROUP_TITLES.get(g, g)}" for g in ACHIEVEMENT_GROUPS),
        )
        self.limit_boxes = {
            name: w.IntText(
                value=int(start.k_limits.get(name, DEFAULT_LIMIT)),
                description=name,
                style={"description_width": "150px"},
                layout=w.Layout(width="215px"),
            )
            for name in ACHIEVEMENTS
        }
        repeats = int(self.prepared.unlock_ordinal.max(initial=0))
        self.limits_note = w.HTML(
            "<i>No achievement unlocks twice in one episode of this corpus (Crafter's status turns true once), "
            "so no k-limit changes a reward here (quirk 1); they only reach lint and export.</i>"
            if repeats == 0
            else "<i>k-limits cap how many unlocks of an achievement are credited per episode.</i>"
        )
        limits = w.Accordion(
            children=[
                w.VBox(
                    [
                        self.limits_note,
                        w.GridBox(
                            list(self.limit_boxes.values()), layout=w.Layout(grid_template_columns="repeat(2, 220px)")
                        ),
                    ]
                )
            ],
            titles=("k-limits" + (" (no effect: quirk 1)" if repeats == 0 else ""),),
        )
        resource = start.resource_weights
        low, high, step = RESOURCE_RANGE
        self.resource_sliders = {
            item: w.FloatSlider(
                value=resource.inventory_weight(item),
                min=low,
                max=high,
                step=step,
                description=item,
                readout_format=".2f",
                continuous_update=True,
                style=slider_style(),
                layout=full,
            )
            for item in TASK_APP_RESOURCE_WEIGHTS.inventory
        }
        advanced = w.Accordion(
            children=[
                w.VBox(
                    [
                        w.HTML(
                            "<i>Inventory shaping weights (per_achievement only). Overrides are a workbench "
                            "extension: the task app cannot read them and export drops them.</i>"
                        ),
                        *self.resource_sliders.values(),
                    ]
                )
            ],
            titles=("advanced: resource tables",),
        )
        self.path = w.Text(value="my_reward.yaml", description="save as", layout=inside)
        #: Checks (and may refuse) the file Save writes: the app points it at its workspace's check.
        self.path_check: Callable[[Path], Path] = lambda path: path
        self.overwrite = w.Checkbox(value=False, description="overwrite", indent=False, layout=w.Layout(width="100px"))
        self.toml_path = w.Text(value="", placeholder="training.toml", description="export to", layout=inside)
        self.save_button = w.Button(description="Save YAML", icon="save", layout=w.Layout(width="140px"))
        self.export_button = w.Button(description="Export into TOML", icon="upload", layout=w.Layout(width="160px"))
        self.compare_name = w.Text(value="tuned", description="name", layout=w.Layout(width="220px"))
        self.compare_button = w.Button(description="send to Compare", icon="share", layout=w.Layout(width="160px"))
        self.file_status = w.HTML(layout=w.Layout(min_height="40px", width="100%"))
        self.save_button.on_click(lambda _: self._file_action(lambda: self.save(overwrite=self.overwrite.value)))
        self.export_button.on_click(lambda _: self._file_action(self.export))
        self.compare_button.on_click(lambda _: self._file_action(self.send_to_compare))
        files = w.VBox(
            [
                self.path,
                w.HBox([self.save_button, self.overwrite]),
                self.toml_path,
                self.export_button,
                w.HBox([self.compare_name, self.compare_button]),
                self.file_status,
            ]
        )
        self._controls_box = w.VBox(
            [
                self.strategy,
                self.lam,
                w.HBox([self.reset_button, self.undo_button]),
                w.HBox([self.policy_filter, self.episode_filter]),
                self.strategy_note,
                groups,
                limits,
                advanced,
                files,
            ],
            layout=fixed(CONTROL_WIDTH, padding="0 8px 0 0"),
        )
        self._controls_box.add_class("workbench-controls")

    def _build_outputs(self) -> None:
        self.header = w.HTML(layout=w.Layout(min_height="40px"))
        self.progress_view = w.HTML(layout=lines_box(PROGRESS_LINES))
        colors = group_colors(groups_of(self.corpus, "policy"))
        self.figure = ReturnsFigure(self._policies, colors, self._on_pick)
        self.extremes_view = w.HTML(layout=lines_box(EXTREMES_LINES))
        self.lint_view = w.HTML(layout=lines_box(LINT_LINES, border=True))
        self.lint_view.add_class("workbench-lint")
        self.timing = w.HTML(layout=w.Layout(height="22px"))

    def _named_controls(self) -> dict[str, w.Widget]:
        return {
            "strategy": self.strategy,
            "lambda": self.lam,
            **{f"weight:{k}": s for k, s in self.weight_sliders.items()},
            **{f"limit:{k}": b for k, b in self.limit_boxes.items()},
            **{f"resource:{k}": s for k, s in self.resource_sliders.items()},
        }

    # -- reacting ---------------------------------------------------------------------------
    def _on_change(self, name: str, change: dict[str, Any]) -> None:
        if self._applying:
            return
        now = time.monotonic()
        merge = self._last_change[0] == name and now - self._last_change[1] < MERGE_SECONDS and len(self.history) > 1
        self._last_change = (name, now)
        snapshot = self._snapshot()
        if merge:
            self.history[-1] = snapshot
        elif snapshot != self.history[-1]:
            self.history.append(snapshot)
            del self.history[: -UNDO_STEPS - 1]
        self._updates.request(change)

    def _snapshot(self) -> tuple:
        return tuple(control.value for control in self._named_controls().values())

    def _apply(self, snapshot: tuple) -> None:
        self._applying = True
        try:
            with self.widget.hold_sync():
                for control, value in zip(self._named_controls().values(), snapshot):
                    control.value = value
        finally:
            self._applying = False
        self._updates.run()

    def reset(self) -> None:
        """Set every control back to the starting config (an undoable step)."""
        self.history.append(self.history[0])
        self._last_change = ("", 0.0)
        self._apply(self.history[0])

    def undo(self) -> None:
        """Go back one change (up to ``UNDO_STEPS``); nothing to undo does nothing."""
        if len(self.history) > 1:
            self.history.pop()
            self._last_change = ("", 0.0)
            self._apply(self.history[-1])

    def _filter_mask(self) -> np.ndarray:
        mask = np.ones(len(self._ids), dtype=bool)
        if self.policy_filter.value != ALL:
            mask &= self._policy_code == self._policies.index(self.policy_filter.value)
        text = self.episode_filter.value.strip()
        if text:
            mask &= np.fromiter((text in e for e in self._ids), dtype=bool, count=len(self._ids))
        return mask

    def update(self) -> None:
        """Re-score the corpus under the controls' config and redraw every view."""
        start = time.perf_counter()
        config = self.config
        self.scores = score(self.prepared, config)
        mask = self._filter_mask()
        live, base = self.scores.reward_sum, self.baseline_scores.reward_sum
        groups = range(len(self._policies))
        live_by = [live[mask & (self._policy_code == g)] for g in groups]
        key = mask.tobytes()
        if self._baseline_key != key:  # the baseline changes only with the filter
            self._baseline_key = key
            self._baseline_by = [base[mask & (self._policy_code == g)] for g in groups]
            self._baseline_progress = progress_summary(self.baseline_scores.episodes[mask]) if mask.any() else ""
        base_by = self._baseline_by
        rows = np.flatnonzero(mask)
        if len(rows) > ALL_POINTS_UP_TO:
            order = rows[np.argsort(live[rows], kind="stable")]
            rows = np.concatenate([order[:EXTREMES], order[-EXTREMES:]])
        self._shown = rows
        achievements = self.scores.episodes["unique_achievements_total"].to_numpy()
        names = [
            f"{self._ids[i]} · {self._policies[self._policy_code[i]]} · return {live[i]:.2f} "
            f"(baseline {base[i]:.2f}) · {achievements[i]} achievements"
            for i in rows
        ]
        title = f"{config.effective_strategy}, lambda x{config.effective_lambda:g} (dashed: baseline)"
        self.figure.update(live_by, base_by, self._policy_code[rows].astype(float), live[rows], names, title)
        self.progress_view.value = lined(self._progress_html(mask))
        self.extremes_view.value = lined(self._extremes_html(mask, achievements))
        self.lint_view.value = lined(self._lint_html(config))
        self.header.value = lined(self._header_html(config, mask))
        self._show_what_acts(config)
        self.last_update_ms = (time.perf_counter() - start) * 1000
        self.timing.value = (
            f"<small>re-scored {self.prepared.n_decisions:,} decisions and redrew in "
            f"{self.last_update_ms:.0f} ms (kernel)</small>"
        )

    def _show_what_acts(self, config: RewardConfig) -> None:
        """Disable, in place, the controls the chosen strategy ignores."""
        consistent = config.effective_strategy != "per_achievement"
        for slider in (*self.weight_sliders.values(), *self.resource_sliders.values()):
            if slider.disabled != consistent:
                slider.disabled = consistent
        self.strategy_note.value = (
            "<i>consistent pays 1.0 per decision that unlocks anything: weights and resource tables "
            "do not act (greyed).</i>"
            if consistent
            else ""
        )

    def _header_html(self, config: RewardConfig, mask: np.ndarray) -> str:
        shown = int(mask.sum())
        scope = f"{shown:,} of {len(mask):,} episodes" if shown != len(mask) else f"all {len(mask):,} episodes"
        return (
            f"<b>{scope}</b>, {self.prepared.n_decisions:,} decisions. Baseline (ghost): "
            f"{html.escape(self.baseline.effective_strategy)}, lambda x{self.baseline.effective_lambda:g}."
            f"{counts_note(self.corpus)}"
        )

    def _progress_html(self, mask: np.ndarray) -> str:
        if not mask.any():
            return "<i>no episode matches the filter</i>"
        live = progress_summary(self.scores.episodes[mask])
        base = self._baseline_progress
        return (
            f"<div style='font-size:12px'><b>progress</b>: {html.escape(live)}<br><span style='color:#777'>"
            f"<b>baseline</b>: {html.escape(base)}</span></div>"
        )

    def _extremes_html(self, mask: np.ndarray, achievements: np.ndarray) -> str:
        rows = np.flatnonzero(mask)
        if not len(rows):
            return ""
        live, base = self.scores.reward_sum, self.baseline_scores.reward_sum
        order = rows[np.argsort(-live[rows], kind="stable")]
        top = min(5, len(order))
        picked = [("top", order[:top])]
        if len(order) > top:
            picked.append(("bottom", order[-min(5, len(order) - top) :]))
        lines = []
        for label, indices in picked:
            lines.append(f"<tr><th colspan='4' style='text-align:left'>{label} {len(indices)}</th></tr>")
            for i in indices:
                lines.append(
                    f"<tr><td title='{html.escape(self._policies[self._policy_code[i]])}'>"
                    f"{html.escape(str(self._ids[i]))}</td>"
                    f"<td style='text-align:right'>{live[i]:.3f}</td>"
                    f"<td style='text-align:right;color:#777'>{base[i]:.3f}</td>"
                    f"<td style='text-align:right'>{achievements[i]}</td></tr>"
                )
        return (
            EXTREMES_STYLE + "<table class='workbench-extremes' "
            "style='font-size:12px;white-space:nowrap;border-spacing:0'><thead><tr>"
            "<th>episode</th><th>return</th><th>baseline</th><th>achievements</th></tr></thead><tbody>"
            + "".join(lines)
            + "</tbody></table>"
            "<div style='font-size:11px;height:18px'>click a point in the figure to replay that episode</div>"
        )

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
        return f"<b>lint:</b><ul style='margin:0;padding-left:18px'>{items}</ul>"

    # -- links ------------------------------------------------------------------------------
    def link(self, *, replayer: Any = None, compare: Any = None) -> Tuner:
        """Open clicked episodes in ``replayer``; offer configs to ``compare``. Returns self."""
        if replayer is not None:
            self.replayer = replayer
        if compare is not None:
            self.compare = compare
        return self

    def _on_pick(self, position: int) -> None:
        if 0 <= position < len(self._shown):
            self.open_episode(str(self._ids[self._shown[position]]))

    def open_episode(self, episode: str) -> None:
        """Open ``episode`` in the linked Replayer, under the current config, at its highest-paying
        decision. ``WorkbenchError`` when no Replayer is linked."""
        if self.replayer is None:
            raise WorkbenchError("no Replayer linked: tuner.link(replayer=Replayer(corpus, config))")
        self.replayer.set_config(self.config)
        self.replayer.open(episode, decision="best")

    def send_to_compare(self) -> str:
        """Offer the current config to the linked Compare under the name box's name, picked there;
        returns a line saying so. ``WorkbenchError`` when no Compare is linked."""
        if self.compare is None:
            raise WorkbenchError("no Compare linked: tuner.link(compare=Compare(corpus, configs))")
        name = self.compare_name.value.strip() or "tuned"
        self.compare.add(name, self.config, show=True)
        return f"sent to Compare as {name!r}"

    # -- files ------------------------------------------------------------------------------
    def save(self, path: str | Path | None = None, *, overwrite: bool = False) -> Path:
        """Write the current config as YAML (atomic; an existing file needs ``overwrite``);
        returns the absolute path written."""
        target = self.path_check(Path(path or self.path.value).expanduser())
        return Path(self.config.to_file(target, overwrite=overwrite)).resolve()

    def export(self, toml_path: str | Path | None = None) -> Path:
        """Write the current config's step_rewards into an existing training TOML; returns its
        absolute path."""
        return Path(self.config.export_into(toml_path or self.toml_path.value)).resolve()

    def _file_action(self, action: Callable[[], Any]) -> None:
        try:
            result = action()
        except (OSError, ValueError) as error:  # WorkbenchError is a ValueError
            message = str(error)
            if "overwrite" in message:
                message += " (tick 'overwrite' to replace it)"
            self.file_status.value = error_html(message)
        else:
            text = f"wrote {result}" if isinstance(result, Path) else str(result)
            self.file_status.value = f"<span style='word-break:break-all'>{html.escape(text)}</span>"

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)
