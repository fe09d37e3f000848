"""The Configs page: the session's configs.

Open one from a file, keep it in the workspace, save it as a file, export it into a training
TOML, lint it, tune it or send it to Compare."""

from __future__ import annotations

import html
from pathlib import Path
from typing import TYPE_CHECKING

import ipywidgets as w

from workbench.core.config import RewardConfig
from workbench.errors import ConfigError, CorpusError, TargetExistsError
from workbench.views.app.common import COMPARE, Status, guarded, heading
from workbench.views.app.session import AppSession
from workbench.views.app.state import AppState

if TYPE_CHECKING:
    from workbench.views.widgets import Tuner

#: Width of the path boxes. A Layout is a widget of its own, so each box gets a new one: a module-level
#: Layout would belong to no page session (or to the first), and the boxes of every other session
#: would fail to render ("widget model not found").
WIDE = "520px"
LEVEL_COLORS = {"error": "#B3261E", "warning": "#8A5A00", "info": "#0B4F8A"}


def describe(config: RewardConfig, source: str) -> str:
    """HTML: where a config came from, its strategy, weights and lint findings.

    Args:
        config: The config.
        source: Where it came from.

    Returns:
        The HTML.
    """
    weights = ", ".join(f"{html.escape(k)} {v:g}" for k, v in sorted(config.weights.items())) or "none (every weight 1)"
    findings = config.lint()
    if findings:
        items = "".join(
            f"<li><span style='color:{LEVEL_COLORS.get(f.level, 'black')}'>{f.level}</span> "
            f"<code>{html.escape(f.key)}</code>: {html.escape(f.message)}</li>"
            for f in findings
        )
        lint = f"<b>lint:</b><ul style='margin:0;padding-left:18px'>{items}</ul>"
    else:
        lint = "<b>lint:</b> no findings"
    return (
        f"<div class='wb-app-config'><b>from:</b> {html.escape(source)}<br><b>strategy:</b> "
        f"{html.escape(config.strategy)}<br><b>weights:</b> {weights}<br>{lint}</div>"
    )


