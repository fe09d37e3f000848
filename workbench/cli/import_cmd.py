"""``workbench import``: turn crafter.Recorder files or task-app rollouts into a corpus folder."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from functools import partial
from pathlib import Path

from workbench.cli.errors import UsageError
from workbench.core.config import RewardConfig
from workbench.data.episodes import Corpus
from workbench.data.importers import ImportResult, import_crafter_recorder, import_rollouts, import_traces
from workbench.data.opening import index_errors_named
from workbench.data.storage import read_index, remove_empty_corpus, save_corpus
from workbench.data.storage.layout import MARKER
from workbench.errors import TargetExistsError
from workbench.util.atomic import write_errors_named

EXAMPLE = """\
examples:
  workbench import recorder logdir/ --out corpora/ppo        # crafter.Recorder's *.npz files
  workbench import rollouts rollouts.jsonl --out corpora/llm  # task-app rollout responses
  workbench import traces traces/v3/synth_ai.db --into corpora/llm --config my_run.toml
                                                              # synth-ai's trace database

  Episodes are added to --out (a new or existing corpus folder); an id already there is an error
  unless --overwrite. Bad files or lines are reported (file, line/step, problem) and skipped; the
  rest is saved. A save that fails (disk full, unwritable folder) leaves --out as it was.
  A trace database imports incrementally: sessions --out already holds are skipped (unless
  --overwrite), and sessions still running are left for a later import.

exit status: 0 everything imported, 1 some input could not be imported, 2 bad usage.
"""

SOURCES: dict[str, tuple[Callable[..., ImportResult], str]] = {
    "recorder": (import_crafter_recorder, "a folder (or one .npz) written by crafter.Recorder"),
    "rollouts": (import_rollouts, "task-app rollout responses: a .json, a .jsonl or a folder of them"),
    "traces": (import_traces, "a synth-ai trace database (task-app serve --trace): its finished sessions"),
}


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``workbench import recorder|rollouts`` to ``subparsers``."""
    parser = subparsers.add_parser(
        "import",
        help="import episodes recorded elsewhere (crafter.Recorder files, task-app rollouts)",
        description="Import episodes recorded elsewhere into a workbench corpus folder.",
        epilog=EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sources = parser.add_subparsers(dest="source", metavar="SOURCE", required=True)
    for name, (importer, what) in SOURCES.items():
        sub = sources.add_parser(
            name,
            help=what,
            description=f"Import {what}.",
            epilog=EXAMPLE,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        sub.add_argument("path", metavar="PATH", help=what)
        sub.add_argument("--out", "--into", dest="out", required=True, metavar="DIR", help="corpus folder to save into")
        sub.add_argument(
            "--overwrite", action="store_true", help="replace episodes --out already holds under the same ids"
        )
        sub.add_argument("--quiet", action="store_true", help="no progress bar")
        if name != "recorder":
            sub.add_argument(
                "--producer",
                metavar="synth-ai==X",
                help="the synth-ai release that produced the input (0.2.14, or 0.2.16 ... 0.2.24); "
                "default: told from its shape",
            )
        if name == "traces":
            sub.add_argument(
                "--config",
                metavar="FILE",
                help="the step_rewards config the rollouts ran with (the database does not hold it); "
                "kept in each episode's metadata",
            )
        sub.set_defaults(func=partial(run, importer))


def run(importer: Callable[..., ImportResult], args: argparse.Namespace) -> int:
    """Import with ``importer``, save the good episodes, print the report; exit status 1 when some input failed."""
    if not Path(args.path).exists():
        raise UsageError(f"{args.path}: no such file or folder")
    options = _trace_options(importer, args)
    if getattr(args, "producer", None) is not None:  # "" too: refused by name, never ignored
        options["producer"] = args.producer
    result = importer(args.path, progress=not args.quiet, **options)
    if len(result.corpus):
        save_all_or_nothing(result.corpus, Path(args.out), overwrite=args.overwrite)
    print(result)
    if len(result.corpus):
        print(f"saved {len(result.corpus)} episode(s) to {args.out}")
    return 1 if result.errors else 0


def _trace_options(importer: Callable[..., ImportResult], args: argparse.Namespace) -> dict:
    """The trace import's options: ``--config`` read as a step_rewards table, and the ids the
    corpus already holds skipped (importing the same database again adds only new sessions),
    unless ``--overwrite`` asks to read them all again (e.g. with another ``--config``)."""
    if importer is not import_traces:
        return {}
    options: dict = {"config": RewardConfig.from_file(args.config).to_dict() if args.config else None}
    out = Path(args.out)
    if (out / MARKER).exists() and not args.overwrite:
        with index_errors_named(out):
            options["skip"] = {row["episode"] for row in read_index(out)}
    return options


def save_all_or_nothing(corpus: Corpus, out: Path, *, overwrite: bool) -> None:
    """Save ``corpus`` into ``out`` as one part (it commits whole or not at all: the part's
    episodes table is written last); if the save fails, its part is removed, and so is ``out``
    when this save made it and nothing was committed there; then raise. Another writer's files
    are never touched.

    Raises ``TargetExistsError`` for an id ``out`` holds (without ``overwrite``) and
    ``OutputError`` naming ``out`` when it cannot be written (unwritable, disk full).
    """
    if (out / MARKER).exists():  # read first: a broken index is named before anything is written
        with index_errors_named(out):
            held = {row["episode"] for row in read_index(out)}
        clashes = [episode_id for episode_id in corpus.ids if episode_id in held]
        if clashes and not overwrite:
            raise TargetExistsError(f"{out}: already holds episode(s) {clashes[:5]}; pass --overwrite to replace them")
    existed = out.exists()
    try:
        with write_errors_named(out, "cannot save the imported episodes"):
            save_corpus(corpus, out, overwrite=overwrite)  # a clash with a saved id: exit 2
    except BaseException:
        # The save removed its own part; what is left to undo is a folder it made, and only
        # while no writer has committed anything there (never another writer's files).
        if not existed:
            remove_empty_corpus(out)
        raise
