"""One page session of the app: the corpus, the session's configs, the views and the tabs."""

from __future__ import annotations

import html
import logging
from pathlib import Path
from typing import Any

import ipywidgets as w

from workbench.core.config import RewardConfig
from workbench.data.episodes import Corpus
from workbench.errors import CorpusError, WorkbenchError
from workbench.views.app.common import (
    COMPARE,
    DEFAULT_NAME,
    REPLAY,
    TABS,
    TUNE,
    Status,
    in_background,
)
from workbench.views.app.configs_page import ConfigsPage
from workbench.views.app.corpus_page import CorpusPage
from workbench.views.app.live_page import LivePage
from workbench.views.app.options import AppOptions
from workbench.views.app.views_pages import compare_page, replay_page, tune_page
from workbench.views.app.workspace import Workspace
from workbench.views.widgets import Compare, Replayer, Tuner, link

log = logging.getLogger("workbench.views.app")


class _ReplayerLink:
    """Stands in for the Replayer in ``link``: opening an episode also brings the Replay tab forward."""

    def __init__(self, session: AppSession, replayer: Replayer) -> None:
        self._session, self._replayer = session, replayer

    def open(self, episode: str, *, decision: int | str | None = None) -> None:
        """Show the Replay page and open ``episode`` in its Replayer (at ``decision``)."""
        if self._session.replay_page.view is not self._replayer:  # the Live page showed its own
            self._session.replay_page.show(self._replayer)
        self._session.tabs.selected_index = REPLAY
        self._replayer.open(episode, decision=decision)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._replayer, name)


class _CompareLink:
    """Stands in for Compare in ``link``: a config the Tuner sends also joins the session's configs."""

    def __init__(self, session: AppSession, compare: Compare) -> None:
        self._session, self._compare = session, compare

    def add(self, name: str, config: RewardConfig, **kwargs: Any) -> None:
        """Offer ``config`` to Compare, keep it among the session's configs and show Compare."""
        self._session.add_config(name, config, "sent from the Tuner", to_compare=False)
        self._session.tabs.selected_index = COMPARE  # first: its figures redraw in front, never hidden
        self._compare.add(name, config, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._compare, name)


