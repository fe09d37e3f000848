"""Every analysis on a corpus of ~1M decisions opened from disk, and the command line's start-up.

    .venv/bin/python benchmarks/bench_analyses.py                        # builds ~1M decisions in a temp folder
    .venv/bin/python benchmarks/bench_analyses.py --corpus /tmp/c1m      # reuse (or build once into) a folder
    .venv/bin/python benchmarks/bench_analyses.py --decisions 100000 --repeats 3
    .venv/bin/python benchmarks/bench_analyses.py --corpus /tmp/c1m --baseline ../main-checkout   # before/after: another checkout, e.g. a git worktree of main

The corpus repeats the sample corpus's real recorded episodes (scripted, farmer, random) under new
ids (``bench_corpus.repeated_corpus``), saved with ``save_corpus`` (events tables included).
Each analysis runs in fresh processes (``--repeats`` of them; medians), one core (BLAS and OpenMP
held to one thread), and each process measures, after its imports:

- the reference: opening the corpus (``load_corpus``) and its first score (``score``), the
  columnar core every analysis builds on;
- opening the corpus again, then the analysis as its command runs it (default options, the
  ``upstream_shaped`` config; ``compare --distance`` against ``recommended``): ``audit`` (every
  detector, ``farming-loop`` included), ``diagnose``, ``certify``, ``advantages`` (the learner's
  view), each reward distance of ``workbench.analysis.distances.DISTANCES``, ``overoptimisation``;
- with ``--baseline DIR``, the same with the package of another checkout (e.g. main's), in the
  same run;
- wall and CPU time (``time.process_time``): the machine is shared, and other processes stretch
  wall times much more than CPU times. The target is 1 s on one core: the CPU column.

Start-up: ``workbench --help`` and ``workbench config lint`` in fresh processes (wall and CPU,
medians of ``--starts``), against a bare ``python -c pass`` in the same run. The load (``os.getloadavg``)
is printed before and after; the last line is machine-readable (``key=value`` pairs).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CONFIGS = REPO / "configs"
#: One thread for every numerical library: "on one core".
ONE_CORE = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def analyses() -> dict[str, str]:
    """Each analysis by its name in the table: the command it stands for."""
    from workbench.analysis.distances import DISTANCES

    found = {
        "audit": "workbench audit",
        "diagnose": "workbench diagnose",
        "certify": "workbench certify",
        "advantages": "workbench advantages",
    }
    found |= {f"compare --distance {kind}": "workbench compare --distance" for kind in DISTANCES}
    found["overoptimisation"] = "workbench overoptimisation"
    return found


def run_analysis(name: str, corpus: object) -> None:
    """Run the analysis ``name`` on ``corpus`` as its command does (defaults)."""
    from workbench.analysis.audit import audit
    from workbench.analysis.diagnostics import diagnose
    from workbench.analysis.distances import reward_distance
    from workbench.analysis.learner import learner_view
    from workbench.analysis.overoptimisation import overoptimisation_watch
    from workbench.analysis.shaping import certify
    from workbench.core.named_configs import load_config

    shaped = load_config(str(CONFIGS / "upstream_shaped.yaml"))
    if name == "audit":
        audit(corpus, {"upstream_shaped": shaped})  # type: ignore[arg-type]
    elif name == "diagnose":
        diagnose(corpus, shaped)  # type: ignore[arg-type]
    elif name == "certify":
        certify(corpus, shaped)  # type: ignore[arg-type]
    elif name == "advantages":
        learner_view(corpus, shaped)  # type: ignore[arg-type]
    elif name.startswith("compare --distance "):
        other = load_config(str(CONFIGS / "recommended.yaml"))
        reward_distance(corpus, shaped, other, name.rsplit(" ", 1)[1])  # type: ignore[arg-type]
    elif name == "overoptimisation":
        overoptimisation_watch(corpus, {"upstream_shaped": shaped})  # type: ignore[arg-type]
    else:
        raise SystemExit(f"unknown analysis {name!r}")


def child(root: str, name: str) -> dict[str, float]:
    """In a fresh process: the reference (open + first score) and ``name`` (open + analysis)."""
    from workbench.core.named_configs import load_config
    from workbench.data.storage import load_corpus
    from workbench.scoring import score

    shaped = load_config(str(CONFIGS / "upstream_shaped.yaml"))
    from workbench.errors import WorkbenchError

    try:  # warm-up: imports and caches (an analysis may need more episodes than the sample's 10)
        run_analysis(name, load_corpus(REPO / "workbench" / "data" / "shipped" / "sample"))
    except WorkbenchError:
        pass
    wall, cpu = time.perf_counter(), time.process_time()
    corpus = load_corpus(root)
    score(corpus, shaped)
    reference = (time.perf_counter() - wall, time.process_time() - cpu)
    wall, cpu = time.perf_counter(), time.process_time()
    corpus = load_corpus(root)
    opened = (time.perf_counter() - wall, time.process_time() - cpu)
    run_analysis(name, corpus)
    done = (time.perf_counter() - wall, time.process_time() - cpu)
    return {
        "decisions": corpus.n_decisions,
        "reference_wall": reference[0],
        "reference_cpu": reference[1],
        "open_wall": opened[0],
        "open_cpu": opened[1],
        "wall": done[0],
        "cpu": done[1],
    }


def build(root: Path, decisions: int) -> None:
    """Save ~``decisions`` decisions of the sample's episodes repeated into ``root``."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    from bench_corpus import repeated_corpus

    from workbench.data.storage import save_corpus

    started = time.perf_counter()
    corpus = repeated_corpus(decisions, frames=False)
    save_corpus(corpus, root)
    print(
        f"built {root}: {len(corpus):,} episodes, {corpus.n_decisions:,} decisions in {time.perf_counter() - started:.1f} s"
    )


