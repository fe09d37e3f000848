"""The Tuner: tune a RewardConfig on a corpus and see, live while dragging, what it pays for."""

from __future__ import annotations

import html
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ipywidgets as w
import numpy as np
import traitlets

from workbench.analysis.alignment import progress_summary
from workbench.core.config import RewardConfig
from workbench.core.crafter_facts import ACHIEVEMENTS
from workbench.core.named_configs import STARTING_CONFIG
from workbench.data.episodes import Corpus
from workbench.errors import CorpusError, WorkbenchError
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
from workbench.views.widgets.exploitability import exploitability_section
from workbench.views.widgets.pick import announce
from workbench.views.widgets.returns_figure import ALL_POINTS_UP_TO, EXTREMES, ReturnsFigure
from workbench.views.widgets.section import advantages_section, certificate_section
from workbench.views.widgets.traits import ViewTraits
from workbench.views.widgets.tuner_controls import ALL, TunerControls, edited
from workbench.views.widgets.tuner_text import extremes_html, header_html, lint_html, progress_html

#: Undo keeps at least this many steps; changes to one control within MERGE_SECONDS are one step.
UNDO_STEPS, MERGE_SECONDS = 50, 1.0
#: Fixed heights of the text boxes in lines: two progress sentences (each wrapping over up to
#: four lines of 12 px text in a narrow column), the returns table (header, top 5, bottom 5, the hint) and lint.
PROGRESS_LINES, EXTREMES_LINES, LINT_LINES = 8, 14, 6


