"""The Corpus page: open, import or record a corpus.

Open a corpus folder or the sample, import runs recorded elsewhere, record a few episodes with a
policy; each with progress and a report."""

from __future__ import annotations

import html
from collections.abc import Callable
from pathlib import Path

import ipywidgets as w

from workbench.data.episodes import Corpus
from workbench.data.importers import ImportResult, import_crafter_recorder, import_rollouts, import_traces
from workbench.data.policies import BUILTIN_POLICIES
from workbench.data.recording import RecordReport, record
from workbench.errors import RecordingError
from workbench.views.app.common import Background, Status, guarded, heading, in_background
from workbench.views.app.session import AppSession
from workbench.views.app.state import AppState
from workbench.views.widgets.common import counts_note, producers_note

#: What can be imported: label -> (importer, the files it reads in a folder).
IMPORTERS: dict[str, tuple[Callable[..., ImportResult], tuple[str, ...]]] = {
    "crafter.Recorder runs (.npz)": (import_crafter_recorder, ("*.npz",)),
    "task-app rollouts (.json, .jsonl)": (import_rollouts, ("*.json", "*.jsonl")),
    "synth-ai trace database (.db)": (import_traces, ("*.db",)),
}
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


class CorpusPage:
    """The Corpus page (``widget``) of a session."""

    def __init__(self, session: AppSession) -> None:
        self.session = session
        self.status = Status()
        self.current = w.HTML("<div class='wb-app-corpus'>no corpus open</div>")
        self.folder = w.Text(placeholder="/path/to/corpus-folder", description="folder", layout=w.Layout(width=WIDE))
        self.open_button = w.Button(description="Open folder", icon="folder-open")
        self.sample_button = w.Button(description="Open the sample", icon="archive", layout=w.Layout(width="180px"))
        self.open_button.on_click(guarded(self.status, "opening the folder", lambda: self.open_spec(self.folder.value)))
        self.sample_button.on_click(guarded(self.status, "opening the sample", lambda: self.open_spec("sample")))
        self.import_kind = w.Dropdown(options=list(IMPORTERS), description="kind", layout=w.Layout(width="360px"))
        self.import_source = w.Text(
            placeholder="a folder or file of runs", description="path", layout=w.Layout(width=WIDE)
        )
        self.import_button = w.Button(description="Import", icon="download")
        self.import_button.on_click(guarded(self.status, "importing", self.start_import))
        self.import_progress = w.IntProgress(
            value=0, min=0, max=1, description="import", layout=w.Layout(width="420px")
        )
        self.report = w.HTML()
        self.policy = w.Dropdown(options=list(BUILTIN_POLICIES), value="scripted", description="policy")
        self.episodes = w.BoundedIntText(
            value=3, min=1, max=1000, description="episodes", layout=w.Layout(width="200px")
        )
        self.max_steps = w.BoundedIntText(
            value=300, min=1, max=10000, description="max steps", layout=w.Layout(width="200px")
        )
        self.record_out = w.Text(
            placeholder="new folder for the recorded corpus", description="into", layout=w.Layout(width=WIDE)
        )
        self.record_button = w.Button(description="Record", icon="circle")
        self.record_button.on_click(guarded(self.status, "recording", self.start_record))
        self.record_progress = w.IntProgress(
            value=0, min=0, max=1, description="record", layout=w.Layout(width="420px")
        )
        section = "<h4 style='margin:14px 0 4px 0'>{}</h4>".format
        self.widget = w.VBox(
            [
                heading("Corpus", "the episodes every other page works on"),
                self.current,
                self.status.widget,
                w.HTML(section("Open")),
                w.HBox([self.folder, self.open_button]),
                self.sample_button,
                w.HTML(section("Import runs recorded elsewhere")),
                self.import_kind,
                w.HBox([self.import_source, self.import_button]),
                self.import_progress,
                w.HTML(section("Record a few episodes")),
                w.HBox([self.policy, self.episodes, self.max_steps]),
                w.HBox([self.record_out, self.record_button]),
                self.record_progress,
                w.HTML(section("Report")),
                self.report,
            ]
        )
        self.widget.add_class("wb-app-page-corpus")
        if session.corpus is not None:  # opened before the page was made (the corpus the app was given)
            self.opened(session.corpus, session.corpus_label)
        session.state.subscribe_change(self._state_changed)

    def _state_changed(self, new: AppState, old: AppState) -> None:
        if new.opened != old.opened:  # a corpus opened (again)
            self.opened(new.corpus, new.corpus_label)

    def open_spec(self, spec: str) -> None:
        """Open the corpus ``spec`` names (a folder, or ``sample``) as the session's corpus.

        Args:
            spec: A corpus folder or ``sample``.

        Raises:
            WorkbenchError: No corpus there.
        """
        self.status.show(f"opening {spec.strip()} ...", "info")
        self.session.open_spec(spec)

    def opened(self, corpus: Corpus | None, label: str) -> None:
        """Say which corpus the session opened (called each time it opens one).

        Args:
            corpus: The corpus opened.
            label: What it is called in the page.
        """
        if corpus is not None:
            self.current.value = corpus_summary(corpus, label)
            self.status.show(f"opened {label}: {len(corpus)} episodes", "ok")

    def start_import(self) -> Background:
        """Import the runs at the path box in the background (returns its handle); the imported
        episodes become the session's corpus and the report lists every problem.

        Returns:
            The import's handle (``join`` waits for it).

        Raises:
            RecordingError: The path box is empty.
        """
        kind, source = self.import_kind.value, self.import_source.value
        if not source.strip():
            raise RecordingError("give the folder or file to import in the path box")
        self.status.show(f"importing {source} ...", "info")

        def on_file(done: int, total: int) -> None:
            self.import_progress.max, self.import_progress.value = max(total, 1), done
            self.import_progress.description = f"{done}/{total} files"

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

        return in_background(
            self.status,
            f"importing {source}",
            lambda: import_with_progress(kind, source, on_file),
            done,
            busy=[self.import_button],
        )

    def start_record(self) -> Background:
        """Record the chosen number of episodes into a new folder in the background (returns its
        handle), one at a time (``record(..., resume=True)`` adds the next), then open them.

        Returns:
            The recording's handle (``join`` waits for it).
        """
        out = self.record_out.value.strip()
        if not out:
            raise RecordingError("give a new folder to record into in the 'into' box")
        policy, episodes, max_steps = self.policy.value, int(self.episodes.value), int(self.max_steps.value)
        self.record_progress.max, self.record_progress.value = episodes, 0
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
                self.record_progress.value = n
                self.record_progress.description = f"{n}/{episodes} episodes"
            return str(total)

        def done(text: str) -> None:
            self.report.value = f"<pre class='wb-app-report'>{html.escape(text)}</pre>"
            self.open_spec(out)

        return in_background(self.status, f"recording into {out}", work, done, busy=[self.record_button])