def measure(root: Path, name: str, repeats: int, code: Path = REPO) -> dict[str, float]:
    """Medians over ``repeats`` fresh processes of ``child(root, name)``, the package imported
    from the checkout ``code``."""
    runs = []
    env = {**os.environ, **ONE_CORE, "PYTHONPATH": str(code)}
    for _ in range(repeats):
        done = subprocess.run(
            [sys.executable, __file__, "--child", name, "--corpus", str(root)], capture_output=True, text=True, env=env
        )
        if done.returncode:
            raise SystemExit(f"{name}: {done.stderr[-3000:]}")
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return {key: statistics.median(run[key] for run in runs) for key in runs[0]}


def start_up(starts: int) -> dict[str, tuple[float, float]]:
    """Median (wall, CPU) seconds of fresh processes: bare python, ``--help``, ``config lint``
    (CPU: the child's user + system time, from ``RUSAGE_CHILDREN``)."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "workbench --help": [sys.executable, "-m", "workbench", "--help"],
        "workbench config lint": [
            sys.executable,
            "-m",
            "workbench",
            "config",
            "lint",
            str(CONFIGS / "recommended.yaml"),
        ],
    }
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    for _ in range(starts):  # in turn, so a drift of the machine's speed touches each alike
        for name, command in commands.items():
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            started = time.perf_counter()
            subprocess.run(command, capture_output=True, env=env, check=True, cwd=REPO)
            wall = time.perf_counter() - started
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
            times[name].append((wall, cpu))
    return {
        name: (statistics.median(w for w, _ in values), statistics.median(c for _, c in values))
        for name, values in times.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--decisions", type=int, default=1_000_000, help="corpus size to build (default 1M)")
    parser.add_argument("--corpus", help="a corpus folder to use (built there first when missing)")
    parser.add_argument("--repeats", type=int, default=3, help="fresh processes per analysis (default 3)")
    parser.add_argument("--starts", type=int, default=10, help="fresh processes per start-up command (default 10)")
    parser.add_argument("--only", nargs="*", help="only these analyses (names as in the table)")
    parser.add_argument(
        "--baseline", type=Path, help="also measure the package of this checkout (e.g. main's), in turn with this one"
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.corpus, args.child)))
        return
    print(f"load before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory(prefix="bench-analyses-") as scratch:
        root = Path(args.corpus) if args.corpus else Path(scratch) / "corpus"
        if not (root / "corpus.json").exists():
            build(root, args.decisions)
        names = [name for name in analyses() if not args.only or name in args.only]
        print(f"\neach analysis from disk, median of {args.repeats} fresh processes, one core:")
        header = f"  {'analysis':30} {'decisions':>10} {'wall s':>7} {'cpu s':>6} {'of which open':>13} {'x ref':>6}"
        print(header + "   (ref: open + first score)")
        summary: dict[str, float] = {}
        for name in names:
            found = measure(root, name, args.repeats)
            ratio = found["cpu"] / found["reference_cpu"]
            line = (
                f"  {name:30} {int(found['decisions']):>10,} {found['wall']:>7.2f} {found['cpu']:>6.2f} "
                f"{found['open_cpu']:>13.2f} {ratio:>6.1f}   (ref {found['reference_wall']:.2f} s wall, "
                f"{found['reference_cpu']:.2f} s cpu)"
            )
            if args.baseline is not None:
                before = measure(root, name, args.repeats, args.baseline)
                line += f"   baseline {before['wall']:.2f} s wall, {before['cpu']:.2f} s cpu"
                summary[name.replace(" --distance ", "_").replace(" ", "_") + "_baseline_cpu"] = round(before["cpu"], 3)
            print(line, flush=True)
            summary[name.replace(" --distance ", "_").replace(" ", "_") + "_cpu"] = round(found["cpu"], 3)
    starts = start_up(args.starts)
    print(f"\nstart-up, median of {args.starts} fresh processes:")
    bare = starts["python -c pass"]
    for name, (wall, cpu) in starts.items():
        print(
            f"  {name:24} {wall:6.3f} s wall {wall / bare[0]:5.1f}x   {cpu:6.3f} s cpu {cpu / bare[1]:5.1f}x bare python"
        )
    summary |= {name.replace(" ", "_"): round(wall, 3) for name, (wall, _) in starts.items()}
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"\nload after: {load}")
    print(" ".join(f"{key}={value}" for key, value in summary.items()) + f" load={load.replace(' ', ',')}")


if __name__ == "__main__":
    main()