class Tuner(w.HBox, ViewTraits):
    """Tune a RewardConfig on a corpus: every control change re-scores and redraws.

    A widget (display it, or put it in a box): its children are its control column
    (``controls``, a ``TunerControls``) and its outputs. Its state is traits, to link with
    ``traitlets.link``/``dlink``/``observe`` (``workbench.views.widgets.link`` wires the views):

    - ``config``: the config the controls describe, set after every re-score (names the controls
      do not cover kept as given); setting it moves the controls there (an undoable step).
    - ``episode``: the episode picked (a click on its point, or ``open_episode``), else None.
    - ``picked``: each pick as an event (``pick.Pick``; the same episode picked twice is heard twice).
    - ``selection``: the ids of the episodes the filters keep, in corpus order.
    - ``sent``: ``(name, config)`` the last "send to Compare" offered.

    ``baseline`` (default: the starting config; ``baseline_name`` names it in the header) is
    drawn as a grey ghost and is where Reset goes. ``scores`` are the latest scores;
    ``last_update_ms`` how long the last re-score and redraw took in the kernel.

    Args:
        corpus: The episodes to score.
        config: Where the controls start (default: the named config ``per_achievement``).
        baseline: The ghost and Reset's config (default: ``config``).
        baseline_name: The baseline's name in the header.
        writer: Writes the config to a path, ``(path, config, overwrite) -> path`` (default:
            ``RewardConfig.to_file``; the app gives its workspace's, never through a swapped symlink).
        path_check: Checks (and may refuse) the file Save writes before it is written (default:
            none; the app gives its workspace's check).
        save_path: The "save as" box's first value (default: ``my_reward.yaml``).
    """

    sent = traitlets.Tuple()

    def __init__(
        self,
        corpus: Corpus,
        config: RewardConfig | None = None,
        *,
        baseline: RewardConfig | None = None,
        baseline_name: str = "",
        writer: Callable[[Path, RewardConfig, bool], Path] | None = None,
        path_check: Callable[[Path], Path] | None = None,
        save_path: str | Path | None = None,
    ) -> None:
        retain_freed_memory()  # each drag re-scores into same-sized arrays: keep the freed heap for them
        self.path_check: Callable[[Path], Path] = path_check or (lambda path: path)
        self.writer: Callable[[Path, RewardConfig, bool], Path] = writer or (
            lambda path, config, overwrite: Path(config.to_file(path, overwrite=overwrite))
        )
        self.corpus = corpus
        self.prepared = prepare(corpus)
        self.initial = config or STARTING_CONFIG.config
        self.baseline, self.baseline_name = baseline or self.initial, baseline_name
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
        self._applying = False  # True while the controls are moved to a config (not a user's change)
        self._scoring = False  # True while ``update`` sets ``config`` (not a change to apply to the controls)
        self.controls = TunerControls(self.initial, self._policies, int(self.prepared.unlock_ordinal.max(initial=0)))
        if save_path is not None:
            self.controls.path.value = str(save_path)
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
                advantages_section(self, corpus),
                certificate_section(self, corpus),
                exploitability_section(self, corpus),
            ],
            layout=w.Layout(flex="1 1 360px", min_width="360px", overflow="hidden"),
        )
        super().__init__([self.controls.box, outputs], layout=w.Layout(flex_flow="row wrap", width="100%"))
        self.add_class("workbench-tuner")
        #: The config the controls describe: built from them once here, then each control's move
        #: edits it (``tuner_controls.edited``); ``update`` scores it and sets ``config``.
        self.wanted = self.controls.config(self.initial, self._extra_weights, self._extra_limits)
        #: Undo's steps: configs (the last is ``wanted``).
        self.history: list[RewardConfig] = [self.wanted]
        self._last_change: tuple[str, float] = ("", 0.0)
        self.update()
        self._connect()

    def _connect(self) -> None:
        controls = self.controls
        controls.reset_button.on_click(lambda _: self.reset())
        controls.undo_button.on_click(lambda _: self.undo())
        controls.save_button.on_click(
            lambda _: self._file_action(lambda: self.save(overwrite=controls.overwrite.value))
        )
        controls.export_button.on_click(lambda _: self._file_action(self.export))
        controls.compare_button.on_click(lambda _: self._file_action(self.send_to_compare))
        for name, control in controls.named().items():
            control.observe(lambda change, name=name: self._on_change(name, change), names="value")
        for control in (controls.policy_filter, controls.episode_filter):
            control.observe(lambda change: self._updates.request(change), names="value")
        self.observe(self._config_set, names="config")

    def _config_set(self, change: dict[str, Any]) -> None:
        """``config`` set from outside (a link, code): the controls go there, names they do not
        cover kept from it, as one undoable step."""
        if self._scoring:
            return
        config: RewardConfig = change["new"]
        self.initial = config
        self._extra_weights = {k: v for k, v in config.weights.items() if k not in ACHIEVEMENTS}
        self._extra_limits = {k: v for k, v in config.k_limits.items() if k not in ACHIEVEMENTS}
        self._move_controls(config)
        # as the controls hold it (clamped to their ranges): a config from outside is read once
        wanted = self.controls.config(config, self._extra_weights, self._extra_limits)
        self._last_change = ("", 0.0)
        self._step(wanted, merge=False)
        self._updates.run()

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
        """A control moved: edit the wanted config (that entry only), one undo step (moves of
        one control within ``MERGE_SECONDS`` are one), and ask for a re-score."""
        if self._applying:
            return
        now = time.monotonic()
        merge = self._last_change[0] == name and now - self._last_change[1] < MERGE_SECONDS and len(self.history) > 1
        self._last_change = (name, now)
        self._step(edited(self.wanted, name, change["new"], self.initial), merge=merge)
        self._updates.request(change)

    def _step(self, wanted: RewardConfig, *, merge: bool) -> None:
        """Make ``wanted`` the config the controls describe, as an undo step (or folded into the last)."""
        self.wanted = wanted
        if merge:
            self.history[-1] = wanted
        elif wanted != self.history[-1]:
            self.history.append(wanted)
            del self.history[: -UNDO_STEPS - 1]

    def _move_controls(self, config: RewardConfig) -> None:
        """The controls follow ``config`` (only those that differ are set; none reports a change)."""
        self._applying = True
        try:
            with self.hold_sync():
                for control, value in zip(self.controls.named().values(), self.controls.values_of(config)):
                    if control.value != value:
                        control.value = value
        finally:
            self._applying = False

    def reset(self) -> None:
        """Make the config the baseline again: every control, and the entries the controls do
        not cover, as the baseline has them (the controls' change is an undoable step)."""
        self._config_set({"new": self.baseline})  # not ``config = baseline``: an equal config notifies nothing

    def undo(self) -> None:
        """Go back one change (up to ``UNDO_STEPS``); nothing to undo does nothing."""
        if len(self.history) > 1:
            self.history.pop()
            self._last_change = ("", 0.0)
            self.wanted = self.history[-1]
            self._move_controls(self.wanted)
            self._updates.run()

    def _filter_mask(self) -> np.ndarray:
        mask = np.ones(len(self._ids), dtype=bool)
        policy = self.controls.policy_filter.value
        if policy != ALL:
            mask &= self._policy_code == self._policies.index(policy)
        text = self.controls.episode_filter.value.strip()
        if text:
            mask &= np.fromiter((text in e for e in self._ids), dtype=bool, count=len(self._ids))
        return mask

    def update(self) -> None:
        """Re-score the corpus under the controls' config and redraw every view."""
        start = time.perf_counter()
        config = self.wanted
        self.scores = score(self.prepared, config)
        mask = self._filter_mask()
        live, base = self.scores.reward_sum, self.baseline_scores.reward_sum
        groups = range(len(self._policies))
        live_by = [live[mask & (self._policy_code == g)] for g in groups]
        key = mask.tobytes()
        if self._baseline_key != key:  # the baseline (and the selection) change only with the filter
            self._baseline_key = key
            self.selection = tuple(self._ids[mask])
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
        title = f"{config.rule.name}, lambda x{config.effective_lambda:g} (dashed: baseline)"
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
        self._scoring = True
        try:
            self.config = config  # last: an observer of ``config`` sees ``scores`` already under it
        finally:
            self._scoring = False

    def _show_what_acts(self, config: RewardConfig) -> None:
        """Disable, in place, the controls the chosen strategy ignores."""
        rule = config.rule  # what it pays decides which controls act
        for sliders, acts in (
            (self.controls.weight_sliders, rule.pays_credits),
            (self.controls.resource_sliders, rule.pays_resources),
        ):
            for slider in sliders.values():
                if slider.disabled == acts:
                    slider.disabled = not acts
        self.controls.strategy_note.value = (
            f"<i>{rule.name} pays {rule.summary}: weights and resource tables do not act (greyed).</i>"
            if not rule.pays_credits and not rule.pays_resources
            else ""
        )

    # -- picking ----------------------------------------------------------------------------
    def _on_pick(self, position: int) -> None:
        if 0 <= position < len(self._shown):
            self.open_episode(str(self._ids[self._shown[position]]))

    def open_episode(self, episode: str) -> None:
        """Pick ``episode`` (what a click on its point does): ``episode`` becomes its id and
        ``picked`` a new ``Pick`` naming no decision, which a linked Replayer opens at the
        episode's highest-paying decision.

        Args:
            episode: An episode id of the corpus.

        Raises:
            CorpusError: No episode of that id in the corpus.
        """
        if episode not in self.corpus.ids:
            raise CorpusError(f"no episode {episode!r} in this corpus")
        announce(self, episode, source="tuner")

    def send_to_compare(self) -> str:
        """Offer the current config under the name box's name: ``sent`` becomes ``(name, config)``
        (a linked Compare adds it, picked first).

        Returns:
            A line saying what was sent.
        """
        name = self.controls.compare_name.value.strip() or "tuned"
        self.sent = (name, self.config)
        return f"sent to Compare as {name!r}"

    # -- files ------------------------------------------------------------------------------
    def save(self, path: str | Path | None = None, *, overwrite: bool = False) -> Path:
        """Write the current config as YAML (atomic; an existing file needs ``overwrite``);
        returns the absolute path written.

        Args:
            path: Where to write (default: the "save as" box), checked by ``path_check``.
            overwrite: Replace an existing file.

        Returns:
            The absolute path written.

        Raises:
            TargetExistsError: The file exists and ``overwrite`` is False.
            OutputError: The file cannot be written.
        """
        target = self.path_check(Path(path or self.controls.path.value).expanduser())
        return self.writer(target, self.config, overwrite).resolve()

    def export(self, toml_path: str | Path | None = None) -> Path:
        """Write the current config's step_rewards into an existing training TOML; returns its
        absolute path.

        Args:
            toml_path: The training TOML (default: the "export to" box).

        Returns:
            The absolute path written.

        Raises:
            WorkbenchError: The TOML is missing or cannot be read or written.
        """
        return Path(self.config.export_into(toml_path or self.controls.toml_path.value)).resolve()

    def _file_action(self, action: Callable[[], Any]) -> None:
        try:
            result = action()
        except (OSError, WorkbenchError, ValueError) as error:  # ValueError: a path with a NUL byte
            hint = " (tick 'overwrite' to replace it)" if isinstance(error, FileExistsError) else ""
            self.controls.file_status.value = error_html(f"{error}{hint}")
        else:
            text = f"wrote {result}" if isinstance(result, Path) else str(result)
            self.controls.file_status.value = f"<span style='word-break:break-all'>{html.escape(text)}</span>"
