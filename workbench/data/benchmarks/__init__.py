"""A labelled Crafter reward-hacking benchmark: hackers' and honest players' episodes, with the loops' spans.

``make_benchmark(out)`` records every ``ROSTER`` policy (``workbench benchmark make``);
``load_benchmark()`` reads the small shipped one (or a made one) with a labels table: per episode
its label (exploit / honest, from how its policy is built), the split (tune / held_out, by
policy and world) and the ``[start, stop)`` decision spans where the loop ran.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.data.benchmarks.labels import EXPLOIT, HELD_OUT, HONEST, TUNE, honest_episodes, shipped_benchmark_path
from workbench.util.lazy_names import lazy_names

if TYPE_CHECKING:  # what the names below resolve to, for type checkers and readers
    from workbench.data.benchmarks.corpus import LABEL_COLUMNS, Benchmark, load_benchmark, make_benchmark
    from workbench.data.benchmarks.roster import ROSTER, BenchmarkPolicy, Entry

#: Each name and its module, imported on first use (PEP 562): the roster's players import
#: Crafter's game, which the audit (honest play's episodes: ``honest_episodes``) does not need.
_HOMES = {
    "LABEL_COLUMNS": "workbench.data.benchmarks.corpus",
    "Benchmark": "workbench.data.benchmarks.corpus",
    "load_benchmark": "workbench.data.benchmarks.corpus",
    "make_benchmark": "workbench.data.benchmarks.corpus",
    "ROSTER": "workbench.data.benchmarks.roster",
    "BenchmarkPolicy": "workbench.data.benchmarks.roster",
    "Entry": "workbench.data.benchmarks.roster",
}

__all__ = [
    "EXPLOIT",
    "HELD_OUT",
    "HONEST",
    "LABEL_COLUMNS",
    "ROSTER",
    "TUNE",
    "Benchmark",
    "BenchmarkPolicy",
    "Entry",
    "honest_episodes",
    "load_benchmark",
    "make_benchmark",
    "shipped_benchmark_path",
]


__getattr__ = lazy_names(__name__, _HOMES)
