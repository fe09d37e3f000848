"""One page session of the app: the corpus, the session's configs, the views and the page in front."""

from __future__ import annotations

import html
import logging
import threading
from collections.abc import Callable, Mapping
from pathlib import Path

import solara

from workbench.core.config import RewardConfig
from workbench.core.named_configs import NAMED_CONFIGS, STARTING_CONFIG, load_config
from workbench.data.episodes import Corpus
from workbench.data.opening import SAMPLE, open_corpus
from workbench.errors import CorpusError, WorkbenchError
from workbench.views.app.common import COMPARE, CORPUS, REPLAY, TUNE, Status
from workbench.views.app.deep_link import parse_link
from workbench.views.app.options import AppOptions
from workbench.views.app.state import AppState, LiveState
from workbench.views.app.views_pages import ViewSlot
from workbench.views.app.workspace import Workspace
from workbench.views.widgets import Compare, Pick, Replayer, Tuner, link

log = logging.getLogger("workbench.views.app")


def _tab_closed() -> Callable[[], bool]:
    """Whether the browser tab of the session being made has gone (its Solara kernel context
    closed); always False outside a Solara server (a notebook, a test)."""
    try:
        from solara.server import kernel_context

        context = kernel_context.get_current_context()
    except Exception:  # noqa: BLE001 - no server context: nothing can close under the session
        return lambda: False
    return context.closed_event.is_set


