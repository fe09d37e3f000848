"""The Corpus page: open, import or record a corpus (a Solara component drawn from the tab's state).

Open a corpus folder or the sample, import runs recorded elsewhere, record a few episodes with a
policy; each with progress and a report."""

from __future__ import annotations

import html
from collections.abc import Callable
from pathlib import Path
from typing import Any

import solara
from solara.alias import rw as ipyw  # solara's public alias of its ipywidgets elements

from workbench.data.episodes import Corpus
from workbench.data.importers import ImportResult, import_crafter_recorder, import_rollouts, import_traces
from workbench.data.policies import BUILTIN_POLICIES
from workbench.data.recording import RecordReport, record
from workbench.errors import RecordingError
from workbench.views.app.common import Background, Status, guarded, heading_html, in_background, use_held
from workbench.views.app.session import AppSession
from workbench.views.widgets.common import counts_note, producers_note

#: What can be imported: label -> (importer, the files it reads in a folder).
IMPORTERS: dict[str, tuple[Callable[..., ImportResult], tuple[str, ...]]] = {
    "crafter.Recorder runs (.npz)": (import_crafter_recorder, ("*.npz",)),
    "task-app rollouts (.json, .jsonl)": (import_rollouts, ("*.json", "*.jsonl")),
    "synth-ai trace database (.db)": (import_traces, ("*.db",)),
}
SECTION = "<h4 style='margin:14px 0 4px 0'>{}</h4>"
#: Width of the path boxes. A Layout is a widget of its own, so each box gets a new one: a module-level
#: Layout would belong to no page session (or to the first), and the boxes of every other session
#: would fail to render ("widget model not found").
WIDE = "520px"


def import_with_progress(kind: str, source: str, on_file: Callable[[int, int], None]) -> ImportResult:
    """Import ``source`` (a file or folder) with the importer ``kind`` names, one file at a time
    so ``on_file(done, total)`` can report progress; the same result as one call on the folder
    (repeated ids get ``-2``, ``-3`` ... suffixes as ``Corpus.concat`` gives them).

    Args:
        kind: The importer's name.
        source: A file or folder.
        on_file: Called with (files done, files in all) after each file.

    Returns:
        The import's result.
    """
    importer, patterns = IMPORTERS[kind]
    path = Path(source.strip()).expanduser()
    files = sorted({f for p in patterns for f in path.rglob(p) if f.is_file()}) if path.is_dir() else []
    if not files:  # one file, or nothing to read: the importer says what is wrong
        on_file(0, 1)
        result = importer(path, progress=False)
        on_file(1, 1)
        return result
    results = []
    for done, file in enumerate(files):
        on_file(done, len(files))
        results.append(importer(file, progress=False))
    on_file(len(files), len(files))
    return ImportResult(
        corpus=Corpus.concat([r.corpus for r in results]),
        errors=[e for r in results for e in r.errors],
        files=len(files),
        warnings=[x for r in results for x in r.warnings],
        normalised={file: d for r in results for file, d in r.normalised.items()},
        notes=[n for r in results for n in r.notes],
    )


def corpus_summary(corpus: Corpus, label: str) -> str:
    """HTML: which corpus is open, with its episodes, decisions and policies, the synth-ai loops
    that produced them (and whether one ignored the run's weights), and a line on estimated
    achievement counts when some episodes have them.

    Args:
        corpus: The corpus.
        label: What it is called in the page.

    Returns:
        The HTML.
    """
    policies = corpus.groups("policy").astype(str).value_counts()
    by_policy = ", ".join(f"{html.escape(p)} ({n})" for p, n in policies.items())
    return (
        f"<div class='wb-app-corpus'><b>open:</b> {html.escape(label)}: {len(corpus)} episodes, "
        f"{corpus.n_decisions:,} decisions; policies: {by_policy}{producers_note(corpus)}{counts_note(corpus)}</div>"
    )


