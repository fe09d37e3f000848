"""The Configs page: the session's configs, a Solara component drawn from the tab's ``AppState``.

Open one from a file, keep it in the workspace, save it as a file, export it into a training
TOML, lint it, tune it or send it to Compare."""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import solara
from solara.alias import rw as ipyw  # solara's public alias of its ipywidgets elements

from workbench.core.config import RewardConfig
from workbench.errors import ConfigError, CorpusError, TargetExistsError
from workbench.views.app.common import COMPARE, Status, guarded, heading_html, use_held
from workbench.views.app.session import AppSession
from workbench.views.app.state import AppState

if TYPE_CHECKING:
    from workbench.views.widgets import Tuner

#: Width of the path boxes (each box gets a Layout of its own: a shared one would belong to
#: one page session only, and the boxes of every other session would fail to render).
WIDE = "520px"
LEVEL_COLORS = {"error": "#B3261E", "warning": "#8A5A00", "info": "#0B4F8A"}
SECTION = "<h4 style='margin:14px 0 4px 0'>{}</h4>"


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


def shown_name(state: AppState, choice: tuple[int, str | None]) -> str | None:
    """The config the list selects: the user's choice made since the last config was added,
    else the config added last (one added later is selected), else the first.

    Args:
        state: The tab's state.
        choice: ``(state.added[0] when chosen, name)``: the user's last choice in the list.

    Returns:
        The name, or None when the session has no config.
    """
    chosen_at, name = choice
    if chosen_at >= state.added[0] and name in state.configs:
        return name
    if chosen_at < state.added[0] and state.added[1] in state.configs:
        return state.added[1]
    return next(iter(state.configs), None)


@dataclass
class ConfigActions:
    """What the page's buttons do, on the session and the boxes' values as they are at the click."""

    session: AppSession
    status: Status

    def selected(self, name: str | None) -> tuple[str, RewardConfig]:
        """The selected config; ``ConfigError`` when none is.

        Args:
            name: The name selected, or None.

        Returns:
            (name, config).

        Raises:
            ConfigError: Nothing selected.
        """
        if name is None or name not in self.session.configs:
            raise ConfigError("select a config in the list first")
        return name, self.session.configs[name]

    def open_file(self, box: str) -> None:
        """Read the file in the box and add it to the session's configs.

        Args:
            box: The 'file' box's text.

        Raises:
            ConfigError: No file given, or not a config.
        """
        if not box.strip():
            raise ConfigError("give a config file in the 'file' box")
        path = Path(box.strip()).expanduser()
        config = RewardConfig.from_file(path)
        name = self.session.add_config(self.session.unique_name(path.stem), config, f"file: {path.resolve()}")
        self.status.show(f"opened {path} as {name!r}", "ok")

    def keep(self, selected: str | None, name: str, overwrite: bool) -> None:
        """Save the selected config in the workspace as ``name`` (a kept one replaced only with
        ``overwrite``, and never one another tab changed since, unasked).

        Args:
            selected: The name selected.
            name: The name box's text.
            overwrite: "replace if it exists" ticked.

        Raises:
            TargetExistsError: Kept already and not ``overwrite``.
        """
        _, config = self.selected(selected)
        try:
            path = self.session.workspace.save(name.strip(), config, overwrite=overwrite)
        except TargetExistsError as error:
            raise TargetExistsError(f"{error} (tick 'replace if it exists' to replace it)") from None
        # The session names it as the workspace does, so a restart shows the same name.
        self.session.add_config(path.stem, config, f"workspace: {path}")
        self.status.show(f"saved {path}", "ok")

    def save_as(self, selected: str | None, box: str, overwrite: bool) -> None:
        """Write the selected config to the file in the 'save as' box.

        Args:
            selected: The name selected.
            box: The 'save as' box's text.
            overwrite: "replace if it exists" ticked.

        Raises:
            ConfigError: No file given.
            TargetExistsError: The file exists and not ``overwrite``.
        """
        _, config = self.selected(selected)
        if not box.strip():
            raise ConfigError("give the file to write in the 'save as' box")
        try:
            target = self.session.workspace.checked(box.strip())
            path = self.session.workspace.write_file(target, config, overwrite=overwrite)
        except TargetExistsError as error:
            raise TargetExistsError(f"{error} (tick 'replace if it exists' to replace it)") from None
        self.status.show(f"saved {Path(path).resolve()}", "ok")

    def export(self, selected: str | None, box: str) -> None:
        """Write the selected config's step_rewards into the TOML in the box (comments kept).

        Args:
            selected: The name selected.
            box: The 'TOML' box's text.

        Raises:
            ConfigError: No TOML given.
        """
        _, config = self.selected(selected)
        if not box.strip():
            raise ConfigError("give an existing training TOML in the 'TOML' box")
        path = config.export_into(Path(box.strip()).expanduser())
        self.status.show(f"exported into {Path(path).resolve()}", "ok")

    def take_from_tuner(self) -> None:
        """Add the Tuner's current config to the session's configs (as ``tuned``, ``tuned-2`` ...)."""

        def take(tuner: Tuner) -> None:
            name = self.session.add_config(self.session.unique_name("tuned"), tuner.config, "the Tuner")
            self.status.show(f"added the Tuner's config as {name!r}", "ok")

        self.session.tuner_view.need(take)

    def tune(self, selected: str | None) -> None:
        """Start the Tuner over from the selected config.

        Args:
            selected: The name selected.
        """
        self.session.retune(self.selected(selected)[1])

    def compare(self, selected: str | None) -> None:
        """Show the selected config in Compare.

        Args:
            selected: The name selected.

        Raises:
            CorpusError: No corpus open.
        """
        name, config = self.selected(selected)
        if self.session.corpus is None:
            raise CorpusError("no Compare yet: open a corpus on the Corpus page first")
        self.session.show_page(COMPARE)  # first: its figures redraw in front, never hidden
        self.session.compare_view.need(lambda compare: compare.add(name, config, show=True))


