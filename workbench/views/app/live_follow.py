"""The Live page's work without a page: a followed run opened, a watcher report as a new ``LiveState``, the audit.

Pure functions of the state (and the run's ``LiveScores``); ``live_page`` draws the state and
runs the watcher and the redraws on the app's background path."""

from __future__ import annotations

import html
import time
from dataclasses import replace
from pathlib import Path

import pandas as pd

from workbench.analysis.audit import audit
from workbench.core.config import RewardConfig
from workbench.data.episodes import Corpus
from workbench.data.storage import load_corpus
from workbench.data.watch import Watcher, WatchReport, open_source, origin_of
from workbench.errors import WorkbenchError
from workbench.scoring.incremental import LiveScores
from workbench.views.app.state import Followed, LiveState
from workbench.views.widgets import OveroptimisationPanel, Timeline

#: How many of the latest episodes the audit diagnoses.
AUDIT_WINDOW = 20
#: Problems listed in the report (the newest; the count says how many in all).
MAX_PROBLEMS = 50
#: The count line once following, before the first episode.
WAITING = "<div class='wb-live-count'>following: waiting for the first episode ...</div>"


def open_run(source: str, target: str, kind: str | None, configs: dict[str, RewardConfig]) -> Followed:
    """Open ``source`` to follow into the corpus folder ``target`` (created when absent; the
    episodes it holds are kept), scored under ``configs``.

    Args:
        source: The folder (or file) to watch.
        target: The corpus folder to append into.
        kind: The source's kind, or None to tell from the folder.
        configs: The session's configs by name.

    Returns:
        The run, its watcher not started.

    Raises:
        WorkbenchError: A bad source or target.
    """
    if not source.strip() or not target.strip():
        raise WorkbenchError("give a source folder to watch and a target corpus folder to append into")
    watched = open_source(Path(source.strip()).expanduser(), kind)
    into = Path(target.strip()).expanduser()
    held = load_corpus(into) if (into / "corpus.json").exists() else Corpus()
    live = LiveScores(held, configs)
    timeline = Timeline(live, reps=200, follow=False, replay=False)
    watch = OveroptimisationPanel(live, reps=500, follow=False)
    watch.observe(lambda change: timeline.mark_declines(change["new"]), names="declines")
    return Followed(live, timeline, watch, Watcher(watched, into, on_append=live.append), into)


def reported(state: LiveState, report: WatchReport) -> LiveState:
    """The state after a poll's report: its new problems (and those a file read since resolved),
    the count, and one more arrival when episodes came.

    Args:
        state: The page's state (following ``state.run``).
        report: The watcher's report of one poll.

    Returns:
        The new state (``state`` itself when nothing changed).
    """
    run = state.run
    if run is None:
        return state
    fresh = [(problem.file, str(problem)) for problem in report.problems]
    fresh = [problem for problem in fresh if problem not in state.problems]
    read = files_read(run, report.appended)
    kept = tuple(problem for problem in state.problems if _resolved(problem[0]) not in read)
    changed = state
    if fresh or len(kept) < len(state.problems):
        resolved = state.resolved + len(state.problems) - len(kept)
        changed = replace(changed, problems=kept + tuple(fresh), resolved=resolved)
    if len(report.appended):
        changed = replace(changed, count=count_html(run.live, report), arrivals=state.arrivals + 1)
    return changed


def files_read(run: Followed, episodes: Corpus) -> set[Path]:
    """The source files the ``episodes`` were read from (a file first reported as a problem,
    e.g. half-written, then read whole, resolves its problem).

    Args:
        run: The followed run.
        episodes: Episodes it appended.

    Returns:
        Their files, resolved.
    """
    root = run.watcher.source.path
    files = set()
    for position in range(len(episodes)):
        origin = origin_of(episodes.episode_extras(position).metadata)
        if origin is not None:
            files.add(_resolved(str(root / origin[1].split("|")[0])))
    return files


def problems_html(state: LiveState) -> str:
    """The report of the problems met (the newest ``MAX_PROBLEMS``), and how many were resolved.

    Args:
        state: The page's state.

    Returns:
        The HTML ('' when there is nothing to say).
    """
    resolved = f" ({state.resolved} resolved: the file was read whole later)" if state.resolved else ""
    if not state.problems:
        return f"<div style='color:#555'>no problems{resolved}</div>" if resolved else ""
    shown = "".join(f"<li><code>{html.escape(text)}</code></li>" for _, text in state.problems[-MAX_PROBLEMS:])
    return (
        f"<div style='color:#B3261E'><b>{len(state.problems)} problem(s)</b>, the watcher goes on{resolved}:"
        f"<ul style='margin:2px 0'>{shown}</ul></div>"
    )


def count_html(live: LiveScores, report: WatchReport | None) -> str:
    """The count line: how many episodes, the latest, when, and how long the last file took.

    Args:
        live: The followed run's scores.
        report: The poll's report (its latency), or None.

    Returns:
        The HTML.
    """
    if not len(live):
        return WAITING
    latest = live.corpus.ids[-1]
    delay = f"; last file landed &rarr; scored in {max(report.latency):.2f} s" if report and report.latency else ""
    return (
        f"<div class='wb-live-count'>following: <b>{len(live)}</b> episodes; latest <code class='wb-live-latest'>"
        f"{html.escape(latest)}</code> at {time.strftime('%H:%M:%S')}{delay}</div>"
    )


def audit_html(live: LiveScores) -> str:
    """``workbench audit``'s checks (farming, dominance, dead entries, estimated counts) on the
    latest ``AUDIT_WINDOW`` episodes, per config.

    Args:
        live: The followed run's scores.

    Returns:
        The HTML ('' with fewer than two episodes).
    """
    if len(live) < 2:
        return ""
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
    return (
        f"<div style='word-break:break-word'><b>audit</b> of the latest episodes ({first}-{len(corpus) - 1}; "
        f"workbench audit's checks):<ul style='margin:2px 0'>{''.join(rows)}</ul></div>"
    )


def _resolved(file: str) -> Path:
    """A problem's or an episode's file as one comparable path."""
    return Path(file).expanduser().resolve()