class AppSession:
    """Everything one browser tab works with; the Solara components of ``workbench.views.app.page``
    draw it and re-draw what its reactive values say.

    ``configs`` maps names to configs (``sources`` says where each came from); ``tuner_view``,
    ``replayer_view`` and ``compare_view`` are the views on ``corpus`` (``ViewSlot``: built in the
    background once the first page is drawn, or sooner when a page is shown or a link needs one).
    Reactive: ``state`` (an ``AppState``, frozen: the corpus open, the configs, how many corpora
    were opened and the config added last; ``corpus``, ``configs`` ... read it) and ``page`` (the
    tab in front; ``show_page`` sets it).
    ``baseline`` is the config the user gave (the first ``--config``; else the named config
    ``per_achievement``), named ``baseline_name`` in ``header``: the Tuner's ghost and where its
    Reset goes, whatever draft the Tuner starts from. ``start`` is where the Tuner starts: the
    newest tab's draft kept in the workspace (each tab keeps its own, ``Workspace.save_draft``;
    the others are offered as configs, named in ``drafts_listed``), else the baseline."""

    def __init__(self, options: AppOptions) -> None:
        self.options = options
        self.workspace = Workspace(options.workspace)
        self.status = Status()
        #: The tab's corpus and configs, one frozen value (``state.AppState``): pages draw from it.
        self.state: solara.Reactive[AppState] = solara.Reactive(AppState())
        self.page = solara.Reactive(CORPUS)
        #: The Live page's state (``state.LiveState``: the followed run, its status, problems, picks).
        self.live: solara.Reactive[LiveState] = solara.Reactive(LiveState())
        self.live_lock = threading.RLock()  # one change of ``live`` at a time (the Live page's threads)
        closed = _tab_closed()
        self.tuner_view = ViewSlot("Tuner", self.status, self._tuner_built, closed)
        self.replayer_view = ViewSlot("Replayer", self.status, closed=closed)
        self.compare_view = ViewSlot("Compare", self.status, self._compare_built, closed)
        self.drafts_listed: set[str] = set()  # other tabs' drafts offered on the Configs page
        self.baseline_name, self.baseline = self._load_configs()
        self.start = self._restore_drafts()
        source = html.escape(self.sources[self.baseline_name], quote=True)
        self.header = (
            "<div style='font-size:18px;font-weight:600;margin:4px 0;white-space:nowrap;overflow:hidden;"
            "text-overflow:ellipsis'>Crafter Reward Workbench <span class='wb-app-baseline' "
            f"title='{source}' style='font-size:13px;font-weight:normal;color:#444'>baseline (the Tuner's ghost "
            f"and Reset): <b>{html.escape(self.baseline_name)}</b></span></div>"
        )
        if isinstance(options.corpus, Corpus):
            self.set_corpus(options.corpus, f"the corpus given ({len(options.corpus)} episodes)")
        elif options.corpus:
            self.open_spec(options.corpus)

    # -- configs ------------------------------------------------------------------------------
    def _load_configs(self) -> tuple[str, RewardConfig]:
        """Load the workspace's and the given configs; returns the baseline's name and config."""
        kept, problems = self.workspace.configs()
        for name, config in kept.items():
            self._keep(name, config, f"workspace: {self.workspace.path_for(name)}")
        given: list[str] = []
        for path in self.options.configs:
            try:
                config = load_config(path)
            except (WorkbenchError, OSError) as error:
                problems.append(str(error))
                continue
            name = self.unique_name(Path(path).stem)
            named = NAMED_CONFIGS.get(str(path))
            self._keep(name, config, f"named config: {named.description}" if named else f"file: {Path(path).resolve()}")
            given.append(name)
        default = STARTING_CONFIG
        if not given and default.name not in self.configs:
            self._keep(default.name, default.config, f"named config: {default.description}")
        if problems:
            self.status.show("some configs were not loaded:\n" + "\n".join(problems), "warning")
        baseline = given[0] if given else default.name
        return baseline, self.configs[baseline]

    def _restore_drafts(self) -> RewardConfig:
        """Where the Tuner starts: the newest tab's draft (this tab's draft replaces that file),
        else the baseline. Every other tab's draft that differs is offered as a config on the
        Configs page (``draft-...``), and the status line says so: no tab's work is dropped."""
        drafts = self.workspace.drafts()
        if not drafts:
            return self.baseline
        (newest, start), others = drafts[0], drafts[1:]
        self.workspace.adopt(newest)
        listed = []
        for path, config in others:
            if config == start or config in (self.configs[name] for name in self.drafts_listed):
                continue
            name = self.unique_name(path.stem.removeprefix("tuner-"))
            self._keep(name, config, f"draft of another tab: {path}")
            self.drafts_listed.add(name)
            listed.append(name)
        if listed and self.status.level != "warning":
            self.status.show(
                f"the Tuner starts from the newest tab's draft; {len(listed)} other tab draft(s) are on the "
                f"Configs page: {', '.join(listed)}",
                "info",
            )
        return start

    def unique_name(self, name: str) -> str:
        """``name``, or ``name-2``, ``name-3`` ... when the session has a config of that name.

        Args:
            name: The name wanted.

        Returns:
            A name no config of the session has.
        """
        candidate, n = name or "config", 1
        while candidate in self.configs:
            n += 1
            candidate = f"{name}-{n}"
        return candidate

    def add_config(self, name: str, config: RewardConfig, source: str, *, to_compare: bool = True) -> str:
        """Keep ``config`` as ``name`` in the session (replacing one of that name) and offer it to
        Compare; returns the name.

        Args:
            name: The config's name.
            config: The config.
            source: Where it came from (shown on the Configs page).
            to_compare: Offer it to Compare too.

        Returns:
            The name.
        """
        self._keep(name, config, source)
        if to_compare and self.compare is not None:
            self.compare.add(name, config)
        return name

    def _keep(self, name: str, config: RewardConfig, source: str) -> None:
        self.state.value = self.state.peek().with_config(name, config, source)

    # -- the state, read ------------------------------------------------------------------------
    @property
    def corpus(self) -> Corpus | None:
        """The corpus open, or None (``state``)."""
        return self.state.peek().corpus

    @property
    def corpus_label(self) -> str:
        """What the corpus open is called in the page (``state``)."""
        return self.state.peek().corpus_label

    @property
    def configs(self) -> Mapping[str, RewardConfig]:
        """The session's configs by name, read-only (``state``; ``add_config`` adds one)."""
        return self.state.peek().configs

    @property
    def sources(self) -> Mapping[str, str]:
        """Where each config came from, by name (``state``)."""
        return self.state.peek().sources

    # -- corpus and views ---------------------------------------------------------------------
    @property
    def tuner(self) -> Tuner | None:
        """The Tuner on the corpus, or None (no corpus, or not built yet)."""
        return self.tuner_view.view

    @property
    def replayer(self) -> Replayer | None:
        """The session's Replayer on the corpus, or None (no corpus, or not built yet)."""
        return self.replayer_view.view

    @property
    def compare(self) -> Compare | None:
        """Compare of the session's configs on the corpus, or None (no corpus, or not built yet)."""
        return self.compare_view.view

    @property
    def building(self) -> bool:
        """Whether a view is being built."""
        return any(view.building for view in (self.tuner_view, self.replayer_view, self.compare_view))

    def open_spec(self, spec: str) -> str:
        """Open the corpus ``spec`` names (a folder, or ``sample``) as the session's corpus.

        Args:
            spec: A corpus folder or ``sample``.

        Returns:
            What the corpus is called in the page.

        Raises:
            WorkbenchError: No corpus there.
        """
        corpus = open_corpus(spec)
        label = "the sample corpus" if spec.strip() == SAMPLE else str(Path(spec.strip()).expanduser().resolve())
        self.set_corpus(corpus, label)
        return label

    def set_corpus(self, corpus: Corpus, label: str) -> None:
        """Make ``corpus`` the session's. Its views are built in the background once the page
        has drawn (``build_views``; at once for a corpus opened later) or when first needed: the
        Tuner starting from the kept draft, else the baseline (its ghost and Reset are the
        baseline's), the Replayer under the same config, Compare of the session's configs then.

        Args:
            corpus: The corpus.
            label: What it is called in the page.

        Raises:
            CorpusError: The corpus has no episodes.
        """
        if len(corpus) == 0:
            raise CorpusError(f"{label}: the corpus has no episodes")
        start = self.tuner.config if self.tuner is not None else self.start  # a later corpus: tuning goes on
        self.tuner_view.reset(lambda: self._new_tuner(corpus, start))
        self.replayer_view.reset(lambda: Replayer(corpus, start))
        self.compare_view.reset(lambda: Compare(corpus, self._compared(), a=self.baseline_name))
        self.state.value = self.state.peek().with_corpus(corpus, label)

    def _compared(self) -> dict[str, RewardConfig]:
        """The configs Compare starts with: the session's, other tabs' drafts left out (sent there on asking)."""
        return {name: config for name, config in self.configs.items() if name not in self.drafts_listed}

    def build_views(self) -> None:
        """Build the corpus's views one after another in the background (each, if not built);
        nothing without a corpus."""
        if self.corpus is not None:
            self.tuner_view.need(lambda _: self.replayer_view.need(lambda _: self.compare_view.need()))

    def _tuner_built(self, tuner: Tuner) -> None:
        link(tuner, replayer=self.open_pick, compare=self.send_to_compare)
        tuner.observe(lambda _change: self._keep_draft(), names="config")  # set once per re-score

    def _compare_built(self, compare: Compare) -> None:
        link(replayer=self.open_pick, pickers=(compare,))

    def open_pick(self, pick: Pick, config: RewardConfig | None = None) -> None:
        """Open a pick (of a view, or a deep link) on the Replay page, where every view opens it
        (``Pick.opens_at``), under ``config`` (the picking view's) when given.

        Args:
            pick: The pick.
            config: The config to score it under, or None (the Replayer's).
        """
        self.show_replay(pick.episode, pick.opens_at, config=config)

    def send_to_compare(self, name: str, config: RewardConfig) -> None:
        """A config the Tuner sent: keep it among the session's configs and show it in Compare, first.

        Args:
            name: The name it was sent under.
            config: The config.
        """
        self.add_config(name, config, "sent from the Tuner", to_compare=False)
        self.show_page(COMPARE)  # first: its figures redraw in front, never hidden
        self.compare_view.need(lambda compare: compare.add(name, config, show=True))

    def open_link(self, query: str | None) -> None:
        """Open what a dashboard URL's query asks (``deep_link.parse_link``): with
        ``view=replayer``, the Replay page on ``episode`` at ``decision``. A link that cannot be
        followed says why on the status line and changes nothing.

        Args:
            query: The URL's query string (None or '': nothing to open).
        """
        try:
            asked = parse_link(query)
            if asked.view is None or asked.episode is None:
                return
            if self.corpus is None:
                raise CorpusError(f"link: no corpus is open to show episode {asked.episode!r} in")
            if asked.episode not in self.corpus.ids:
                raise CorpusError(f"link: no episode {asked.episode!r} in {self.corpus_label}")
            decisions = self.corpus[asked.episode].n_decisions
            if asked.decision is not None and asked.decision > decisions:
                raise CorpusError(
                    f"link: episode {asked.episode!r} has decisions 1 to {decisions}, not {asked.decision}"
                )
        except WorkbenchError as error:
            self.status.show(str(error), "error")
            return
        self.open_pick(Pick(asked.episode, asked.decision, "link"))

    def show_replay(
        self, episode: str, decision: int | str | None = None, *, config: RewardConfig | None = None
    ) -> None:
        """Show the Replay page with the session's Replayer on ``episode`` (built first if need be).

        Args:
            episode: An episode id of the corpus.
            decision: The decision to show (1-based), ``"best"`` (the highest-paying) or None (the start).
            config: The config to score it under (default: the Replayer's).

        Raises:
            CorpusError: No corpus is open.
        """

        def show(replayer: Replayer) -> None:
            if self.replayer_view.shown.peek() is not replayer:  # the Live page showed its own
                self.replayer_view.show(replayer)
            if config is not None:
                replayer.config = config
            replayer.open_episode(episode, decision=decision)

        self.show_page(REPLAY)
        self.replayer_view.need(show)

    def retune(self, config: RewardConfig) -> None:
        """Start the Tuner over from ``config`` (same corpus) and show the Tune page.

        Args:
            config: Where the Tuner starts.

        Raises:
            CorpusError: No corpus is open.
        """
        if self.corpus is None:
            raise CorpusError("no corpus is open: open one on the Corpus page first")
        corpus = self.corpus
        self.tuner_view.reset(lambda: self._new_tuner(corpus, config))
        self.show_page(TUNE)  # first: the new Tuner's figure is drawn in front, never hidden
        self.tuner_view.need(lambda _tuner: self._keep_draft())

    def _new_tuner(self, corpus: Corpus, start: RewardConfig) -> Tuner:
        # The Tuner's Save writes into the workspace (not relative to the server's folder), the
        # path checked (a symlink on the way is refused) and written by the workspace (one
        # swapped in after the check cannot redirect the write, another tab's save is not lost).
        return Tuner(
            corpus,
            start,
            baseline=self.baseline,
            baseline_name=self.baseline_name,
            writer=self.workspace.write_file,
            path_check=self.workspace.checked,
            save_path=self.workspace.folder / "my_reward.yaml",
        )

    def show_page(self, page: int) -> None:
        """Bring a page to the front (what a click on its tab does): the one place the app does.

        Args:
            page: The page's index in ``common.TABS`` (``common.TUNE``, ``common.REPLAY`` ...).
        """
        self.page.value = page

    def _keep_draft(self) -> None:
        if self.tuner is None:
            return
        try:
            self.workspace.save_draft(self.tuner.config)
        except (WorkbenchError, OSError) as error:
            self.status.show(f"the Tuner's draft could not be kept in {self.workspace.folder}: {error}", "warning")