def _box(value: str, on_value: Callable[[str], None], placeholder: str, description: str, width: str) -> Any:
    return ipyw.Text(
        value=value, on_value=on_value, placeholder=placeholder, description=description, layout={"width": width}
    )


def _button(status: Status, description: str, doing: str, action: Callable[[], None], **style: Any) -> Any:
    return ipyw.Button(description=description, on_click=guarded(status, doing, action), **style)


@solara.component
def ConfigList(state: AppState, selected: str | None, on_select: Callable[[str], None], actions: ConfigActions) -> Any:
    """The list of the session's configs, the selected one's details and what to do with it.

    Args:
        state: The tab's state.
        selected: The config selected.
        on_select: Called with the name the user selects.
        actions: The page's actions.

    Returns:
        The element.
    """
    details = describe(state.configs[selected], state.sources.get(selected, "")) if selected else ""
    status = actions.status
    with ipyw.HBox(layout={"flex_flow": "row wrap"}) as row:
        with ipyw.VBox():
            ipyw.Select(
                options=list(state.configs),
                value=selected,
                on_value=on_select,
                rows=8,
                description="configs",
                layout={"width": "360px"},
            )
            with ipyw.HBox():
                _button(status, "Tune this", "tuning the config", lambda: actions.tune(selected), icon="sliders")
                _button(status, "Compare this", "sending to Compare", lambda: actions.compare(selected), icon="share")
            _button(
                status,
                "Take the Tuner's config",
                "taking the Tuner's config",
                actions.take_from_tuner,
                icon="sliders",
                layout={"width": "256px"},
            )
        ipyw.HTML(
            value=details,
            layout={
                "width": "640px",
                "max_height": "320px",
                "overflow": "auto",
                "border": "1px solid #ddd",
                "padding": "0 8px",
            },
        )
    return row


