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
from workbench.core.crafter_facts import ACHIEVEMENTS
from workbench.core.named_configs import PER_ACHIEVEMENT_CONFIG
from workbench.data.episodes import Corpus
from workbench.errors import WorkbenchError
from workbench.scoring import prepare, score
from workbench.scoring.intervals import UpperReturns, interval_text
from workbench.util.memory import retain_freed_memory
from workbench.views.widgets.common import (
    LatestWins,
    counts_note,
    error_html,
    group_colors,
    groups_of,
    legend_html,
    lined,
    lines_box,
)
from workbench.views.widgets.returns_figure import ALL_POINTS_UP_TO, EXTREMES, ReturnsFigure
from workbench.views.widgets.tuner_controls import ALL, TunerControls
from workbench.views.widgets.tuner_text import extremes_html, header_html, lint_html, progress_html

#: Undo keeps at least this many steps; changes to one control within MERGE_SECONDS are one step.
UNDO_STEPS, MERGE_SECONDS = 50, 1.0
#: Fixed heights of the text boxes in lines: two progress sentences (each wrapping over up to
#: four lines of 12 px text in a narrow column), the returns table (header, top 5, bottom 5, the hint) and lint.
PROGRESS_LINES, EXTREMES_LINES, LINT_LINES = 8, 14, 6


