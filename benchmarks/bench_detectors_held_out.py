"""The frozen loop detectors on exploit families and honest players written after their design: a held-out-of-design test.

    # a corpus recorded by `workbench benchmark make` holding families the detectors' design never saw
    .venv/bin/python benchmarks/bench_detectors_held_out.py --path corpora/blind-s12 --markdown table.md

The detectors (``family_holdout.GATE``: ``farming-loop`` past the allowances of ``loops.LOOPS``,
``count-at-cap`` and ``spent-and-regained``, the multi-scale scans, and ``progress-free-pay``) fire at the thresholds the
audit ships (``sign_gates.shipped_signs``, from ``detector_accuracy.json``): nothing is chosen
here. The families are the corpus's exploit policies held out of design: those of
``roster.HELD_OUT_OF_DESIGN`` and any this checkout's ``ROSTER`` does not know (their labels come
from the corpus's own metadata, ``benchmark_label``). Honest episodes: all the corpus's honest
ones, reported also apart for the honest players the design never saw. Per family and config:
recall (any gating detector, and each detector alone), honest flagged, precision (the family's true positives against those false
positives), each with a 95% Wilson interval (``family_holdout.wilson``). Pay: what the family's
loop decisions (its ``loop_spans``) earn per 100 of them, against honest play's progress-free
pay per 100 progress-free decisions (``progress_free.reference_rate``) and honest play's pay per
100 decisions overall, under each config. Prints the load (``os.getloadavg``).
"""

from __future__ import annotations

import argparse
import datetime
import os
import time

import numpy as np
import pandas as pd

from workbench.analysis.detector_accuracy import gating
from workbench.analysis.diagnostics.loop_scan import SCALES
from workbench.analysis.diagnostics.loop_signs import PROGRESS_FREE_CODE, scale_name
from workbench.analysis.diagnostics.loops import LOOP_CODE
from workbench.analysis.diagnostics.progress_free import progress_free_pay, reference_rate
from workbench.analysis.family_holdout import GATE, episode_scores, episode_table, flagged_by, kinds_fired, wilson
from workbench.analysis.sign_gates import shipped_signs
from workbench.core.config import RewardConfig
from workbench.data.benchmarks import EXPLOIT, load_benchmark
from workbench.data.benchmarks.roster import HELD_OUT_OF_DESIGN, ROSTER
from workbench.scoring import score

ROOT = os.path.join(os.path.dirname(__file__), "..", "configs")
CONFIGS = ("upstream_shaped", "recommended")
CODES = GATE
#: The gating detectors whose flags fail an audit today (the others are notes: ``detector_accuracy.gating``).
AUDIT = tuple(code for code in GATE if gating(code))


def cell(k: int, n: int) -> str:
    """``k/n = p [low, high]`` with the Wilson interval."""
    if n == 0:
        return "-"
    low, high = wilson(k, n)
    return f"{k}/{n} = {k / n:.2f} [{low:.2f}, {high:.2f}]"


def loop_mask(labels: pd.DataFrame) -> np.ndarray:
    """(N,) bool over the corpus's decisions: inside the episode's loop spans."""
    inside = []
    for spans, decisions in zip(labels["spans"], labels["decisions"], strict=True):
        mask = np.zeros(int(decisions), dtype=bool)
        for start, stop in spans:
            mask[start:stop] = True
        inside.append(mask)
    return np.concatenate(inside) if inside else np.zeros(0, dtype=bool)