class ConfigsPage:
    """The Configs page (``widget``) of a session."""

    def __init__(self, session: AppSession) -> None:
        self.session = session
        self.status = Status()
        self.names = w.Select(options=[], rows=8, description="configs", layout=w.Layout(width="360px"))
        self.details = w.HTML(
            layout=w.Layout(
                width="640px", max_height="320px", overflow="auto", border="1px solid #ddd", padding="0 8px"
            )
        )
        self.names.observe(lambda _c: self._show_selected(), names="value")
        self.open_path = w.Text(
            placeholder="a config YAML or a synth-ai training TOML", description="file", layout=w.Layout(width=WIDE)
        )
        self.open_button = w.Button(description="Open", icon="folder-open")
        self.open_button.on_click(guarded(self.status, "opening the config", self.open_file))
        self.keep_name = w.Text(placeholder="name", description="name", layout=w.Layout(width="300px"))
        self.overwrite = w.Checkbox(value=False, description="replace if it exists", indent=False)
        self.keep_button = w.Button(description="Save in workspace", icon="save", layout=w.Layout(width="180px"))
        self.keep_button.on_click(guarded(self.status, "saving the config", self.keep))
        self.save_path = w.Text(placeholder="/path/to/config.yaml", description="save as", layout=w.Layout(width=WIDE))
        self.save_button = w.Button(description="Save as file", icon="save")
        self.save_button.on_click(guarded(self.status, "saving the config", self.save_as))
        self.toml_path = w.Text(
            placeholder="an existing training TOML", description="TOML", layout=w.Layout(width=WIDE)
        )
        self.export_button = w.Button(description="Export into TOML", icon="upload", layout=w.Layout(width="180px"))
        self.export_button.on_click(guarded(self.status, "exporting the config", self.export))
        self.from_tuner_button = w.Button(
            description="Take the Tuner's config", icon="sliders", layout=w.Layout(width="256px")
        )
        self.from_tuner_button.on_click(guarded(self.status, "taking the Tuner's config", self.take_from_tuner))
        self.tune_button = w.Button(description="Tune this", icon="sliders")
        self.tune_button.on_click(guarded(self.status, "tuning the config", self.tune_selected))
        self.compare_button = w.Button(description="Compare this", icon="share")
        self.compare_button.on_click(guarded(self.status, "sending to Compare", self.compare_selected))
        section = "<h4 style='margin:14px 0 4px 0'>{}</h4>".format
        note = f"kept in the workspace {session.workspace.folder}"
        actions = w.VBox(
            [
                w.HTML(section("Open from a file")),
                w.HBox([self.open_path, self.open_button]),
                w.HTML(section("Save the selected config")),
                w.HBox([self.keep_name, self.overwrite, self.keep_button]),
                w.HBox([self.save_path, self.save_button]),
                w.HTML(section("Export its step_rewards into a training TOML")),
                w.HBox([self.toml_path, self.export_button]),
            ]
        )
        self.widget = w.VBox(
            [
                heading("Configs", note),
                self.status.widget,
                w.HBox(
                    [
                        w.VBox([self.names, w.HBox([self.tune_button, self.compare_button]), self.from_tuner_button]),
                        self.details,
                    ],
                    layout=w.Layout(flex_flow="row wrap"),
                ),
                actions,
            ]
        )
        self.widget.add_class("wb-app-page-configs")
        self.refresh()
        session.state.subscribe_change(self._state_changed)

    def _state_changed(self, new: AppState, old: AppState) -> None:
        if new.added != old.added:  # a config added: listed, and selected
            self.refresh(select=new.added[1])

    # -- the list -----------------------------------------------------------------------------
    def refresh(self, select: str | None = None) -> None:
        """List the session's configs again, selecting ``select`` (else keeping the selection).

        Args:
            select: The config name to select, or None.
        """
        keep = select or self.names.value
        self.names.options = list(self.session.configs)
        if keep in self.session.configs:
            self.names.value = keep
        elif self.session.configs:
            self.names.value = next(iter(self.session.configs))
        self._show_selected()

    @property
    def selected(self) -> tuple[str, RewardConfig]:
        """The selected config's name and config; ``ConfigError`` when none is selected."""
        name = self.names.value
        if name is None or name not in self.session.configs:
            raise ConfigError("select a config in the list first")
        return name, self.session.configs[name]

    def _show_selected(self) -> None:
        name = self.names.value
        if name in self.session.configs:
            self.details.value = describe(self.session.configs[name], self.session.sources.get(name, ""))
            self.keep_name.value = name
        else:
            self.details.value = ""

    # -- actions ------------------------------------------------------------------------------
    def open_file(self) -> None:
        """Read the file in the box and add it to the session's configs."""
        path = Path(self.open_path.value.strip()).expanduser()
        if not self.open_path.value.strip():
            raise ConfigError("give a config file in the 'file' box")
        config = RewardConfig.from_file(path)
        name = self.session.add_config(self.session.unique_name(path.stem), config, f"file: {path.resolve()}")
        self.status.show(f"opened {path} as {name!r}", "ok")

    def keep(self) -> None:
        """Save the selected config in the workspace under the name box's name (never replacing a
        kept config unless "replace" is ticked)."""
        _, config = self.selected
        name = self.keep_name.value.strip()
        try:
            path = self.session.workspace.save(name, config, overwrite=self.overwrite.value)
        except TargetExistsError as error:
            raise TargetExistsError(f"{error} (tick 'replace if it exists' to replace it)") from None
        self.overwrite.value = False
        # The session names it as the workspace does, so a restart shows the same name.
        self.session.add_config(path.stem, config, f"workspace: {path}")
        self.status.show(f"saved {path}", "ok")

    def save_as(self) -> None:
        """Write the selected config to the file in the 'save as' box (an existing file only when
        "replace" is ticked)."""
        _, config = self.selected
        if not self.save_path.value.strip():
            raise ConfigError("give the file to write in the 'save as' box")
        try:
            target = self.session.workspace.checked(self.save_path.value.strip())
            path = self.session.workspace.write_file(target, config, overwrite=self.overwrite.value)
        except TargetExistsError as error:
            raise TargetExistsError(f"{error} (tick 'replace if it exists' to replace it)") from None
        self.overwrite.value = False
        self.status.show(f"saved {Path(path).resolve()}", "ok")

    def export(self) -> None:
        """Write the selected config's step_rewards into the TOML in the box (comments kept)."""
        _, config = self.selected
        if not self.toml_path.value.strip():
            raise ConfigError("give an existing training TOML in the 'TOML' box")
        path = config.export_into(Path(self.toml_path.value.strip()).expanduser())
        self.status.show(f"exported into {Path(path).resolve()}", "ok")

    def take_from_tuner(self) -> None:
        """Add the Tuner's current config to the session's configs (as ``tuned``, ``tuned-2`` ...)."""

        def take(tuner: Tuner) -> None:
            name = self.session.add_config(self.session.unique_name("tuned"), tuner.config, "the Tuner")
            self.status.show(f"added the Tuner's config as {name!r}", "ok")

        self.session.tuner_view.need(take)

    def tune_selected(self) -> None:
        """Start the Tuner over from the selected config."""
        _, config = self.selected
        self.session.retune(config)

    def compare_selected(self) -> None:
        """Show the selected config in Compare."""
        name, config = self.selected
        if self.session.corpus is None:
            raise CorpusError("no Compare yet: open a corpus on the Corpus page first")
        self.session.show_page(COMPARE)  # first: its figures redraw in front, never hidden
        self.session.compare_view.need(lambda compare: compare.add(name, config, show=True))