@solara.component
def FileSections(selected: str | None, actions: ConfigActions) -> Any:
    """Open a config from a file; keep the selected one in the workspace, save it as a file or
    export it into a training TOML (the name box follows the selection until typed in).

    Args:
        selected: The config selected.
        actions: The page's actions.

    Returns:
        The element.
    """
    typed, set_typed = solara.use_state((selected, selected or ""))  # the name box, for one selection
    open_box, set_open_box = solara.use_state("")
    save_box, set_save_box = solara.use_state("")
    toml_box, set_toml_box = solara.use_state("")
    overwrite, set_overwrite = solara.use_state(False)
    status = actions.status
    held, holding = use_held(typed=typed, open=open_box, save=save_box, toml=toml_box, overwrite=overwrite)

    def name_now() -> str:
        now = held["typed"]
        return now[1] if now[0] == selected else (selected or "")

    def replacing(action: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            action()
            holding("overwrite", set_overwrite)(False)  # a replace is asked for one save

        return run

    name = name_now()

    with ipyw.VBox() as sections:
        ipyw.HTML(value=SECTION.format("Open from a file"))
        with ipyw.HBox():
            _box(open_box, holding("open", set_open_box), "a config YAML or a synth-ai training TOML", "file", WIDE)
            open_file = lambda: actions.open_file(held["open"])  # noqa: E731 - the button's action
            _button(status, "Open", "opening the config", open_file, icon="folder-open")
        ipyw.HTML(value=SECTION.format("Save the selected config"))
        with ipyw.HBox():
            _box(name, lambda text: holding("typed", set_typed)((selected, text)), "name", "name", "300px")
            ipyw.Checkbox(
                value=overwrite,
                on_value=holding("overwrite", set_overwrite),
                description="replace if it exists",
                indent=False,
            )
            keep = replacing(lambda: actions.keep(selected, name_now(), held["overwrite"]))
            _button(status, "Save in workspace", "saving the config", keep, icon="save", layout={"width": "180px"})
        with ipyw.HBox():
            _box(save_box, holding("save", set_save_box), "/path/to/config.yaml", "save as", WIDE)
            save = replacing(lambda: actions.save_as(selected, held["save"], held["overwrite"]))
            _button(status, "Save as file", "saving the config", save, icon="save")
        ipyw.HTML(value=SECTION.format("Export its step_rewards into a training TOML"))
        with ipyw.HBox():
            _box(toml_box, holding("toml", set_toml_box), "an existing training TOML", "TOML", WIDE)
            export = lambda: actions.export(selected, held["toml"])  # noqa: E731 - the button's action
            _button(
                status, "Export into TOML", "exporting the config", export, icon="upload", layout={"width": "180px"}
            )
    return sections


@solara.component
def ConfigsPage(session: AppSession, front: bool = True) -> solara.Element:
    """The Configs page of a session, drawn from its ``state`` (the configs listed are the
    state's; a config added is selected).

    Args:
        session: The browser tab's session.
        front: Whether the page is the one shown (unused: the page draws nothing costly).

    Returns:
        The page's element.
    """
    state = session.state.value
    status = solara.use_memo(Status, [])
    choice, set_choice = solara.use_state((state.added[0], None))
    selected = shown_name(state, choice)
    actions = ConfigActions(session, status)
    # An ipywidgets box, as the other pages' roots: the page's class on its own DOM node.
    with ipyw.VBox(_dom_classes=["wb-app-page-configs"], layout={"width": "100%"}) as page:  # type: ignore[call-arg]
        ipyw.HTML(value=heading_html("Configs", f"kept in the workspace {session.workspace.folder}"))
        solara.Column(children=[status.widget], gap="0px")
        ConfigList(state, selected, lambda value: set_choice((state.added[0], value)), actions)
        FileSections(selected, actions)
    return page