class Tuner:
    """Tune a RewardConfig on a corpus: every control change re-scores and redraws.

    ``tuner.config`` is the config the controls describe; they start at ``config`` (default: the
    named config ``per_achievement``).
    ``tuner.baseline`` (default: ``config``; ``baseline_name`` names it in the header) is drawn
    as a grey ghost and is where Reset goes. ``tuner.scores`` are the latest scores;
    ``tuner.last_update_ms`` how long the last re-score and redraw took in the kernel.
    ``link(replayer=..., compare=...)`` makes a click on an episode open it in a ``Replayer`` and
    the "send to Compare" button offer the config to a ``Compare``. Display it in a notebook
    (``tuner`` as a cell's last line).
    """

    def __init__(
        self,
        corpus: Corpus,
        config: RewardConfig | None = None,
        *,
        baseline: RewardConfig | None = None,
        baseline_name: str = "",
        replayer: Any = None,
        compare: Any = None,
    ) -> None:
        retain_freed_memory()  # each drag re-scores into same-sized arrays: keep the freed heap for them
        #: Checks (and may refuse) the file Save writes: the app points it at its workspace's check.
        self.path_check: Callable[[Path], Path] = lambda path: path
        #: Writes the config to a path (the app sets its workspace's: never through a swapped symlink).
        self.writer: Callable[[Path, RewardConfig, bool], Path] = lambda path, config, overwrite: Path(
            config.to_file(path, overwrite=overwrite)
        )
        self.corpus = corpus
        self.prepared = prepare(corpus)
        self.initial = config or PER_ACHIEVEMENT_CONFIG.config
        self.baseline, self.baseline_name = baseline or self.initial, baseline_name
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
        #: Episodes with estimated counts show their per_achievement return as an interval.
        self._upper = UpperReturns(corpus)
        self._shown: np.ndarray = np.zeros(0, dtype=np.int64)
        self._baseline_key: bytes | None = None
        self._updates = LatestWins(self.update)
        self._on_update: list[Callable[[], None]] = []
        self._applying = False
        self.controls = TunerControls(self.initial, self._policies, int(self.prepared.unlock_ordinal.max(initial=0)))
        self._take_controls()
        self._build_outputs()
        outputs = w.VBox(
            [
                self.header,
                self.progress_view,
                self.figure.widget,
                self.legend,
                self.extremes_view,
                self.lint_view,
                self.timing,
            ],
            layout=w.Layout(flex="1 1 360px", min_width="360px", overflow="hidden"),
        )
        self.widget = w.HBox([self.controls.box, outputs], layout=w.Layout(flex_flow="row wrap", width="100%"))
        self.widget.add_class("workbench-tuner")
        self.history: list[tuple] = [self.controls.values()]
        self._last_change: tuple[str, float] = ("", 0.0)
        self.update()
        self._connect()

    def _take_controls(self) -> None:
        """Make the controls the Tuner's own attributes (``tuner.weight_sliders`` ...)."""
        controls = self.controls
        self.strategy, self.lam, self.reset_button = controls.strategy, controls.lam, controls.reset_button
        self.undo_button, self.policy_filter, self.episode_filter = (
            controls.undo_button,
            controls.policy_filter,
            controls.episode_filter,
        )
        self.weight_sliders, self.strategy_note, self.limit_boxes = (
            controls.weight_sliders,
            controls.strategy_note,
            controls.limit_boxes,
        )
        self.limits_note, self.resource_sliders, self.path = (
            controls.limits_note,
            controls.resource_sliders,
            controls.path,
        )
        self.overwrite, self.toml_path, self.save_button = controls.overwrite, controls.toml_path, controls.save_button
        self.export_button, self.compare_name, self.compare_button = (
            controls.export_button,
            controls.compare_name,
            controls.compare_button,
        )
        self.file_status = controls.file_status

    def _connect(self) -> None:
        self.reset_button.on_click(lambda _: self.reset())
        self.undo_button.on_click(lambda _: self.undo())
        self.save_button.on_click(lambda _: self._file_action(lambda: self.save(overwrite=self.overwrite.value)))
        self.export_button.on_click(lambda _: self._file_action(self.export))
        self.compare_button.on_click(lambda _: self._file_action(self.send_to_compare))
        for name, control in self.controls.named().items():
            control.observe(lambda change, name=name: self._on_change(name, change), names="value")
        for control in (self.policy_filter, self.episode_filter):
            control.observe(lambda change: self._updates.request(change), names="value")

    @property
    def config(self) -> RewardConfig:
        """The config the controls describe (names the controls do not cover kept as given)."""
        return self.controls.config(self.initial, self._extra_weights, self._extra_limits)

    def _build_outputs(self) -> None:
        self.header = w.HTML(layout=w.Layout(min_height="40px"))
        self.progress_view = w.HTML(layout=lines_box(PROGRESS_LINES))
        colors = group_colors(groups_of(self.corpus, "policy"))
        self.figure = ReturnsFigure(self._policies, colors, self._on_pick)
        self.legend = w.HTML(legend_html(self._policies, colors, self.figure.short))
        self.legend.add_class("workbench-legend")
        self.extremes_view = w.HTML(layout=lines_box(EXTREMES_LINES))
        self.lint_view = w.HTML(layout=lines_box(LINT_LINES, border=True))
        self.lint_view.add_class("workbench-lint")
        self.timing = w.HTML(layout=w.Layout(height="22px"))

    # -- reacting ---------------------------------------------------------------------------
    def _on_change(self, name: str, change: dict[str, Any]) -> None:
        if self._applying:
            return
        now = time.monotonic()
        merge = self._last_change[0] == name and now - self._last_change[1] < MERGE_SECONDS and len(self.history) > 1
        self._last_change = (name, now)
        snapshot = self.controls.values()
        if merge:
            self.history[-1] = snapshot
        elif snapshot != self.history[-1]:
            self.history.append(snapshot)
            del self.history[: -UNDO_STEPS - 1]
        self._updates.request(change)

    def _apply(self, snapshot: tuple) -> None:
        self._applying = True
        try:
            with self.widget.hold_sync():
                for control, value in zip(self.controls.named().values(), snapshot):
                    control.value = value
        finally:
            self._applying = False
        self._updates.run()

    def reset(self) -> None:
        """Make the config the baseline again: every control, and the entries the controls do
        not cover, as the baseline has them (the controls' change is an undoable step)."""
        self.initial = self.baseline
        self._extra_weights = {k: v for k, v in self.initial.weights.items() if k not in ACHIEVEMENTS}
        self._extra_limits = {k: v for k, v in self.initial.k_limits.items() if k not in ACHIEVEMENTS}
        self._apply(self.controls.values_of(self.baseline))
        snapshot = self.controls.values()  # as the controls hold it (clamped to their ranges)
        if snapshot != self.history[-1]:
            self.history.append(snapshot)
            del self.history[: -UNDO_STEPS - 1]
        self._last_change = ("", 0.0)

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
        rows = np.flatnonzero(mask)
        achievements = self.scores.episodes["unique_achievements_total"].to_numpy()
        shown = rows
        if len(rows) > ALL_POINTS_UP_TO:
            order = rows[np.argsort(live[rows], kind="stable")]
            shown = np.concatenate([order[:EXTREMES], order[-EXTREMES:]])
        self._shown = shown
        bounds = self._upper.intervals(config, live)
        names = [
            f"{self._ids[i]} · {self._policies[self._policy_code[i]]} · return "
            f"{interval_text(*bounds.get(int(i), (live[i], live[i])))}"
            f"{' (estimated counts)' if int(i) in bounds else ''} "
            f"(baseline {base[i]:.2f}) · {achievements[i]} achievements"
            for i in shown
        ]
        title = f"{config.effective_strategy}, lambda x{config.effective_lambda:g} (dashed: baseline)"
        intervals = np.array([bounds.get(int(i), (np.nan, np.nan)) for i in shown], dtype=float).reshape(-1, 2)
        self.figure.update(
            live_by, self._baseline_by, self._policy_code[shown].astype(float), live[shown], names, title, intervals
        )
        live_progress = progress_summary(self.scores.episodes[mask]) if mask.any() else None
        self.progress_view.value = lined(progress_html(live_progress, self._baseline_progress))
        self.extremes_view.value = lined(
            extremes_html(rows, self._ids, self._policies, self._policy_code, live, base, achievements, bounds)
        )
        self.lint_view.value = lined(lint_html(config))
        self.header.value = lined(
            header_html(
                self.baseline,
                self.baseline_name,
                int(mask.sum()),
                len(mask),
                self.prepared.n_decisions,
                counts_note(self.corpus),
            )
        )
        self._show_what_acts(config)
        self.last_update_ms = (time.perf_counter() - start) * 1000
        self.timing.value = (
            f"<small>re-scored {self.prepared.n_decisions:,} decisions and redrew in "
            f"{self.last_update_ms:.0f} ms (kernel)</small>"
        )
        for callback in self._on_update:
            callback()

    def on_update(self, callback: Callable[[], None]) -> None:
        """Call ``callback()`` after every re-score (``config`` is then what was scored)."""
        self._on_update.append(callback)

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
        return self.writer(target, self.config, overwrite).resolve()

    def export(self, toml_path: str | Path | None = None) -> Path:
        """Write the current config's step_rewards into an existing training TOML; returns its
        absolute path."""
        return Path(self.config.export_into(toml_path or self.toml_path.value)).resolve()

    def _file_action(self, action: Callable[[], Any]) -> None:
        try:
            result = action()
        except (OSError, WorkbenchError, ValueError) as error:  # ValueError: a path with a NUL byte
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