class CorpusWork:
    """What the Corpus page does for a session (open, import, record), with what the page
    shows of it as reactive values: ``import_progress`` and ``record_progress`` (``(done,
    total)``), ``report`` (HTML) and ``importing``/``recording`` (a button is disabled meanwhile).
    The work runs in the background (``common.in_background``, a ``solara.lab.task``)."""

    def __init__(self, session: AppSession) -> None:
        self.session = session
        self.status = Status()
        self.import_progress = solara.Reactive((0, 0))
        self.record_progress = solara.Reactive((0, 0))
        self.report = solara.Reactive("")
        self.importing = solara.Reactive(False)
        self.recording = solara.Reactive(False)

    def open_spec(self, spec: str) -> None:
        """Open the corpus ``spec`` names (a folder, or ``sample``) as the session's corpus.

        Args:
            spec: A corpus folder or ``sample``.

        Raises:
            WorkbenchError: No corpus there.
        """
        self.status.show(f"opening {spec.strip()} ...", "info")
        self.session.open_spec(spec)

    def start_import(self, kind: str, source: str) -> Background:
        """Import the runs at ``source`` in the background (returns its handle); the imported
        episodes become the session's corpus and the report lists every problem.

        Args:
            kind: The importer's name (a key of ``IMPORTERS``).
            source: A folder or file of runs.

        Returns:
            The import's handle (``join`` waits for it).

        Raises:
            RecordingError: No source given.
        """
        if not source.strip():
            raise RecordingError("give the folder or file to import in the path box")
        self.status.show(f"importing {source} ...", "info")

        def done(result: ImportResult) -> None:
            self.report.value = f"<pre class='wb-app-report'>{html.escape(str(result))}</pre>"
            if len(result.corpus) == 0:
                self.status.show(f"nothing imported from {source}: see the report", "error")
                return
            level = "ok" if result.ok else "warning"
            self.status.show(
                f"imported {len(result.corpus)} episodes from {source}"
                + ("" if result.ok else f" ({len(result.errors)} problems: see the report)"),
                level,
            )
            self.session.set_corpus(result.corpus, f"imported from {source}")

        self.importing.value = True
        return in_background(
            self.status,
            f"importing {source}",
            lambda: import_with_progress(
                kind, source, lambda done, total: setattr(self.import_progress, "value", (done, total))
            ),
            done,
            after=lambda: setattr(self.importing, "value", False),
        )

    def start_record(self, policy: str, episodes: int, max_steps: int, out: str) -> Background:
        """Record ``episodes`` episodes of ``policy`` into the new folder ``out`` in the background
        (returns its handle), one at a time (``record(..., resume=True)`` adds the next), then open them.

        Args:
            policy: A built-in policy's name.
            episodes: How many episodes.
            max_steps: Steps per episode at most.
            out: The new corpus folder.

        Returns:
            The recording's handle (``join`` waits for it).

        Raises:
            RecordingError: No folder given.
        """
        out = out.strip()
        if not out:
            raise RecordingError("give a new folder to record into in the 'into' box")
        self.record_progress.value = (0, episodes)
        self.status.show(f"recording {episodes} {policy} episodes into {out} ...", "info")

        def work() -> str:
            # One episode per call (``resume`` adds the next) so the bar moves; the reports add up to
            # the run's (the last call's alone would say "recorded 1 ... skipped n-1 (resume)").
            total = RecordReport(out=Path(out))
            for n in range(1, episodes + 1):
                report = record(policy, n, out, max_steps=max_steps, resume=n > 1, progress=False)
                total.recorded += report.recorded
                total.failed.update(report.failed)
                total.steps += report.steps
                total.elapsed += report.elapsed
                if n == 1:
                    total.skipped = report.skipped  # only what was there before this run
                if report.failed:
                    break
                self.record_progress.value = (n, episodes)
            return str(total)

        def done(text: str) -> None:
            self.report.value = f"<pre class='wb-app-report'>{html.escape(text)}</pre>"
            self.open_spec(out)

        self.recording.value = True
        return in_background(
            self.status, f"recording into {out}", work, done, after=lambda: setattr(self.recording, "value", False)
        )


def _progress(done_total: tuple[int, int], label: str, unit: str) -> solara.Element:
    done, total = done_total
    return ipyw.IntProgress(
        value=done,
        min=0,
        max=max(total, 1),
        description=f"{done}/{total} {unit}" if total else label,
        layout={"width": "420px"},
    )


def _button(work: CorpusWork, description: str, doing: str, action: Callable[[], object], **style: Any) -> Any:
    return ipyw.Button(description=description, on_click=guarded(work.status, doing, action), **style)


def _box(value: str, on_value: Callable[[str], None], placeholder: str, description: str) -> Any:
    return ipyw.Text(
        value=value, on_value=on_value, placeholder=placeholder, description=description, layout={"width": WIDE}
    )