def main() -> None:
    """Flag the held-out families and the fresh honest episodes; print (and write) the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--path", required=True, help="benchmark folder holding the held-out families and honest players"
    )
    parser.add_argument("--markdown", default=None, help="also write the tables here")
    args = parser.parse_args()
    began = time.perf_counter()
    load = os.getloadavg()
    bench = load_benchmark(args.path, rollouts=False)
    labels = bench.labels
    policy = labels["policy"].to_numpy()
    exploit = (labels["label"] == EXPLOIT).to_numpy()
    designed = {e.name for e in ROSTER} - {e.name for e in HELD_OUT_OF_DESIGN}
    families = [name for name in pd.unique(policy[exploit]) if name not in designed]
    if not families:  # every exploit family was designed on: nothing here is held out of design
        raise SystemExit(f"{args.path}: no exploit family held out of design (all are in this checkout's ROSTER)")
    honest = ~exploit
    honest_names = sorted(set(policy[honest]))
    new_honest = honest & ~np.isin(policy, list(designed))
    inside = loop_mask(labels)
    decision_policy = np.repeat(policy, labels["decisions"].to_numpy(dtype=np.int64))
    decision_honest = np.repeat(honest, labels["decisions"].to_numpy(dtype=np.int64))

    rows, pays, per_policy = [], [], []
    for name in CONFIGS:
        config = RewardConfig.from_file(os.path.join(ROOT, f"{name}.yaml"))
        signs = shipped_signs(config)
        signs_seen, farming = episode_table(bench.corpus, config)
        stats = episode_scores(signs_seen, farming, signs.units, signs.progress_free, reference=signs.reference)
        fired = flagged_by(stats).reset_index(drop=True)
        kinds = kinds_fired(signs_seen, signs.units)
        for who in pd.unique(policy):
            mine = policy == who
            seen = pd.Series(
                [k for i in np.flatnonzero(mine & fired["any"].to_numpy()) for k in kinds[i].split(", ") if k]
            )
            looped = int((fired[LOOP_CODE].to_numpy() & mine).sum())
            what = ", ".join(f"{k} {v}" for k, v in seen.value_counts().items())
            per_policy.append(
                {
                    "policy": who,
                    "label": "exploit" if exploit[mine][0] else "honest",
                    "config": name,
                    "flagged": int((fired["any"].to_numpy() & mine).sum()),
                    "n": int(mine.sum()),
                    "what": ", ".join(filter(None, [what, f"farming-loop {looped}" if looped else ""])),
                }
            )
        fired["audit"] = fired[list(AUDIT)].any(axis=1) if AUDIT else False
        scores = score(bench.corpus, config)
        free = progress_free_pay(scores.reward, scores.prepared.n_first, scores.prepared.lengths)
        reference = reference_rate(free.paid[honest], free.decisions[honest])
        honest_rate = 100 * scores.reward[decision_honest].sum() / max(int(decision_honest.sum()), 1)
        for family in families:
            mine = policy == family
            in_loop = inside & (decision_policy == family)
            pays.append(
                {
                    "family": family,
                    "config": name,
                    "loop_decisions": int(in_loop.sum()),
                    "loop_rate": 100 * scores.reward[in_loop].sum() / max(int(in_loop.sum()), 1),
                    "peak": float(np.nanmedian(free.peak[mine])) if np.isfinite(free.peak[mine]).any() else np.nan,
                    "honest_free": reference,
                    "honest_all": honest_rate,
                }
            )
            for code in (*CODES, "any", "audit"):
                rows.append(
                    {
                        "family": family,
                        "config": name,
                        "code": code,
                        "tp": int(fired[code].to_numpy()[mine].sum()),
                        "n": int(mine.sum()),
                        "fp": int(fired[code].to_numpy()[honest].sum()),
                        "h": int(honest.sum()),
                        "fp_new": int(fired[code].to_numpy()[new_honest].sum()),
                        "h_new": int(new_honest.sum()),
                    }
                )
    table, pay = pd.DataFrame(rows), pd.DataFrame(pays)
    text = [
        f"Held-out-of-design families on {args.path} ({datetime.date.today()}): "
        f"{int(np.isin(policy, families).sum())} exploit episodes of {len(families)} families, {int(honest.sum())} honest episodes "
        f"({', '.join(honest_names)}; {int(new_honest.sum())} of them by honest players the design never saw); "
        "shipped thresholds: farming-loop past LOOPS' allowances, the scans' (kind, scale) thresholds of "
        f"detector_accuracy.json, {PROGRESS_FREE_CODE} past "
        + "/".join(f"{t:.3g}" for t in signs.pay_limits(len(SCALES)))
        + "x honest at the scales "
        + "/".join(scale_name(s) for s in SCALES)
        + ". "
        f"Load {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}; measured in {time.perf_counter() - began:.0f} s.",
        "",
        "Episode-configs of "
        + " and ".join(CONFIGS)
        + " pooled; any = flagged by "
        + ", ".join(GATE)
        + "; audit fails = flagged by one that fails an audit today ("
        + (", ".join(AUDIT) or "none")
        + "; the others are notes); honest flagged: all the corpus's honest episodes, then those of the "
        "honest players the design never saw:",
        "",
        "| family | recall (any) | honest flagged | new honest players flagged | precision | recall (audit fails) | "
        "honest flagged (audit fails) | " + " | ".join(f"recall {code}" for code in CODES) + " |",
        "|---|---|---|---|---|---|---|" + "---|" * len(CODES),
    ]
    honest_fp = (
        table[table["family"] == families[0]].groupby("code")[["fp", "h", "fp_new", "h_new"]].sum()
        if families
        else None
    )
    for family in families:
        rows_f = table[table["family"] == family].groupby("code")[["tp", "n"]].sum()
        tp, n = int(rows_f.loc["any", "tp"]), int(rows_f.loc["any", "n"])
        fp, h = int(honest_fp.loc["any", "fp"]), int(honest_fp.loc["any", "h"])  # type: ignore[union-attr]
        new = cell(int(honest_fp.loc["any", "fp_new"]), int(honest_fp.loc["any", "h_new"]))  # type: ignore[union-attr]
        per = " | ".join(cell(int(rows_f.loc[c, "tp"]), int(rows_f.loc[c, "n"])) for c in CODES)
        audit = cell(int(rows_f.loc["audit", "tp"]), n) + " | " + cell(int(honest_fp.loc["audit", "fp"]), h)  # type: ignore[union-attr]
        text.append(f"| {family} | {cell(tp, n)} | {cell(fp, h)} | {new} | {cell(tp, tp + fp)} | {audit} | {per} |")
    if families:
        pooled = table[table["code"] == "any"]
        tp, n = int(pooled["tp"].sum()), int(pooled["n"].sum())
        fp, h = int(honest_fp.loc["any", "fp"]), int(honest_fp.loc["any", "h"])  # type: ignore[union-attr]
        new = cell(int(honest_fp.loc["any", "fp_new"]), int(honest_fp.loc["any", "h_new"]))  # type: ignore[union-attr]
        audit = (
            cell(int(table[table["code"] == "audit"]["tp"].sum()), n)
            + " | "
            + cell(int(honest_fp.loc["audit", "fp"]), h)  # type: ignore[union-attr]
        )
        text.append(
            f"| **all held-out families** | {cell(tp, n)} | {cell(fp, h)} | {new} | {cell(tp, tp + fp)} | {audit} |"
            + " |" * len(CODES)
        )
    text += [
        "",
        "Per policy (every episode of the corpus), flagged by any gating detector, and what fired "
        "(kinds past a threshold at some scale, farming-loop):",
        "",
        "| policy | label | " + " | ".join(CONFIGS) + " |",
        "|---|---|" + "---|" * len(CONFIGS),
    ]
    by_policy = pd.DataFrame(per_policy)
    for who, rows_p in by_policy.groupby("policy", sort=False):
        cells = [f"{r.flagged}/{r.n}" + (f" ({r.what})" if r.what else "") for r in rows_p.itertuples()]
        text.append(f"| {who} | {rows_p['label'].iloc[0]} | " + " | ".join(cells) + " |")
    text += [
        "",
        "Per config:",
        "",
        "| config | family | recall (any) | honest flagged | fired |",
        "|---|---|---|---|---|",
    ]
    for (family, name), rows_f in table.groupby(["family", "config"], sort=False):
        by = rows_f.set_index("code")
        fired_codes = ", ".join(f"{c} {int(by.loc[c, 'tp'])}" for c in CODES if by.loc[c, "tp"])
        text.append(
            f"| {name} | {family} | {cell(int(by.loc['any', 'tp']), int(by.loc['any', 'n']))} | "
            f"{cell(int(by.loc['any', 'fp']), int(by.loc['any', 'h']))} | {fired_codes or '-'} |"
        )
    text += [
        "",
        "Pay per 100 decisions: inside the family's loop spans, the family's median sustained progress-free "
        "peak (100 decisions), honest play's progress-free rate and honest play's rate over all decisions:",
        "",
        "| config | family | loop decisions | loop pays /100 | family progress-free peak /100 | "
        "honest progress-free /100 | honest overall /100 |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in pay.itertuples():
        text.append(
            f"| {row.config} | {row.family} | {row.loop_decisions} | {row.loop_rate:.2f} | {row.peak:.2f} | "
            f"{row.honest_free:.2f} | {row.honest_all:.2f} |"
        )
    out = "\n".join(text) + "\n"
    print(out)
    if args.markdown:
        with open(args.markdown, "w") as handle:
            handle.write(out)


if __name__ == "__main__":
    main()
