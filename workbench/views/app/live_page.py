"""The Live page: follow a run while it trains.

Pick a source (a folder rollout files land in, a synth-ai trace database, a crafter.Recorder
folder, a corpus being recorded) and a target corpus folder; the follow switch starts a
background ``Watcher`` that appends each new episode once into the target, scores it under every
config of the session (``LiveScores``) and redraws the timeline and the over-optimisation watch
(which marks, on the timeline, where a config's decline began); problems (a corrupt file) are
named in the page's report while the watcher goes on."""

from __future__ import annotations

import html
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ipywidgets as w
import pandas as pd

from workbench.analysis.audit import audit
from workbench.core.config import RewardConfig
from workbench.data.episodes import Corpus
from workbench.data.storage import load_corpus
from workbench.data.watch import KINDS, Watcher, WatchReport, open_source, origin_of
from workbench.errors import WorkbenchError
from workbench.scoring.incremental import LiveScores
from workbench.views.app.common import REPLAY, Status, guarded, heading, kernel_context_of_session
from workbench.views.app.session import AppSession
from workbench.views.widgets import OveroptimisationPanel, Pick, Replayer, Timeline, link

#: Seconds between polls when no file event wakes the watcher.
POLL_SECONDS = 0.5
#: How many of the latest episodes the audit diagnoses.
AUDIT_WINDOW = 20
#: Problems listed in the report (the newest; the count says how many in all).
MAX_PROBLEMS = 50