@solara.component
def OpenSection(work: CorpusWork) -> Any:
    """Open a corpus folder or the sample.

    Args:
        work: The page's work.

    Returns:
        The element.
    """
    folder, set_folder = solara.use_state("")
    held, holding = use_held(folder=folder)
    with ipyw.VBox() as section:
        ipyw.HTML(value=SECTION.format("Open"))
        with ipyw.HBox():
            _box(folder, holding("folder", set_folder), "/path/to/corpus-folder", "folder")
            open_folder = lambda: work.open_spec(held["folder"])  # noqa: E731 - the button's action
            _button(work, "Open folder", "opening the folder", open_folder, icon="folder-open")
        sample = lambda: work.open_spec("sample")  # noqa: E731 - the button's action
        _button(work, "Open the sample", "opening the sample", sample, icon="archive", layout={"width": "180px"})
    return section


@solara.component
def ImportSection(work: CorpusWork) -> Any:
    """Import runs recorded elsewhere, with a progress bar.

    Args:
        work: The page's work.

    Returns:
        The element.
    """
    kind, set_kind = solara.use_state(next(iter(IMPORTERS)))
    source, set_source = solara.use_state("")
    held, holding = use_held(kind=kind, source=source)
    with ipyw.VBox() as section:
        ipyw.HTML(value=SECTION.format("Import runs recorded elsewhere"))
        ipyw.Dropdown(
            options=list(IMPORTERS),
            value=kind,
            on_value=holding("kind", set_kind),
            description="kind",
            layout={"width": "360px"},
        )
        with ipyw.HBox():
            _box(source, holding("source", set_source), "a folder or file of runs", "path")
            start = lambda: work.start_import(held["kind"], held["source"])  # noqa: E731 - the button's action
            _button(work, "Import", "importing", start, icon="download", disabled=work.importing.value)
        _progress(work.import_progress.value, "import", "files")
    return section


@solara.component
def RecordSection(work: CorpusWork) -> Any:
    """Record a few episodes with a built-in policy, with a progress bar.

    Args:
        work: The page's work.

    Returns:
        The element.
    """
    policy, set_policy = solara.use_state("scripted")
    episodes, set_episodes = solara.use_state(3)
    max_steps, set_max_steps = solara.use_state(300)
    out, set_out = solara.use_state("")
    held, holding = use_held(policy=policy, episodes=episodes, max_steps=max_steps, out=out)
    with ipyw.VBox() as section:
        ipyw.HTML(value=SECTION.format("Record a few episodes"))
        with ipyw.HBox():
            ipyw.Dropdown(
                options=list(BUILTIN_POLICIES),
                value=policy,
                on_value=holding("policy", set_policy),
                description="policy",
            )
            ipyw.BoundedIntText(
                value=episodes,
                min=1,
                max=1000,
                on_value=holding("episodes", set_episodes),
                description="episodes",
                layout={"width": "200px"},
            )
            ipyw.BoundedIntText(
                value=max_steps,
                min=1,
                max=10000,
                on_value=holding("max_steps", set_max_steps),
                description="max steps",
                layout={"width": "200px"},
            )
        with ipyw.HBox():
            _box(out, holding("out", set_out), "new folder for the recorded corpus", "into")
            start = lambda: work.start_record(  # noqa: E731 - the button's action
                held["policy"], int(held["episodes"]), int(held["max_steps"]), held["out"]
            )
            _button(work, "Record", "recording", start, icon="circle", disabled=work.recording.value)
        _progress(work.record_progress.value, "record", "episodes")
    return section


@solara.component
def CorpusPage(session: AppSession, front: bool = True) -> solara.Element:
    """The Corpus page of a session: which corpus is open (from its ``state``), open a folder or
    the sample, import runs, record episodes, with progress and a report.

    Args:
        session: The browser tab's session.
        front: Whether the page is the one shown (unused: the page draws nothing costly).

    Returns:
        The page's element.
    """
    state = session.state.value
    work = solara.use_memo(lambda: CorpusWork(session), [])

    def say_opened() -> None:
        if state.corpus is not None:
            work.status.show(f"opened {state.corpus_label}: {len(state.corpus)} episodes", "ok")

    solara.use_effect(say_opened, [state.opened])
    current = (
        corpus_summary(state.corpus, state.corpus_label)
        if state.corpus is not None
        else "<div class='wb-app-corpus'>no corpus open</div>"
    )
    # An ipywidgets box, as the other pages' roots: the page's class on its own DOM node.
    with ipyw.VBox(_dom_classes=["wb-app-page-corpus"], layout={"width": "100%"}) as page:  # type: ignore[call-arg]
        ipyw.HTML(value=heading_html("Corpus", "the episodes every other page works on"))
        ipyw.HTML(value=current)
        solara.Column(children=[work.status.widget], gap="0px")
        OpenSection(work)
        ImportSection(work)
        RecordSection(work)
        ipyw.HTML(value=SECTION.format("Report"))
        ipyw.HTML(value=work.report.value)
    return page
