"""Leave-one-family-out accuracy of the farming detectors on the labelled benchmark.

    # the benchmark the docs' table is measured on (about 10 minutes on one core):
    .venv/bin/python -m workbench benchmark make --out corpora/bench-lofo --episodes 10 --max-steps 500 --seed 3
    .venv/bin/python benchmarks/bench_detectors_lofo.py --path corpora/bench-lofo \\
        --markdown table.md --accuracy-json workbench/analysis/detector_accuracy.json

Each exploit family (a roster hacker policy) is held out in turn. The thresholds come from
honest play alone: each (kind, scale) of the multi-scale scan (``loop_scan``) is allowed
``family_holdout.MARGIN`` times the most an honest tune episode (even episode numbers; the taskapp
rollouts' even ones) reached there, and at least 2 (``family_holdout.unit_thresholds``);
``farming-loop`` keeps the allowances shipped in ``LOOPS`` (twice the honest maximum, on an
earlier benchmark). No exploit family takes part in
setting them, so each fold's thresholds are the same and the held-out family is held out of
tuning by construction. The held-out family's episodes and the honest held-out split (odd
episode numbers, explorer_30 entirely, odd taskapp rollouts) are flagged under each config.
Per family and config: recall on its episodes, honest false-positive rate, precision (its true
positives against the honest false positives), each with a 95% Wilson score interval (Wilson
1927; Brown, Cai & DasGupta 2001). "episode-configs" pools the configs.

``--fresh DIR`` also flags every episode of another benchmark folder (other seeds: other worlds)
at the thresholds the audit ships, per policy and config.

The fixed-threshold notes (repeats-outweigh-credits, resource-shaping-dominates,
component-dominates) are measured the same way for ``--accuracy-json`` (their thresholds do
not depend on the fold). The json also carries the thresholds the audit ships (``signs``).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from typing import Any

import numpy as np
import pandas as pd

from workbench.analysis.detector_accuracy import DETECTORS, detector_scores
from workbench.analysis.diagnostics.loop_scan import KINDS, SCALES
from workbench.analysis.diagnostics.loop_signs import SignTable, scale_name
from workbench.analysis.family_holdout import (
    GATE,
    MARGIN,
    MIN_UNITS,
    episode_scores,
    episode_table,
    flagged_by,
    honest_rate,
    kinds_fired,
    pay_over_honest,
    progress_free_thresholds,
    unit_thresholds,
    wilson,
)
from workbench.analysis.sign_gates import honest_reference, signs_document
from workbench.core.config import RewardConfig
from workbench.data.benchmarks import EXPLOIT, HELD_OUT, TUNE, Benchmark, load_benchmark
from workbench.data.benchmarks.roster import HELD_OUT_OF_DESIGN

ROOT = os.path.join(os.path.dirname(__file__), "..", "configs")
TARGET_CONFIGS = ("upstream_shaped", "recommended")
ALL_CONFIGS = ("upstream_shaped", "recommended", "upstream_complex", "consistent")
NOTES = ("repeats-outweigh-credits", "resource-shaping-dominates", "component-dominates")
#: Episodes whose loop ran at least this many decisions get a recall of their own (a hacker that
#: died, or whose late loop never began, played honestly).
LOOPED = 50


def designed_on(bench: Benchmark) -> Benchmark:
    """``bench`` without the families held out of design (``roster.HELD_OUT_OF_DESIGN``: they are
    measured by ``bench_detectors_held_out.py`` alone, never folded in here)."""
    keep = ~bench.labels["policy"].isin([e.name for e in HELD_OUT_OF_DESIGN]).to_numpy()
    return Benchmark(bench.corpus[keep], bench.labels[keep].reset_index(drop=True))


def cell(k: int, n: int) -> str:
    """``k/n = p [low, high]`` with the Wilson interval."""
    if n == 0:
        return "-"
    low, high = wilson(k, n)
    return f"{k}/{n} = {k / n:.2f} [{low:.2f}, {high:.2f}]"


def main() -> None:
    """Run the folds, print the table, write it and the audit's measured rows when asked."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--path", required=True, help="benchmark folder (`workbench benchmark make`)")
    parser.add_argument("--markdown", default=None, help="also write the table here")
    parser.add_argument("--accuracy-json", default=None, help="also write the audit's measured rows here")
    parser.add_argument(
        "--fresh",
        default=None,
        help="also flag every episode of this benchmark folder (other seeds) as the audit ships",
    )
    args = parser.parse_args()
    began = time.perf_counter()
    load = os.getloadavg()
    bench = designed_on(load_benchmark(args.path))
    labels = bench.labels
    exploit = (labels["label"] == EXPLOIT).to_numpy()
    policy = labels["policy"].to_numpy()
    honest_tune = ~exploit & (labels["split"] == TUNE).to_numpy()
    honest_held = ~exploit & (labels["split"] == HELD_OUT).to_numpy()
    families = list(pd.unique(policy[exploit]))
    looped = labels["loop_decisions"].to_numpy() >= LOOPED
    tables: dict[str, tuple[SignTable, np.ndarray]] = {}
    for name in ALL_CONFIGS:
        config = RewardConfig.from_file(os.path.join(ROOT, f"{name}.yaml"))
        tables[name] = episode_table(bench.corpus, config)
    # The scan's peaks do not depend on the config (what it pays decides only which kinds count).
    units = unit_thresholds(tables[TARGET_CONFIGS[0]][0].scan.peak[honest_tune])
    # progress-free pay's thresholds: per scale, from the honest tune episodes under the target configs
    references = {name: honest_rate(tables[name][0], honest_tune) for name in ALL_CONFIGS}
    free_limit = progress_free_thresholds(
        np.concatenate([pay_over_honest(tables[name][0], references[name])[honest_tune] for name in TARGET_CONFIGS])
    )
    stats: dict[str, pd.DataFrame] = {}
    for name in ALL_CONFIGS:
        config = RewardConfig.from_file(os.path.join(ROOT, f"{name}.yaml"))
        found = episode_scores(*tables[name], units, free_limit, reference=references[name])
        fixed = detector_scores(bench.corpus, config)
        for code in NOTES:
            found[code] = fixed[code].to_numpy()
        stats[name] = found.reset_index(drop=True)
    thresholds = {code: DETECTORS[code] for code in NOTES}

    # Per fold: the thresholds (from honest play only: the same in every fold); flags on the
    # held-out family and on the honest held-out split.
    counts: list[dict[str, Any]] = []
    fired_kinds: dict[str, list[str]] = {}
    for family in families:
        for name in ALL_CONFIGS:
            fired = flagged_by(stats[name])
            for code, limit in thresholds.items():
                fired[code] = stats[name][code].to_numpy() > limit
            on_family, on_honest = fired[policy == family], fired[honest_held]
            ran = looped[policy == family]
            if name == TARGET_CONFIGS[0]:
                kinds = np.array(kinds_fired(tables[name][0], units), dtype=object)[policy == family]
                fired_kinds[family] = [k for k in kinds if k]
            for code in on_family.columns:
                counts.append(
                    {
                        "family": family,
                        "config": name,
                        "code": code,
                        "tp": int(on_family[code].sum()),
                        "n": len(on_family),
                        "tp_ran": int(on_family[code].to_numpy()[ran].sum()),
                        "n_ran": int(ran.sum()),
                        "fp": int(on_honest[code].sum()),
                        "h": len(on_honest),
                    }
                )
    table = pd.DataFrame(counts)
    elapsed = time.perf_counter() - began
    text = [
        f"Benchmark {args.path}: {int(exploit.sum())} exploit episodes of {len(families)} families, "
        f"{int(honest_tune.sum())} honest tune and {int(honest_held.sum())} honest held-out episodes "
        f"({', '.join(sorted(set(policy[~exploit])))}). Measured in {elapsed:.0f} s, load average "
        f"{load[0]:.1f} {load[1]:.1f} {load[2]:.1f}.",
        "",
        "Held-out family, the gating detectors together (flagged by any of "
        + ", ".join(GATE)
        + "), episode-configs of "
        + " and ".join(TARGET_CONFIGS)
        + ":",
        "",
        f"| held-out family | recall | recall, loop ran >= {LOOPED} decisions | honest flagged | precision "
        "| fired on the family | kinds past their threshold (episodes) |",
        "|---|---|---|---|---|---|---|",
    ]
    target = table[table["config"].isin(TARGET_CONFIGS)]
    for family in families:
        rows = target[(target["family"] == family)]
        any_row = rows[rows["code"] == "any"]
        tp, n, fp, h, tp_ran, n_ran = (int(any_row[c].sum()) for c in ("tp", "n", "fp", "h", "tp_ran", "n_ran"))
        fired = ", ".join(
            f"{code} {int(rows[rows['code'] == code]['tp'].sum())}"
            for code in GATE
            if rows[rows["code"] == code]["tp"].sum()
        )
        kinds = pd.Series([k for row in fired_kinds[family] for k in row.split(", ")]).value_counts()
        top = ", ".join(f"{k} {v}" for k, v in kinds.head(3).items())
        text.append(
            f"| {family} | {cell(tp, n)} | {cell(tp_ran, n_ran)} | {cell(fp, h)} | "
            f"{cell(tp, tp + fp)} | {fired or '-'} | {top or '-'} |"
        )
    text += [
        "",
        "All folds, per config and detector (recall: each family's episodes when held out; honest flagged: "
        "the honest held-out split, one pass (the thresholds come from honest play: the same in every fold); "
        "precision: true positives against that pass's false positives):",
        "",
        "| config | detector | recall | honest flagged | precision |",
        "|---|---|---|---|---|",
    ]
    measured: dict[str, dict[str, Any]] = {}
    pooled: dict[str, Any] = {}
    folds = len(families)
    shipped = {code: 1.0 for code in GATE} | {"farming-loop": 0.0}
    for code in [*GATE, "any", *NOTES]:
        threshold = shipped.get(code, DETECTORS.get(code, 0.0))
        for name in ALL_CONFIGS:
            rows = table[(table["config"] == name) & (table["code"] == code)]
            tp, n, fp, h = (int(rows[c].sum()) for c in ("tp", "n", "fp", "h"))
            if name in TARGET_CONFIGS:
                once = cell(round(fp / folds), h // folds)
                text.append(f"| {name} | {code} | {cell(tp, n)} | {once} | {_precision(tp, fp, folds)} |")
            measured.setdefault(name, {})[code] = _row(tp, n, fp, h, folds, threshold)
        rows = table[(table["config"] != "consistent") & (table["code"] == code)]
        tp, n, fp, h = (int(rows[c].sum()) for c in ("tp", "n", "fp", "h"))
        pooled[code] = _row(tp, n, fp, h, folds, threshold)
        if code == "any":
            rows = table[table["config"].isin(TARGET_CONFIGS) & (table["code"] == code)]
            tp, n, fp, h = (int(rows[c].sum()) for c in ("tp", "n", "fp", "h"))
            text.append(
                f"| {' + '.join(TARGET_CONFIGS)} | **{code}** | {cell(tp, n)} | {cell(round(fp / folds), h // folds)} | "
                f"{_precision(tp, fp, folds)} |"
            )
    text += ["", *threshold_lines(units, free_limit, stats)]
    if args.fresh:
        text += ["", *fresh_seeds(args.fresh, units, free_limit)]
    out = "\n".join(text) + "\n"
    print(out)
    if args.markdown:
        with open(args.markdown, "w") as handle:
            handle.write(out)
    if args.accuracy_json:
        for config_rows in measured.values():
            config_rows.pop("any", None)
        pooled = {code: row for code, row in pooled.items() if not code.startswith("any")}
        document = {
            "benchmark": f"{args.path}: leave-one-family-out, {len(families)} families, honest held-out split",
            "signs": signs_document(units, free_limit, MARGIN),
            "configs": measured,
            "pooled": pooled,
        }
        with open(args.accuracy_json, "w") as handle:
            json.dump(document, handle, indent=1)
            handle.write("\n")


def threshold_lines(units: np.ndarray, free_limit: np.ndarray, stats: dict[str, pd.DataFrame]) -> list[str]:
    """The thresholds the audit ships, as a table of the kinds any honest tune episode reached
    (the others are allowed ``MIN_UNITS`` at every scale)."""
    lines = [
        f"Thresholds the audit ships ({MARGIN:g}x the most an honest tune episode reached, at least {MIN_UNITS:g}; "
        "flag when a peak is above): the kinds honest tune play reached above the floor "
        f"(every other kind: {MIN_UNITS:g} at every scale):",
        "",
        "| kind | " + " | ".join(scale_name(s) for s in SCALES) + " |",
        "|---|" + "---|" * len(SCALES),
    ]
    for kind, row in zip(KINDS, units, strict=True):
        if (row > MIN_UNITS).any():
            lines.append(f"| {kind.name} | " + " | ".join(f"{t:g}" for t in row) + " |")
    lines += [
        "",
        "progress-free-pay, in multiples of honest play's progress-free pay per 100 decisions ("
        + ", ".join(f"{name} {stats[name].attrs['reference']:.2f}" for name in ALL_CONFIGS)
        + "), flag when a peak is above:",
        "",
        "| scale | " + " | ".join(scale_name(s) for s in SCALES) + " |",
        "|---|" + "---|" * len(SCALES),
        "| progress-free-pay | " + " | ".join(f"{t:.3g}" for t in free_limit) + " |",
    ]
    return lines


def fresh_seeds(path: str, units: np.ndarray, free_limit: np.ndarray) -> list[str]:
    """Lines of a table: per policy of the benchmark at ``path`` and target config, how many of
    its episodes the gating detectors flag at the thresholds ``units`` (progress-free pay against
    honest play's rate as the audit takes it: ``sign_gates.honest_reference``)."""
    bench = designed_on(load_benchmark(path, rollouts=False))
    policy = bench.labels["policy"].to_numpy()
    honest = (bench.labels["label"] != EXPLOIT).to_numpy()
    lines = [
        f"Fresh seeds ({path}, every episode flagged at the shipped thresholds):",
        "",
        "| policy | label | " + " | ".join(TARGET_CONFIGS) + " |",
        "|---|---|" + "---|" * len(TARGET_CONFIGS),
    ]
    flags = {}
    for name in TARGET_CONFIGS:
        config = RewardConfig.from_file(os.path.join(ROOT, f"{name}.yaml"))
        reference = honest_reference(config)
        flags[name] = flagged_by(
            episode_scores(*episode_table(bench.corpus, config), units, free_limit, reference=reference)
        )
    for who in pd.unique(policy):
        mine = policy == who
        cells = []
        for name in TARGET_CONFIGS:
            fired = flags[name][mine]
            which = ", ".join(f"{code} {int(fired[code].sum())}" for code in GATE if fired[code].any())
            cells.append(f"{int(fired['any'].sum())}/{int(mine.sum())}" + (f" ({which})" if which else ""))
        label = "honest" if honest[mine][0] else "exploit"
        lines.append(f"| {who} | {label} | " + " | ".join(cells) + " |")
    for name in TARGET_CONFIGS:
        fp, h = int(flags[name]["any"].to_numpy()[honest].sum()), int(honest.sum())
        lines.append(f"\n{name}: honest flagged {cell(fp, h)}.")
    return lines


def _precision(tp: int, fp: int, folds: int) -> str:
    """Precision against one pass over the honest held-out split (the folds' mean false positives)."""
    once = round(fp / folds)
    return cell(tp, tp + once)


def _row(tp: int, n: int, fp: int, h: int, folds: int, threshold: float) -> dict[str, Any]:
    """A measured row: precision (Wilson interval; against one pass over the honest held-out
    split), recall, false-positive rate, threshold."""
    fp = round(fp / folds)
    flagged = tp + fp
    low, high = wilson(tp, flagged)
    return {
        "precision": round(tp / flagged, 4) if flagged else None,
        "recall": round(tp / n, 4) if n else None,
        "fpr": round(fp * folds / h, 4) if h else None,
        "low": round(low, 4) if flagged else None,
        "high": round(high, 4) if flagged else None,
        "threshold": round(float(threshold), 4),
    }


if __name__ == "__main__":
    main()