class LivePage:
    """The Live page (``widget``) of a session: ``follow`` (the switch) starts and stops watching;
    ``live`` is the ``LiveScores`` followed, ``timeline`` and ``watch`` (its over-optimisation
    watch) its views (None until followed);
    ``problems`` the problems met, newest last."""

    def __init__(self, session: AppSession) -> None:
        self.session = session
        self.status = Status()
        self.source = w.Text(placeholder="/path/to/run-folder", description="source", layout=w.Layout(width="520px"))
        self.kind = w.Dropdown(
            options=[("tell from the folder", "")] + [(k, k) for k in KINDS],
            description="kind",
            layout=w.Layout(width="300px"),
        )
        self.target = w.Text(placeholder="/path/to/target-corpus", description="into", layout=w.Layout(width="520px"))
        self.follow = w.ToggleButton(value=False, description="Follow", icon="play", tooltip="start / stop watching")
        self.follow.add_class("wb-live-follow")
        self.follow.observe(
            lambda change: guarded(self.status, "following the source", lambda: self._switched(change["new"]))(),
            names="value",
        )
        self.counter = w.HTML("<div class='wb-live-count'>not following</div>")
        self.report = w.HTML()
        self.report.add_class("wb-live-problems")
        self.audit = w.HTML()
        self.audit.add_class("wb-live-audit")
        self.body = w.VBox()
        note = "watch a run while it trains: each new episode scored under every config of the session"
        self.widget = w.VBox(
            [
                heading("Live", note),
                w.HBox([self.source, self.kind], layout=w.Layout(flex_flow="row wrap")),
                w.HBox([self.target, self.follow], layout=w.Layout(flex_flow="row wrap")),
                self.status.widget,
                self.counter,
                self.report,
                self.audit,
                self.body,
            ],
            layout=w.Layout(width="100%"),
        )
        self.widget.add_class("wb-app-page-live")
        self.live: LiveScores | None = None
        self.timeline: Timeline | None = None
        self.watch: OveroptimisationPanel | None = None
        self.problems: list[str] = []
        self._problems: list[tuple[str, str]] = []  # (file, message) of each problem shown
        self._resolved = 0
        self._watcher: Watcher | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._redrawers: list[threading.Thread] = []
        self._due: list[threading.Event] = []  # one per redrawer: set when episodes came

    # -- the switch ---------------------------------------------------------------------------
    def _switched(self, on: bool) -> None:
        if on:
            try:
                self.start(self.source.value, self.target.value, self.kind.value or None)
            except Exception:
                self.follow.value = False
                raise
        else:
            self.stop()

    def start(self, source: str, target: str, kind: str | None = None) -> None:
        """Follow ``source`` into the corpus folder ``target`` (created when absent): its episodes
        so far, then each new one as it lands. Raises ``WorkbenchError`` for a bad source or
        target (nothing starts then).

        Args:
            source: The folder (or file) to watch.
            target: The corpus folder to append into.
            kind: The source's kind, or None to tell from the folder.

        Raises:
            WorkbenchError: A bad source or target.
        """
        if not source.strip() or not target.strip():
            raise WorkbenchError("give a source folder to watch and a target corpus folder to append into")
        self.stop()
        watched = open_source(Path(source.strip()).expanduser(), kind)
        into = Path(target.strip()).expanduser()
        held = load_corpus(into) if (into / "corpus.json").exists() else Corpus()
        configs = dict(self.session.configs)
        self.live = LiveScores(held, configs)
        # The timeline and the audit each redraw in a thread of their own (``_redraw``), so the
        # watcher never waits for them (the count of a new episode is painted first) and a slow
        # audit never holds the timeline back.
        self.timeline = Timeline(self.live, reps=200, follow=False, replay=False)
        context = kernel_context_of_session()
        self.timeline.context = lambda: context
        timeline = self.timeline
        self.watch = OveroptimisationPanel(self.live, reps=500, follow=False)
        self.watch.context = lambda: context
        link(replayer=self._open, pickers=(self.timeline, self.watch))
        self.watch.observe(lambda change: timeline.mark_declines(change["new"]), names="declines")
        self._watcher = Watcher(watched, into, on_append=self.live.append)
        self.problems, self._problems, self._resolved = [], [], 0
        self.report.value = ""
        self.body.children = [self.timeline, self.watch]
        self._stop = threading.Event()
        self._show_count(None)
        self._thread = threading.Thread(target=self._run, args=(context,), name="workbench-app: live", daemon=True)
        self._thread.start()
        self._due = [threading.Event(), threading.Event(), threading.Event()]
        self._redrawers = [
            threading.Thread(
                target=self._redraw, args=(context, due, work), name=f"workbench-app: live {what}", daemon=True
            )
            for due, work, what in zip(
                self._due, (timeline.refresh, self._audit, self.watch.refresh), ("timeline", "audit", "watch")
            )
        ]
        for redrawer in self._redrawers:
            redrawer.start()
        self.follow.description, self.follow.icon = "Following", "stop"
        self.status.show(f"following {watched.path} into {into}", "ok")

    def stop(self) -> None:
        """Stop watching (the timeline stays as it is); nothing happens when not following."""
        self._stop.set()
        for due in self._due:
            due.set()  # wakes the redrawers to see the stop
        thread, watcher = self._thread, self._watcher
        self._thread = self._watcher = None
        for running in (thread, *self._redrawers):
            if running is not None and running is not threading.current_thread():
                running.join(timeout=10)
        if watcher is not None:
            watcher.close()
            self.status.show("stopped following", "info")
        self.follow.description, self.follow.icon = "Follow", "play"

    def _run(self, context: Any) -> None:
        assert self._watcher is not None
        watcher, stop = self._watcher, self._stop
        with context:
            try:
                watcher.run(interval=POLL_SECONDS, stop=stop, on_report=self._reported)
            except Exception as error:  # shown in the page, traceback in the server log
                self.status.error(error, "following the source")
                self.follow.value = False

    # -- what the page shows ------------------------------------------------------------------
    def _reported(self, report: WatchReport) -> None:
        """After each poll: new problems (and those a file read since has resolved), the count,
        and a redraw of the timeline and the audit when episodes came."""
        fresh = [(problem.file, str(problem)) for problem in report.problems]
        fresh = [(file, text) for file, text in fresh if (file, text) not in self._problems]
        read = self._files_read(report.appended)
        kept = [(file, text) for file, text in self._problems if _resolved(file) not in read]
        if fresh or len(kept) < len(self._problems):
            self._resolved += len(self._problems) - len(kept)
            self._problems = kept + fresh
            self.problems = [text for _, text in self._problems]
            self._show_problems()
        if len(report.appended):
            self._show_count(report)
            for due in self._due:
                due.set()

    def _files_read(self, episodes: Corpus) -> set[Path]:
        """The source files the ``episodes`` were read from (a file first reported as a problem,
        e.g. half-written, then read whole, resolves its problem)."""
        watcher = self._watcher
        root = watcher.source.path if watcher is not None else Path(".")
        files = set()
        for position in range(len(episodes)):
            origin = origin_of(episodes.episode_extras(position).metadata)
            if origin is not None:
                files.add(_resolved(str(root / origin[1].split("|")[0])))
        return files

    def _show_problems(self) -> None:
        resolved = f" ({self._resolved} resolved: the file was read whole later)" if self._resolved else ""
        if not self._problems:
            self.report.value = f"<div style='color:#555'>no problems{resolved}</div>" if resolved else ""
            return
        shown = "".join(f"<li><code>{html.escape(p)}</code></li>" for p in self.problems[-MAX_PROBLEMS:])
        self.report.value = (
            f"<div style='color:#B3261E'><b>{len(self.problems)} problem(s)</b>, the watcher goes on{resolved}:"
            f"<ul style='margin:2px 0'>{shown}</ul></div>"
        )

    def _redraw(self, context: Any, due: threading.Event, work: Callable[[], None]) -> None:
        """Run ``work`` (redraw the timeline, or the audit) whenever episodes came, the latest
        state winning (episodes that arrive meanwhile are drawn by the next round, not queued)."""
        stop = self._stop
        with context:
            while True:
                due.wait()
                if stop.is_set():
                    return
                due.clear()
                try:
                    work()
                except Exception as error:  # shown in the page, traceback in the server log
                    self.status.error(error, "drawing the timeline, the audit and the watch")

    def _show_count(self, report: WatchReport | None) -> None:
        live = self.live
        n = 0 if live is None else len(live)
        if not n:
            self.counter.value = "<div class='wb-live-count'>following: waiting for the first episode ...</div>"
            return
        latest = live.corpus.ids[-1] if live is not None else ""
        delay = f"; last file landed &rarr; scored in {max(report.latency):.2f} s" if report and report.latency else ""
        self.counter.value = (
            f"<div class='wb-live-count'>following: <b>{n}</b> episodes; latest <code class='wb-live-latest'>"
            f"{html.escape(latest)}</code> at {time.strftime('%H:%M:%S')}{delay}</div>"
        )

    def _audit(self) -> None:
        """``workbench audit``'s checks (farming, dominance, dead entries, estimated counts) on the
        latest ``AUDIT_WINDOW`` episodes, per config."""
        live = self.live
        if live is None or len(live) < 2:
            return
        corpus = live.corpus
        first = max(0, len(corpus) - AUDIT_WINDOW)
        flags = audit(corpus[first:], live.configs).flags
        rows = []
        for name in live.configs:
            mine = flags[flags["config"] == name]
            codes = mine["code"].value_counts() if len(mine) else pd.Series(dtype=int)
            state = ", ".join(f"{html.escape(str(code))} &times;{count}" for code, count in codes.items()) or "clean"
            colour = "#1B6E20" if state == "clean" else "#B3261E"
            rows.append(f"<li><b>{html.escape(name)}</b>: <span style='color:{colour}'>{state}</span></li>")
        self.audit.value = (
            f"<div style='word-break:break-word'><b>audit</b> of the latest episodes ({first}-{len(corpus) - 1}; "
            f"workbench audit's checks):<ul style='margin:2px 0'>{''.join(rows)}</ul></div>"
        )

    def _open(self, pick: Pick, config: RewardConfig) -> None:
        """Replay a pick of the timeline or the watch on the Replay page (a Replayer on the
        followed corpus, under the picking view's config, where every view opens a pick)."""
        if self.live is None:
            return
        replayer = Replayer(self.live.corpus, config, episode=pick.episode)
        replayer.open_pick(pick)
        self.session.replayer_view.show(replayer)
        self.session.show_page(REPLAY)


def _resolved(file: str) -> Path:
    """A problem's or an episode's file as one comparable path."""
    return Path(file).expanduser().resolve()
