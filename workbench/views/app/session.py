"""One page session of the app: the corpus, the session's configs, the views and the page in front."""

from __future__ import annotations

import html
import logging
from pathlib import Path
from typing import Any

import solara

from workbench.core.config import RewardConfig
from workbench.core.named_configs import NAMED_CONFIGS, STARTING_CONFIG, load_config
from workbench.data.episodes import Corpus
from workbench.data.opening import SAMPLE, open_corpus
from workbench.errors import CorpusError, WorkbenchError
from workbench.views.app.common import COMPARE, CORPUS, REPLAY, TUNE, Status
from workbench.views.app.deep_link import parse_link
from workbench.views.app.options import AppOptions
from workbench.views.app.views_pages import ViewSlot
from workbench.views.app.workspace import Workspace
from workbench.views.widgets import Compare, Replayer, Tuner

log = logging.getLogger("workbench.views.app")


class AppSession:
    """Everything one browser tab works with; the Solara components of ``workbench.views.app.page``
    draw it and re-draw what its reactive values say.

    ``configs`` maps names to configs (``sources`` says where each came from); ``tuner_view``,
    ``replayer_view`` and ``compare_view`` are the views on ``corpus`` (``ViewSlot``: built in the
    background once the first page is drawn, or sooner when a page is shown or a link needs one).
    Reactive: ``page`` (the tab in front; ``show_page`` sets it), ``corpus_opened`` (counts the
    corpora opened) and ``config_added`` (the name of the config added last, with a count).
    ``baseline`` is the config the user gave (the first ``--config``; else the named config
    ``per_achievement``), named ``baseline_name`` in ``header``: the Tuner's ghost and where its
    Reset goes, whatever draft the Tuner starts from."""

    def __init__(self, options: AppOptions) -> None:
        self.options = options
        self.workspace = Workspace(options.workspace)
        self.status = Status()
        self.corpus: Corpus | None = None
        self.corpus_label = ""
        self.configs: dict[str, RewardConfig] = {}
        self.sources: dict[str, str] = {}
        self.page = solara.Reactive(CORPUS)
        self.corpus_opened = solara.Reactive(0)
        self.config_added = solara.Reactive((0, ""))
        self.tuner_view = ViewSlot("Tuner", self.status, self._tuner_built)
        self.replayer_view = ViewSlot("Replayer", self.status)
        self.compare_view = ViewSlot("Compare", self.status, self._compare_built)
        self.baseline_name, self.baseline = self._load_configs()
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
            self.configs[name], self.sources[name] = config, f"workspace: {self.workspace.path_for(name)}"
        given: list[str] = []
        for path in self.options.configs:
            try:
                config = load_config(path)
            except (WorkbenchError, OSError) as error:
                problems.append(str(error))
                continue
            name = self.unique_name(Path(path).stem)
            named = NAMED_CONFIGS.get(str(path))
            self.configs[name] = config
            self.sources[name] = f"named config: {named.description}" if named else f"file: {Path(path).resolve()}"
            given.append(name)
        default = STARTING_CONFIG
        if not given and default.name not in self.configs:
            self.configs[default.name], self.sources[default.name] = (
                default.config,
                f"named config: {default.description}",
            )
        if problems:
            self.status.show("some configs were not loaded:\n" + "\n".join(problems), "warning")
        baseline = given[0] if given else default.name
        return baseline, self.configs[baseline]

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
        self.configs[name], self.sources[name] = config, source
        if to_compare and self.compare is not None:
            self.compare.add(name, config)
        self.config_added.value = (self.config_added.peek()[0] + 1, name)
        return name

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
        start = self.workspace.draft() or self.baseline
        self.corpus, self.corpus_label = corpus, label
        self.tuner_view.reset(lambda: self._new_tuner(corpus, start))
        self.replayer_view.reset(lambda: Replayer(corpus, start))
        self.compare_view.reset(lambda: Compare(corpus, dict(self.configs), a=self.baseline_name))
        self.corpus_opened.value = self.corpus_opened.peek() + 1

    def build_views(self) -> None:
        """Build the corpus's views one after another in the background (each, if not built);
        nothing without a corpus."""
        if self.corpus is not None:
            self.tuner_view.need(lambda _: self.replayer_view.need(lambda _: self.compare_view.need()))

    def _tuner_built(self, tuner: Tuner) -> None:
        tuner.observe(self._replay_pick, names="episode")
        tuner.observe(self._send_to_compare, names="sent")
        tuner.observe(lambda _change: self._keep_draft(), names="config")  # set once per re-score
        # The Tuner's own Save writes relative to the server's folder: point it into the workspace.
        tuner.controls.path.value = str(self.workspace.folder / "my_reward.yaml")
        tuner.path_check = self.workspace.checked  # a symlink on the way into the workspace is refused
        tuner.writer = self.workspace.write_file  # and one swapped in after the check cannot redirect the write

    def _compare_built(self, compare: Compare) -> None:
        compare.observe(self._replay_pick, names="episode")

    def _replay_pick(self, change: dict[str, Any]) -> None:
        """An episode picked in a view (its ``episode`` trait): replay it under the view's config,
        at the pick's decision (a certificate's loop) or else the highest-paying one."""
        if change["new"] is not None:  # a pick passing through None (the same episode picked again)
            view = change["owner"]
            self.show_replay(change["new"], view.decision or "best", config=view.config)

    def _send_to_compare(self, change: dict[str, Any]) -> None:
        """The Tuner sent ``(name, config)``: keep it among the session's configs and show it in Compare."""
        name, config = change["new"]
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
            link = parse_link(query)
            if link.view is None or link.episode is None:
                return
            if self.corpus is None:
                raise CorpusError(f"link: no corpus is open to show episode {link.episode!r} in")
            if link.episode not in self.corpus.ids:
                raise CorpusError(f"link: no episode {link.episode!r} in {self.corpus_label}")
            decisions = self.corpus[link.episode].n_decisions
            if link.decision is not None and link.decision > decisions:
                raise CorpusError(f"link: episode {link.episode!r} has decisions 1 to {decisions}, not {link.decision}")
        except WorkbenchError as error:
            self.status.show(str(error), "error")
            return
        self.show_replay(link.episode, link.decision)

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
        return Tuner(corpus, start, baseline=self.baseline, baseline_name=self.baseline_name)

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
