"""The report's later sections: the audit with evidence and filmstrips, shaping, distances, advantages, the watch.

The audit renders whatever flags and notes ``analysis.audit`` returns, generically; the rest
format the shaping certificate, the reward distances with their coverage, the learner's
advantages and the over-optimisation watch."""

from __future__ import annotations

from typing import Any

import pandas as pd

from workbench.analysis.audit import SECTIONS
from workbench.analysis.detector_accuracy import gating, measured, shortfall
from workbench.views.plots.overoptimisation import overoptimisation
from workbench.views.plots.returns import ESTIMATORS, advantages
from workbench.views.report.contents import ReportData
from workbench.views.report.filmstrip import filmstrip
from workbench.views.report.markup import facts, number, table, text
from workbench.views.report.sections import ROWS
from workbench.views.report.svg import figure_html

#: Certificate components listed per config (the ones no potential explains most come first).
COMPONENTS = 15


def verdict(data: ReportData) -> str:
    """The audit's exit status in words (what ``workbench audit`` exits with).

    Args:
        data: The report's contents.

    Returns:
        One sentence.
    """
    found = data.audit
    notes = f" {len(found.notes)} note(s) were raised; notes never change the exit status." if len(found.notes) else ""
    if found.clean:
        return f"Exit status 0 (clean): no flag fired under any config.{notes}"
    flagged = list(dict.fromkeys(found.flags["config"]))
    return f"Exit status 1 (flagged): {len(found.flags)} flag(s) fired, under {', '.join(flagged)}.{notes}"


def _measured_line(code: str, config: str) -> str:
    seen = measured(code, config)
    if seen is None:
        return "Not measured on the benchmark: this check judges the config, not episodes."
    precision = "never fired there" if seen["precision"] is None else f"precision {seen['precision']:.2f}"
    interval = ""
    if seen.get("low") is not None and seen.get("high") is not None:
        interval = f" [{seen['low']:.2f}, {seen['high']:.2f}]"
    bar = "" if gating(code) else f"; below the bar on all configs pooled ({shortfall(code)}), so a note"
    return (
        f"Measured on the labelled benchmark ({seen['config']}): {precision}{interval}, recall {seen['recall']:.2f}, "
        f"false-positive rate {seen['fpr']:.2f}{bar}."
    )


def _evidence_html(evidence: Any, data: ReportData, strips: dict[tuple, str]) -> str:
    if not isinstance(evidence, dict) or not evidence:
        return ""
    shown = {k: v for k, v in evidence.items() if k != "replay"}
    html = f"<p>Evidence: <code>{text(_evidence_words(shown))}</code></p>"
    replay = evidence.get("replay", {}).get("link") if isinstance(evidence.get("replay"), dict) else None
    if replay:
        html += f'<p class="muted">In the dashboard, replay it at <code>{text(replay)}</code>.</p>'
    if "episode" in evidence and "decisions" in evidence:
        key = (evidence["episode"], tuple(evidence["decisions"]), evidence.get("laps"))
        if key not in strips:
            strips[key] = filmstrip(data.corpus, evidence)
        html += strips[key]
    return html


def _evidence_words(evidence: dict[str, Any]) -> str:
    return "; ".join(f"{key} {value}" for key, value in evidence.items())


def audit_section(data: ReportData) -> str:
    """Each flag and note (whatever the audit returns) with its measured precision, evidence and
    filmstrip, per config, and the exit status in words.

    Args:
        data: The report's contents.

    Returns:
        The section's HTML.
    """
    found = data.audit
    html = f'<p class="verdict {"clean" if found.clean else "flagged"}">{text(verdict(data))}</p>'
    thresholds = found.thresholds
    html += (
        f'<p class="muted">Thresholds: dominance {thresholds.dominance:g}, one component {thresholds.component:g}, '
        f"farming when at least {thresholds.farming_episodes} episode(s) farm, dead entries: {text(thresholds.dead_entries)}.</p>"
    )
    strips: dict[tuple, str] = {}
    for name in found.configs:
        flags, notes = (t[t["config"] == name] for t in (found.flags, found.notes))
        counts = ", ".join(f"{s} {int((flags['section'] == s).sum())}" for s in SECTIONS)
        html += f"<h3>{text(name)}: {'clean' if flags.empty else f'{len(flags)} flag(s)'}, {len(notes)} note(s)</h3>"
        html += f'<p class="muted">Flags per check: {text(counts)}.</p>'
        for kind, rows in (("flag", flags), ("note", notes)):
            for row in rows.to_dict("records"):
                html += (
                    f'<div class="finding {kind}"><span class="kind">{kind}</span> '
                    f"[{text(row['section'])}] <strong>{text(row['code'])}</strong> {text(row['subject'])}"
                    f"<p>{text(row['why'])}</p><p>{text(_measured_line(str(row['code']), name))}</p>"
                    f"{_evidence_html(row.get('evidence'), data, strips)}</div>"
                )
    for line in found.extra.get("notes", []):
        html += f'<div class="finding note"><span class="kind">note</span> <p>{text(line)}</p></div>'
    return html