class AppSession:
    """Everything one browser tab works with. ``configs`` maps names to configs (``sources``
    says where each came from); ``tuner``, ``replayer``, ``compare`` are the views on ``corpus``
    (None until a corpus is open); ``widget`` is the whole page (a ``Tab``). ``baseline`` is the
    config the user gave (the first ``--config``; else the task app's defaults), named
    ``baseline_name`` in the header: the Tuner's ghost and where its Reset goes, whatever
    draft the Tuner starts from."""

    def __init__(self, options: AppOptions) -> None:

        self.options = options
        self.workspace = Workspace(options.workspace)
        self.status = Status()
        self.corpus: Corpus | None = None
        self.corpus_label = ""
        self.configs: dict[str, RewardConfig] = {}
        self.sources: dict[str, str] = {}
        self.tuner: Tuner | None = None
        self.replayer: Replayer | None = None
        self.compare: Compare | None = None
        self.building = False
        self.tune_page, self.replay_page, self.compare_page = tune_page(), replay_page(), compare_page()
        self.corpus_page = CorpusPage(self)
        self.configs_page = ConfigsPage(self)
        self.live_page = LivePage(self)
        self.baseline_name, self.baseline = self._load_configs()
        pages = [
            self.corpus_page.widget,
            self.tune_page.widget,
            self.replay_page.widget,
            self.compare_page.widget,
            self.configs_page.widget,
            self.live_page.widget,
        ]
        self.tabs = w.Tab(children=pages, titles=TABS, layout=w.Layout(width="100%"))
        self.tabs.observe(lambda _change: self._tab_shown(), names="selected_index")
        source = html.escape(self.sources[self.baseline_name], quote=True)
        header = w.HTML(
            "<div style='font-size:18px;font-weight:600;margin:4px 0;white-space:nowrap;overflow:hidden;"
            "text-overflow:ellipsis'>Crafter Reward Workbench <span class='wb-app-baseline' "
            f"title='{source}' style='font-size:13px;font-weight:normal;color:#444'>baseline (the Tuner's ghost "
            f"and Reset): <b>{html.escape(self.baseline_name)}</b></span></div>"
        )
        self.widget = w.VBox([header, self.status.widget, self.tabs], layout=w.Layout(width="100%", padding="4px"))
        self.widget.add_class("wb-app")
        if isinstance(options.corpus, Corpus):
            self.set_corpus(options.corpus, f"the corpus given ({len(options.corpus)} episodes)")
        elif options.corpus:
            self.corpus_page.open_spec(options.corpus)

    # -- configs ------------------------------------------------------------------------------
    def _load_configs(self) -> tuple[str, RewardConfig]:
        """Load the workspace's and the given configs; returns the baseline's name and config."""
        kept, problems = self.workspace.configs()
        for name, config in kept.items():
            self.configs[name], self.sources[name] = config, f"workspace: {self.workspace.path_for(name)}"
        given: list[str] = []
        for path in self.options.configs:
            try:
                config = RewardConfig.from_file(path)
            except (WorkbenchError, OSError) as error:
                problems.append(str(error))
                continue
            name = self.unique_name(Path(path).stem)
            self.configs[name], self.sources[name] = config, f"file: {Path(path).resolve()}"
            given.append(name)
        if not given and DEFAULT_NAME not in self.configs:
            self.configs[DEFAULT_NAME] = RewardConfig(strategy="per_achievement")
            self.sources[DEFAULT_NAME] = "the task app's defaults (every weight 1, k-limit 1)"
        if problems:
            self.status.show("some configs were not loaded:\n" + "\n".join(problems), "warning")
        self.configs_page.refresh()
        baseline = given[0] if given else DEFAULT_NAME
        return baseline, self.configs[baseline]

    def unique_name(self, name: str) -> str:
        """``name``, or ``name-2``, ``name-3`` ... when the session has a config of that name."""
        candidate, n = name or "config", 1
        while candidate in self.configs:
            n += 1
            candidate = f"{name}-{n}"
        return candidate

    def add_config(self, name: str, config: RewardConfig, source: str, *, to_compare: bool = True) -> str:
        """Keep ``config`` as ``name`` in the session (replacing one of that name) and offer it to
        Compare; returns the name."""
        self.configs[name], self.sources[name] = config, source
        if to_compare and self.compare is not None:
            self.compare.add(name, config)
        self.configs_page.refresh(select=name)
        return name

    # -- corpus and views ---------------------------------------------------------------------
    def set_corpus(self, corpus: Corpus, label: str, tuner_config: RewardConfig | None = None) -> None:
        """Make ``corpus`` the session's: builds the Tuner (starting from ``tuner_config``, else
        the kept draft, else the baseline; its ghost and Reset are the baseline's), the Replayer
        and Compare in the background, then links them."""
        if len(corpus) == 0:
            raise CorpusError(f"{label}: the corpus has no episodes")
        self.building = True
        for page in (self.tune_page, self.replay_page, self.compare_page):
            page.wait(f"scoring {len(corpus)} episodes ({corpus.n_decisions:,} decisions) ...")
        start = tuner_config or self.workspace.draft() or self.baseline

        def build() -> tuple[Tuner, Replayer, Compare]:
            return (
                self._tuner(corpus, start),
                Replayer(corpus, start),
                Compare(corpus, dict(self.configs), a=self.baseline_name),
            )

        def done(views: tuple[Tuner, Replayer, Compare]) -> None:
            self.corpus, self.corpus_label = corpus, label
            self._install(*views)
            self.corpus_page.opened(corpus, label)

        def after() -> None:
            self.building = False

        in_background(self.status, f"opening {label}", build, done, after=after)

    def _install(self, tuner: Tuner, replayer: Replayer, compare: Compare) -> None:
        self.tuner, self.replayer, self.compare = tuner, replayer, compare
        link(tuner, _ReplayerLink(self, replayer), _CompareLink(self, compare))  # type: ignore[arg-type]
        compare.link(replayer=_ReplayerLink(self, replayer))
        # The Tuner reports every re-score in its timing line: keep the draft after each one.
        tuner.timing.observe(lambda _change: self._keep_draft(), names="value")
        # The Tuner's own Save writes relative to the server's folder: point it into the workspace.
        tuner.path.value = str(self.workspace.folder / "my_reward.yaml")
        tuner.path_check = self.workspace.checked  # a symlink on the way into the workspace is refused
        self.tune_page.show(tuner)
        self.replay_page.show(replayer)
        self.compare_page.show(compare)

    def retune(self, config: RewardConfig) -> None:
        """Start the Tuner over from ``config`` (same corpus) and show the Tune page."""
        if self.corpus is None:
            raise CorpusError("no corpus is open: open one on the Corpus page first")
        assert self.replayer is not None and self.compare is not None
        tuner = self._tuner(self.corpus, config)
        self.tabs.selected_index = TUNE  # first: the new Tuner's figure is drawn in front, never hidden
        self._install(tuner, self.replayer, self.compare)
        self._keep_draft()

    def _tuner(self, corpus: Corpus, start: RewardConfig) -> Tuner:
        return Tuner(corpus, start, baseline=self.baseline, baseline_name=self.baseline_name)

    def _tab_shown(self) -> None:
        pages = {TUNE: self.tune_page, REPLAY: self.replay_page, COMPARE: self.compare_page}
        page = pages.get(self.tabs.selected_index)
        if page is not None:
            page.activate()

    def _keep_draft(self) -> None:
        if self.tuner is None:
            return
        try:
            self.workspace.save_draft(self.tuner.config)
        except (WorkbenchError, OSError) as error:
            self.status.show(f"the Tuner's draft could not be kept in {self.workspace.folder}: {error}", "warning")
