"""A labelled Crafter reward-hacking benchmark: hackers' and honest players' episodes, with the loops' spans.

``make_benchmark(out)`` records every ``ROSTER`` policy (``workbench benchmark make``);
``load_benchmark()`` reads the small shipped one (or a made one) with a labels table: per episode
its label (exploit / honest, from how its policy is built), the split (tune / held_out, by
policy and world) and the ``[start, stop)`` decision spans where the loop ran.
"""

from __future__ import annotations

from workbench.data.benchmarks.corpus import (
    LABEL_COLUMNS,
    Benchmark,
    load_benchmark,
    make_benchmark,
    shipped_benchmark_path,
)
from workbench.data.benchmarks.roster import EXPLOIT, HELD_OUT, HONEST, ROSTER, TUNE, BenchmarkPolicy, Entry

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
    "load_benchmark",
    "make_benchmark",
    "shipped_benchmark_path",
]