def shaping_section(data: ReportData) -> str:
    """The shaping certificate per config, the reward distances with their coverage, and the advantages a GRPO learner sees.

    Args:
        data: The report's contents.

    Returns:
        The section's HTML.
    """
    html = "<h3>Shaping certificate</h3>"
    for part in data.parts:
        certificate = part.certificate
        html += f"<h4>{text(part.name)}</h4>"
        if isinstance(certificate, str):
            html += f'<p class="warn">No certificate: {text(certificate)}</p>'
            continue
        components = certificate.components
        shaping = components[components["role"] == "shaping"]
        total = float(certificate.counterpart["return"].sum())
        unexplained, cycles = float(shaping["unexplained"].sum()), float(certificate.cycles["paid"].sum())
        html += (
            f"<p>Shaped return {total:.4f} (gamma {certificate.gamma:g}); shaping components paid "
            f"{shaping['paid'].sum():.4f}, of which no potential explains {unexplained:.4f} "
            f"({_share(unexplained, total)} of the return). Positive-return cycles: {len(certificate.cycles)}, "
            f"paying {cycles:.4f} ({_share(cycles, total)}).</p>"
        )
        columns = ["kind", "name", "role", "paid", "unexplained", "unexplained_share", "unexplained_signal"]
        html += table(components[columns].head(COMPONENTS), formats={c: "{:.4f}" for c in columns[3:]})
        if len(components) > COMPONENTS:
            html += f'<p class="muted">... {len(components) - COMPONENTS} more (<code>workbench certify --out</code> writes them all).</p>'

        if len(certificate.loops):
            loops = certificate.loops.drop(columns=[c for c in ("example",) if c in certificate.loops]).head(ROWS)
            html += "<p>Loops paid for (a state revisited with net positive reward):</p>" + table(loops)
    html += "<h3>Reward distances</h3>" + _distances(data)
    html += "<h3>Advantages a GRPO learner sees</h3>"
    for part in data.parts:
        view = part.learner
        html += f"<h4>{text(part.name)}</h4>"
        if isinstance(view, str):
            html += f'<p class="warn">No advantages: {text(view)}</p>'
            continue
        html += (
            f"<p>{len(view.episodes)} rollout(s) in {len(view.groups)} group(s) by {text(', '.join(view.by))}; "
            f"{len(view.flags)} flag(s).</p>"
        )
        html += figure_html(advantages(view.episodes), f"Advantages per rollout under {part.name}")
        if len(view.flags):
            html += table(view.flags)
        columns = ["episode", "group", "return", *ESTIMATORS]
        html += table(view.episodes[columns].head(ROWS), formats={c: "{:.4f}" for c in ["return", *ESTIMATORS]})
    return html


def _share(part: float, total: float) -> str:
    return f"{part / total:.0%}" if total else "n/a"


def _distances(data: ReportData) -> str:
    if not data.distances:
        return '<p class="muted">One config: a distance needs two (the first config against each other one).</p>'
    rows: list[dict[str, Any]] = []
    for a, b, kind, found in data.distances:
        if isinstance(found, str):
            rows.append({"from": a, "to": b, "distance": kind, "value": float("nan"), "warning": found})
            continue
        seen = found.coverage
        rows.append(
            {
                "from": a,
                "to": b,
                "distance": kind,
                "value": found.value,
                "transitions": seen.transitions,
                "states": seen.states,
                "distinct transitions": seen.distinct_transitions,
                "branching": seen.branching,
                "observed pairs": seen.observed_pairs,
                "warning": seen.warning,
            }
        )
    frame = pd.DataFrame(rows)
    return (
        '<p class="muted">0 means the same reward up to potential shaping and scale; coverage says how much of the '
        "state space the number rests on.</p>"
        + table(frame, formats={"value": "{:.4f}", "branching": "{:.1%}", "observed pairs": "{:.2%}"})
    )


def watch_section(data: ReportData) -> str:
    """The over-optimisation watch of a live corpus (or why it cannot be computed yet).

    Args:
        data: The report's contents.

    Returns:
        The section's HTML.
    """
    watch = data.watch
    if isinstance(watch, str) or watch is None:
        return f'<p class="warn">No watch yet: {text(watch or "not a live corpus")}</p>'
    html = figure_html(overoptimisation(watch), "Over-optimisation watch: proxy return and Crafter score by episode")
    alarms = watch.alarms
    html += facts([("alarms", f"{int(alarms['alarm'].sum())} of {len(alarms)} config(s)")])
    numeric = [c for c in alarms.columns if pd.api.types.is_float_dtype(alarms[c])]
    return html + table(alarms, formats=dict.fromkeys(numeric, number))
