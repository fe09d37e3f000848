"""The Tuner's control column and the config its controls describe (and back).

Strategy, lambda, a slider per weight, k-limits, resource tables, filters and the file buttons."""

from __future__ import annotations

from typing import Any

import ipywidgets as w

from workbench.core.config import RewardConfig
from workbench.core.crafter_facts import ACHIEVEMENT_GROUPS, ACHIEVEMENTS
from workbench.core.resource_weights import TASK_APP_RESOURCE_WEIGHTS
from workbench.core.reward import STRATEGIES
from workbench.views.widgets.common import CONTROL_WIDTH, fixed, slider_style

#: Slider ranges: wide enough for the shipped configs; step 0.01 (drag, arrow keys or typing).
WEIGHT_RANGE = (-2.0, 10.0, 0.01)
LAMBDA_RANGE = (-1.0, 2.0, 0.01)
RESOURCE_RANGE = (0.0, 1.0, 0.01)
#: What the task app pays an achievement with no weight / limit entry.
DEFAULT_WEIGHT, DEFAULT_LIMIT = 1.0, 1
GROUP_TITLES = {"collect": "collect", "make": "make", "place": "place", "combat_and_survival": "combat and survival"}
ALL = "all policies"


def _slider(value: float, bounds: tuple[float, float, float], description: str) -> w.FloatSlider:
    low, high, step = bounds
    return w.FloatSlider(
        value=value,
        min=low,
        max=high,
        step=step,
        description=description,
        readout_format=".2f",
        continuous_update=True,
        style=slider_style(),
        layout=w.Layout(width="100%"),
    )


def _limits_section(boxes: dict[str, w.IntText], repeats: int) -> tuple[w.Accordion, w.HTML]:
    note = w.HTML(
        "<i>No achievement unlocks twice in one episode of this corpus (Crafter's status turns true once), "
        "so no k-limit changes a reward here (quirk 1); they only reach lint and export.</i>"
        if repeats == 0
        else "<i>k-limits cap how many unlocks of an achievement are credited per episode.</i>"
    )
    # Two columns that share what the accordion leaves (never a fixed sum wider than the column).
    grid = w.GridBox(
        list(boxes.values()),
        layout=w.Layout(grid_template_columns="repeat(2, minmax(0, 1fr))", grid_gap="0 4px", width="100%"),
    )
    section = w.Accordion(
        children=[w.VBox([note, grid])],
        titles=("k-limits" + (" (no effect: quirk 1)" if repeats == 0 else ""),),
    )
    return section, note


