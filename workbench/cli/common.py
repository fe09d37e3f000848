"""What the command modules share: reading named configs, writing tables, the shared help texts.

A config named on the command line is read here (a corpus through ``workbench.data.opening``),
and result tables are written atomically."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.cli.errors import UsageError
from workbench.core.config import RewardConfig
from workbench.core.named_configs import NAMED_CONFIGS, load_config
from workbench.util.atomic import atomic_path, write_errors_named

if TYPE_CHECKING:
    import pandas as pd

#: What a CORPUS argument may be, for every command's --help.
CORPUS_HELP = (
    "a corpus folder (from `workbench record` / `workbench import`), or the word `sample` "
    "for the sample corpus shipped with the package (write ./sample for a folder of that name)"
)
#: The named configs a CONFIG argument may be instead of a file, for every command's --help.
NAMED_HELP = "a named config: " + ", ".join(f"{n.name} ({n.description})" for n in NAMED_CONFIGS.values())
#: Suffixes a table output may have.
OUT_SUFFIXES = (".parquet", ".csv")


def read_config(spec: str) -> RewardConfig:
    """The config a CONFIG argument names.

    Args:
        spec: a config file (our YAML or a synth-ai TOML) or a named config (``NAMED_HELP``).

    Returns:
        The config.

    Raises:
        ConfigError: naming the file and key when it cannot be read, or an unknown name.
    """
    return load_config(spec)


def read_named_configs(paths: list[str]) -> dict[str, RewardConfig]:
    """Each config of ``paths`` by name: its file stem, or, when two files share a stem
    (``a/reward.yaml``, ``b/reward.yaml``), each of those by its path as given, so every config
    given is kept and told apart.

    Args:
        paths: CONFIG arguments (files or named configs), in order.

    Returns:
        name -> config, in the order given.

    Raises:
        UsageError: one file is given twice.
        ConfigError: naming a file that cannot be read.
    """
    seen: dict[Path, str] = {}
    for path in paths:
        real = Path(path).resolve()
        if real in seen:
            raise UsageError(f"--config {path}: given twice (also as {seen[real]}); give each config once")
        seen[real] = path
    stems = [Path(path).stem for path in paths]
    names = [stem if stems.count(stem) == 1 else str(path) for stem, path in zip(stems, paths)]
    return {name: read_config(path) for name, path in zip(names, paths)}


def output_paths(out: Path, tables: tuple[str, ...], *, overwrite: bool) -> dict[str, Path]:
    """Where ``--out FILE.ext`` puts each table (``FILE.<table>.ext``). Raises ``UsageError`` for
    a bad suffix, or when one exists and ``overwrite`` is not set (check before the work)."""
    if out.suffix not in OUT_SUFFIXES:
        raise UsageError(f"{out}: --out must end in {' or '.join(OUT_SUFFIXES)}")
    paths = {table: out.with_name(f"{out.stem}.{table}{out.suffix}") for table in tables}
    existing = [str(p) for p in paths.values() if p.exists()]
    if existing and not overwrite:
        raise UsageError(f"{', '.join(existing)}: already exist(s); pass --overwrite to replace")
    return paths


def write_tables(tables: dict[str, pd.DataFrame], out: Path, *, overwrite: bool) -> list[Path]:
    """Write every table atomically to ``FILE.<table>.ext``; returns the paths. If one target
    exists (without ``overwrite``) none is written; ``OutputError`` names ``out`` when the
    folder cannot be written (nothing half-written is left)."""
    paths = output_paths(out, tuple(tables), overwrite=overwrite)
    # Every file is complete before any is renamed into place (the ExitStack's exit).
    with write_errors_named(out), ExitStack() as stack:
        out.parent.mkdir(parents=True, exist_ok=True)
        for table, path in paths.items():
            tmp = stack.enter_context(atomic_path(path, overwrite=overwrite))
            if path.suffix == ".parquet":
                tables[table].to_parquet(tmp, index=False)
            else:
                _csv_ready(tables[table]).to_csv(tmp, index=False)
    return list(paths.values())


def _csv_ready(table: pd.DataFrame) -> pd.DataFrame:
    """Name-list columns as space-separated strings (CSV has no lists)."""
    lists = [c for c in table.columns if table[c].dtype == object and table[c].map(lambda v: isinstance(v, list)).all()]
    return table.assign(**{c: table[c].map(" ".join) for c in lists})


#: The --cluster option's help, shared by record, score and search.
CLUSTER_HELP = (
    "run on a Dask cluster: local:N starts N worker processes on this machine (dashboard link printed), "
    "tcp://HOST:8786 uses a running `dask scheduler` (see docs/cluster.md)"
)


def add_cluster_argument(parser: argparse.ArgumentParser) -> None:
    """Add ``--cluster local:N|tcp://HOST:PORT`` to a command."""
    parser.add_argument("--cluster", metavar="SPEC", help=CLUSTER_HELP)


def cluster_client(spec: str | None) -> AbstractContextManager[Any]:
    """A Dask client on ``spec``'s cluster for the ``with`` block, or None without ``--cluster``.
    Raises ``ClusterError`` for a bad spec or a scheduler that does not answer."""
    if spec is None:
        return nullcontext(None)
    from workbench.cluster import connect, parse_cluster  # imports dask: only when asked for

    parse_cluster(spec)  # a bad spec fails before anything starts
    return connect(spec)


@contextmanager
def recording_scheduler(spec: str | None, workers: int) -> Iterator[Any]:
    """For the ``with`` block: the scheduler that records episodes on ``--cluster`` (a
    ``DaskScheduler`` on its client), or None without ``--cluster`` (local worker processes).

    Raises:
        UsageError: ``--workers`` above 1 given with ``--cluster``.
        ClusterError: a bad spec or a scheduler that does not answer.
    """
    if spec and workers > 1:
        raise UsageError("--workers and --cluster: pick one (a cluster's workers are its own)")
    with cluster_client(spec) as client:
        if client is None:
            yield None
            return
        from workbench.cluster import DaskScheduler  # imports dask: only when asked for

        yield DaskScheduler(client)
