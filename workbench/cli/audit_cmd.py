"""``workbench audit``: exit 1 when a reward config shows a hacking sign on a corpus (a gate for CI and training scripts)."""

from __future__ import annotations

import argparse
import json
import sys
import threading
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.analysis.thresholds import (
    AUDIT_SCHEMA,
    COMPONENT_THRESHOLD,
    DEAD_ENTRIES,
    DEAD_ENTRY_SCOPES,
    DOMINANCE_THRESHOLD,
    FARMING_EPISODES,
)
from workbench.cli.common import CORPUS_HELP, read_named_configs
from workbench.cli.report_cmd import check_report_path, command_line
from workbench.cli.watch_cmd import add_source_arguments, polls_limit

if TYPE_CHECKING:
    from workbench.analysis.audit import Audit, AuditThresholds
    from workbench.data.episodes import Corpus
    from workbench.data.watch import WatchReport

EXAMPLE = f"""\
examples:
  workbench audit corpora/run --config configs/recommended.yaml
  workbench audit sample --config configs/upstream_shaped.yaml --json
  workbench audit corpora/live --config my.yaml --follow runs/rollouts --max-polls 600
  workbench audit corpora/run --config my.yaml --report audit.html   (a CI artifact; see docs/report.md)

  Checks per config: farming (farming-loop: an episode ran a loop the config pays for, such as
  mining a stone and placing it back, drinking whenever the counter allows or making the same
  tool again, more often than honest players do; repeats-outweigh-credits: an episode's repeated
  resource events paid more than its achievement credits), dominance (resource shaping past
  --dominance-threshold of a policy's reward, or one component past --component-threshold),
  dead entries (entries of the config that cannot change any return; --dead-entries), estimated
  counts (count shaping paid on episodes whose achievement counts are estimates).
  Flags and notes: a detector whose precision measured on the labelled benchmark's held-out
  split is below 0.95 (or, for farming, whose recall is below 0.90 or false-positive rate above
  2%) raises notes, printed as "note [...]" with the measured precision; notes never change the
  exit status. Each flag or note about an episode shows its evidence: the loop, its laps, its
  decisions, what it paid and a relative link to the dashboard's Replayer at that decision.
  --follow SOURCE appends SOURCE's new episodes into CORPUS as `workbench watch` does and audits
  after every poll that brought some: it exits 1 at the first flag, 0 after --max-polls or Ctrl-C.
  --report FILE.html also writes the page `workbench report` writes (this audit, its exit status
  in words, with --follow the over-optimisation watch), whatever the exit status.
  --json prints one document (schema {AUDIT_SCHEMA}: flags and notes per config, each with
  `measured` and `evidence`; see docs/live.md).

exit status: 0 clean (no flag; notes allowed), 1 a flag fired, 2 bad usage or unreadable input.
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``workbench audit`` to ``subparsers``."""
    parser = subparsers.add_parser(
        "audit",
        help="exit 1 when a config shows a hacking sign on a corpus (farming, dominance, dead entries)",
        description="Audit reward configs on a corpus for hacking signs; exit 1 when a flag fires "
        "(detectors below the measured-precision bar only raise notes).",
        epilog=EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("corpus", metavar="CORPUS", help=CORPUS_HELP + "; with --follow, the folder to append into")
    parser.add_argument(
        "--config", action="append", required=True, metavar="FILE", help="a config to audit (repeatable)"
    )
    parser.add_argument("--json", action="store_true", help="print the report as one JSON document")
    parser.add_argument(
        "--dominance-threshold",
        type=float,
        default=DOMINANCE_THRESHOLD,
        metavar="SHARE",
        help=f"flag a policy whose resource shaping passes this share of its reward (default {DOMINANCE_THRESHOLD})",
    )
    parser.add_argument(
        "--component-threshold",
        type=float,
        default=COMPONENT_THRESHOLD,
        metavar="SHARE",
        help=f"flag a policy one component passes this share of (default {COMPONENT_THRESHOLD})",
    )
    parser.add_argument(
        "--farming-episodes",
        type=int,
        default=FARMING_EPISODES,
        metavar="N",
        help=f"fire farming when at least N episodes farm (default {FARMING_EPISODES})",
    )
    parser.add_argument(
        "--dead-entries",
        choices=DEAD_ENTRY_SCOPES,
        default=DEAD_ENTRIES,
        help="written: dead entries the config itself writes (default); all: also the task app's own "
        "table entries and weights of achievements not unlocked here; off: none",
    )
    parser.add_argument(
        "--report", type=Path, metavar="FILE", help="also write the HTML report (`workbench report`'s page) here"
    )
    parser.add_argument("--overwrite", action="store_true", help="replace an existing --report file")
    parser.add_argument("--follow", metavar="SOURCE", help="keep auditing while SOURCE's new episodes land in CORPUS")
    add_source_arguments(parser, positional=False)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Audit (once, or after every poll with --follow); 0 clean, 1 a flag fired."""
    from workbench.analysis.audit import AuditThresholds, audit  # the analyses: imported when a command runs
    from workbench.data.opening import open_corpus

    configs = read_named_configs(args.config)
    thresholds = AuditThresholds(
        dominance=args.dominance_threshold,
        component=args.component_threshold,
        farming_episodes=args.farming_episodes,
        dead_entries=args.dead_entries,
    ).checked()
    if args.report is not None:
        check_report_path(args.report, overwrite=args.overwrite, option="--report")
    if args.follow is None:
        corpus = open_corpus(args.corpus)
        found = _with_notes(audit(corpus, configs, thresholds, name=args.corpus), corpus, configs)
        _write_report(args, corpus, configs, found, live=False)
        _print(found, args.json)
        return 0 if found.clean else 1
    return _follow(args, configs, thresholds)


def _follow(args: argparse.Namespace, configs: dict[str, Any], thresholds: AuditThresholds) -> int:
    from workbench.analysis.audit import audit, empty_audit
    from workbench.data.episodes import Corpus
    from workbench.data.storage import holds_episodes, load_corpus
    from workbench.data.watch import Watcher, open_source
    from workbench.util.processes import signals_set

    limit = polls_limit(args)
    source = open_source(args.follow, args.kind)
    into = Path(args.corpus)
    held = load_corpus(into) if holds_episodes(into) else Corpus()
    state: dict[str, Any] = {"corpus": held, "audit": None, "polls": 0, "appended": 0, "problems": []}

    def report(found: WatchReport) -> bool:
        state["polls"] += 1
        state["appended"] += len(found.appended)
        state["problems"] += [str(issue) for issue in found.problems]
        for issue in found.problems:
            print(f"problem: {issue}", file=sys.stderr, flush=True)
        for note in found.notes:
            print(note, file=sys.stderr, flush=True)
        if len(found.appended):
            state["corpus"] = Corpus.concat([state["corpus"], found.appended])
        if len(found.appended) or (state["audit"] is None and len(state["corpus"])):
            state["audit"] = audit(state["corpus"], configs, thresholds, name=str(into))
            if not args.json:
                print(_summary_line(state["audit"]), flush=True)
            return not state["audit"].clean
        return False

    with Watcher(source, into) as watcher:
        stop = threading.Event()
        try:  # Ctrl-C (or SIGTERM) ends the run after the poll under way
            with signals_set(stop):
                watcher.run(interval=args.interval, max_polls=limit, on_report=report, stop=stop)
        except KeyboardInterrupt:
            pass
    found = state["audit"] or empty_audit(configs, thresholds, name=str(into))
    follow = {"source": str(source.path), "kind": source.kind, "polls": state["polls"]}
    follow |= {"appended": state["appended"], "problems": state["problems"]}
    found = _with_notes(replace(found, extra={"follow": follow}), state["corpus"], configs)
    _write_report(args, state["corpus"], configs, found, live=True)
    _print(found, args.json)
    return 0 if found.clean else 1


def _write_report(
    args: argparse.Namespace, corpus: Corpus, configs: dict[str, Any], found: Audit, *, live: bool
) -> None:
    """Write ``--report`` (when given) showing ``found`` as it is; says so on stderr, so --json stays one document."""
    if args.report is None:
        return
    if not len(corpus):
        print(f"report: {args.report} not written: the corpus holds no episodes yet", file=sys.stderr)
        return
    from workbench.views.report import build_report, write_report  # imports matplotlib: only when asked for

    document = build_report(
        corpus,
        configs,
        corpus_name=str(args.corpus),
        command=command_line(args),
        live=live,
        thresholds=found.thresholds,
        found=found,
    )
    write_report(args.report, document, overwrite=args.overwrite)
    print(f"wrote {args.report}", file=sys.stderr)


def _with_notes(found: Audit, corpus: Corpus, configs: dict[str, Any]) -> Audit:
    """``found`` with its ``notes`` (JSON) / ``note:`` lines (text): today, that the synth-ai
    which produced some episodes ignored a per_achievement config's weights. Notes never change
    the exit status."""
    from workbench.data.importers.producers import weights_ignored_line

    ignored = weights_ignored_line(
        corpus.episode_metadata(),
        {name: config.to_dict() for name, config in configs.items()},
    )
    if not ignored:
        return found
    return replace(found, extra={**found.extra, "notes": [*found.extra.get("notes", []), ignored]})


def _summary_line(found: Audit) -> str:
    from workbench.analysis.audit import SECTIONS

    counts = found.flags.groupby("section").size().to_dict() if not found.flags.empty else {}
    parts = ", ".join(f"{section} {counts.get(section, 0)}" for section in SECTIONS)
    verdict = "clean" if found.clean else "FLAGGED"
    notes = f"; {len(found.notes)} note(s)" if len(found.notes) else ""
    return f"audit: {found.episodes} episode(s), {found.decisions} decision(s): {verdict} ({parts}){notes}"


def _print(found: Audit, as_json: bool) -> None:
    if as_json:
        print(json.dumps(found.to_json(), indent=1))
        return
    print(_summary_line(found))
    for config in found.configs:
        rows = found.flags[found.flags["config"] == config]
        notes = found.notes[found.notes["config"] == config]
        counted = f"{len(rows)} flag(s)" if len(rows) else "clean"
        print(
            f"{config}: {counted}"
            + (f", {len(notes)} note(s) that do not change the exit status" if len(notes) else "")
        )
        for row in rows.itertuples(index=False):
            print(f"  [{row.section}] {row.code} {row.subject}: {row.why}")
            _print_evidence(row, config)
        for row in notes.itertuples(index=False):
            print(f"  note [{row.section}] {row.code} {row.subject}: {row.why}")
            _print_evidence(row, config)
    for note in found.extra.get("notes", []):
        print(f"note: {note}")


def _print_evidence(row: Any, config: str) -> None:
    """The lines under a flag or note: its measured precision and what it saw."""
    from workbench.analysis.detector_accuracy import gating, measured, shortfall
    from workbench.analysis.diagnostics.loops import evidence_text

    seen = measured(row.code, config)
    if seen is not None:
        precision = "never fired there" if seen["precision"] is None else f"precision {seen['precision']:.2f}"
        bar = "" if gating(row.code) else f"; below the bar on all configs pooled ({shortfall(row.code)}), so a note"
        rates = f"{precision}, recall {seen['recall']:.2f}, false-positive rate {seen['fpr']:.2f}"
        print(f"      measured on the benchmark ({seen['config']}): {rates}{bar}")
    if row.evidence is not None:
        print(f"      evidence: {evidence_text(row.evidence)}")