class TunerControls:
    """Every control of the Tuner (attributes named as the Tuner exposes them) and ``box``, the
    column holding them. ``start`` sets their first values; ``repeats`` (the most unlocks of one
    achievement in an episode of the corpus) says whether k-limits can act."""

    def __init__(self, start: RewardConfig, policies: list[str], repeats: int) -> None:
        self.strategy = w.Dropdown(
            options=list(STRATEGIES),
            value=start.rule.name,
            description="strategy",
            style=slider_style(),
            layout=w.Layout(width="100%"),
        )
        self.lam = _slider(start.indicator_lambda, LAMBDA_RANGE, "lambda")
        self.reset_button = w.Button(
            description="Reset", icon="refresh", tooltip="back to the baseline config", layout=w.Layout(width="110px")
        )
        self.undo_button = w.Button(description="Undo", icon="undo", layout=w.Layout(width="110px"))
        self.policy_filter = w.Dropdown(
            options=[ALL, *policies],
            value=ALL,
            description="show",
            layout=w.Layout(width="220px"),
            style={"description_width": "40px"},
        )
        self.episode_filter = w.Text(
            placeholder="episode id contains", layout=w.Layout(width="190px"), continuous_update=True
        )
        self.weight_sliders = {
            name: _slider(float(start.weights.get(name, DEFAULT_WEIGHT)), WEIGHT_RANGE, name) for name in ACHIEVEMENTS
        }
        self.strategy_note = w.HTML(layout=w.Layout(min_height="20px"))
        weights = w.Accordion(
            children=[w.VBox([self.weight_sliders[n] for n in names]) for names in ACHIEVEMENT_GROUPS.values()],
            titles=tuple(f"weights: {GROUP_TITLES.get(g, g)}" for g in ACHIEVEMENT_GROUPS),
        )
        self.limit_boxes = {
            name: w.IntText(
                value=int(start.k_limits.get(name, DEFAULT_LIMIT)),
                description=name,
                style={"description_width": "150px"},
                layout=w.Layout(width="auto", min_width="0"),
            )
            for name in ACHIEVEMENTS
        }
        limits, self.limits_note = _limits_section(self.limit_boxes, repeats)
        self.resource_sliders = {
            item: _slider(start.resource_weights.inventory_weight(item), RESOURCE_RANGE, item)
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
        files = self._build_files()
        self.box = w.VBox(
            [
                self.strategy,
                self.lam,
                w.HBox([self.reset_button, self.undo_button]),
                w.HBox([self.policy_filter, self.episode_filter]),
                self.strategy_note,
                weights,
                limits,
                advanced,
                files,
            ],
            layout=fixed(CONTROL_WIDTH, padding="0 8px 0 0"),
        )
        self.box.add_class("workbench-controls")

    def _build_files(self) -> w.VBox:
        inside = w.Layout(width="calc(100% - 4px)")  # a text box's 2 px margins stay inside the column
        self.path = w.Text(value="my_reward.yaml", description="save as", layout=inside)
        self.overwrite = w.Checkbox(value=False, description="overwrite", indent=False, layout=w.Layout(width="100px"))
        self.toml_path = w.Text(
            value="", placeholder="training.toml", description="export to", layout=w.Layout(width="calc(100% - 4px)")
        )
        self.save_button = w.Button(description="Save YAML", icon="save", layout=w.Layout(width="140px"))
        self.export_button = w.Button(description="Export into TOML", icon="upload", layout=w.Layout(width="160px"))
        self.compare_name = w.Text(value="tuned", description="name", layout=w.Layout(width="220px"))
        self.compare_button = w.Button(description="send to Compare", icon="share", layout=w.Layout(width="160px"))
        self.file_status = w.HTML(layout=w.Layout(min_height="40px", width="100%"))
        return w.VBox(
            [
                self.path,
                w.HBox([self.save_button, self.overwrite]),
                self.toml_path,
                self.export_button,
                w.HBox([self.compare_name, self.compare_button]),
                self.file_status,
            ]
        )

    def named(self) -> dict[str, w.Widget]:
        """The controls that make the config, by a stable name (the order of ``values_of``).

        Returns:
            Name -> control.
        """
        return {
            "strategy": self.strategy,
            "lambda": self.lam,
            **{f"weight:{k}": s for k, s in self.weight_sliders.items()},
            **{f"limit:{k}": b for k, b in self.limit_boxes.items()},
            **{f"resource:{k}": s for k, s in self.resource_sliders.items()},
        }

    def values(self) -> tuple:
        """What the controls show now, in the order of ``named``.

        Returns:
            The values, one per control.
        """
        return tuple(control.value for control in self.named().values())

    @staticmethod
    def values_of(config: RewardConfig) -> tuple:
        """What the controls show for ``config``, in the order of ``named`` (as a new Tuner on it would).

        Args:
            config: A config.

        Returns:
            The values, one per control.
        """
        resource = config.resource_weights
        return (
            config.rule.name,
            config.indicator_lambda,
            *(float(config.weights.get(name, DEFAULT_WEIGHT)) for name in ACHIEVEMENTS),
            *(int(config.k_limits.get(name, DEFAULT_LIMIT)) for name in ACHIEVEMENTS),
            *(resource.inventory_weight(item) for item in TASK_APP_RESOURCE_WEIGHTS.inventory),
        )

    def config(
        self, initial: RewardConfig, extra_weights: dict[str, Any], extra_limits: dict[str, Any]
    ) -> RewardConfig:
        """The config the controls describe, built on ``initial`` (the config the controls
        started from), with the names the controls do not cover (``extra_*``) kept as given.

        Args:
            initial: The config the controls started from.
            extra_weights: Weights the controls do not cover.
            extra_limits: k-limits the controls do not cover.

        Returns:
            The config.
        """
        weights = {
            name: round(s.value, 6)
            for name, s in self.weight_sliders.items()
            if s.value != DEFAULT_WEIGHT or name in initial.weights
        }
        limits = {
            name: box.value
            for name, box in self.limit_boxes.items()
            if box.value != DEFAULT_LIMIT or name in initial.k_limits
        }
        # The sliders own every item they show: an item slid back to the task app's weight
        # drops out of the overrides even if the starting config overrode it.
        overrides = dict(initial.resource_overrides)
        inventory = {
            item: weight for item, weight in overrides.pop("inventory", {}).items() if item not in self.resource_sliders
        }
        inventory.update(
            {
                item: round(s.value, 6)
                for item, s in self.resource_sliders.items()
                if s.value != TASK_APP_RESOURCE_WEIGHTS.inventory_weight(item)
            }
        )
        overrides = {**overrides, **({"inventory": inventory} if inventory else {})}
        return initial.with_changes(
            strategy=self.strategy.value,
            indicator_lambda=round(float(self.lam.value), 6),
            weights={**weights, **extra_weights},
            k_limits={**limits, **extra_limits},
            resource_overrides=overrides,
        )


def edited(config: RewardConfig, name: str, value: Any, initial: RewardConfig) -> RewardConfig:
    """``config`` with the one entry control ``name`` (a key of ``TunerControls.named``) sets
    changed to ``value``, by the rules ``TunerControls.config`` builds a whole config with (a
    weight or k-limit back at the task app's default drops out unless ``initial`` had it; a
    resource slider back at the task app's weight drops out; keys in the controls' order, the
    names the controls do not cover after, kept): a control move edits the config, it is not
    rebuilt from every control.

    Args:
        config: The config the controls describe now (made by ``TunerControls.config`` or this).
        name: The control, e.g. ``"weight:collect_wood"``, ``"lambda"``, ``"resource:wood"``.
        value: The control's new value.
        initial: The config the controls started from.

    Returns:
        The edited config; ``config`` itself is unchanged.

    Raises:
        KeyError: No control of that name.
    """
    kind, _, key = name.partition(":")
    if kind == "strategy":
        return config.with_changes(strategy=value)
    if kind == "lambda":
        return config.with_changes(indicator_lambda=round(float(value), 6))
    if kind in ("weight", "limit") and key in ACHIEVEMENTS:
        weight = kind == "weight"
        table = dict(config.weights if weight else config.k_limits)
        default, started = (DEFAULT_WEIGHT, initial.weights) if weight else (DEFAULT_LIMIT, initial.k_limits)
        if value != default or key in started:
            table[key] = round(value, 6) if weight else value
        else:
            table.pop(key, None)
        ordered = {k: table[k] for k in ACHIEVEMENTS if k in table} | {
            k: v for k, v in table.items() if k not in ACHIEVEMENTS
        }
        return config.with_changes(**{"weights" if weight else "k_limits": ordered})
    if kind == "resource" and key in TASK_APP_RESOURCE_WEIGHTS.inventory:
        overrides = dict(config.resource_overrides)
        inventory = dict(overrides.pop("inventory", {}))
        if value != TASK_APP_RESOURCE_WEIGHTS.inventory_weight(key):
            inventory[key] = round(value, 6)
        else:
            inventory.pop(key, None)
        slid = TASK_APP_RESOURCE_WEIGHTS.inventory
        inventory = {k: v for k, v in inventory.items() if k not in slid} | {
            k: inventory[k] for k in slid if k in inventory
        }
        return config.with_changes(resource_overrides={**overrides, **({"inventory": inventory} if inventory else {})})
    raise KeyError(f"no Tuner control {name!r}")
