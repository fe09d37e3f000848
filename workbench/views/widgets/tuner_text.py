"""The Tuner's text views as HTML: header, progress sentences, top and bottom episodes, lint."""

from __future__ import annotations

import html

import numpy as np

from workbench.core.config import RewardConfig

#: The returns table's cells without padding, so each row is one line high.
EXTREMES_STYLE = "<style>.workbench-extremes td, .workbench-extremes th { padding: 0 4px; }</style>"
LINT_COLORS = {"error": "#D55E00", "warning": "#E69F00", "info": "#0072B2"}


def header_html(baseline: RewardConfig, baseline_name: str, shown: int, total: int, decisions: int, note: str) -> str:
    """Which episodes are shown and what the baseline (the ghost, where Reset goes) is.

    Args:
        baseline: The baseline config.
        baseline_name: Its name.
        shown: Episodes the filters keep.
        total: Episodes in all.
        decisions: Decisions in all.
        note: A note after it (HTML, '' for none).

    Returns:
        The HTML.
    """
    scope = f"{shown:,} of {total:,} episodes" if shown != total else f"all {total:,} episodes"
    named = f"<b>{html.escape(baseline_name)}</b>: " if baseline_name else ""
    return (
        f"<b>{scope}</b>, {decisions:,} decisions. Baseline (ghost, Reset): {named}"
        f"{html.escape(baseline.rule.name)}, lambda x{baseline.effective_lambda:g}.{note}"
    )


def progress_html(live: str | None, baseline: str) -> str:
    """The progress sentence under the live config and the baseline's (``live`` None: no episode shown).

    Args:
        live: The live config's sentence, or None.
        baseline: The baseline's sentence.

    Returns:
        The HTML.
    """
    if live is None:
        return "<i>no episode matches the filter</i>"
    return (
        f"<div style='font-size:12px'><b>progress</b>: {html.escape(live)}<br><span style='color:#777'>"
        f"<b>baseline</b>: {html.escape(baseline)}</span></div>"
    )


def extremes_html(
    rows: np.ndarray,
    ids: np.ndarray,
    policies: list[str],
    policy_code: np.ndarray,
    live: np.ndarray,
    base: np.ndarray,
    achievements: np.ndarray,
    bounds: dict[int, tuple[float, float]] | None = None,
) -> str:
    """The top 5 and bottom 5 of the episodes at ``rows`` by live return (hover: the policy);
    an episode in ``bounds`` (estimated counts) shows its return as the interval ``[low, high]``.

    Args:
        rows: The episodes shown (positions).
        ids: Every episode id.
        policies: The policies' names.
        policy_code: Each episode's policy (an index into ``policies``).
        live: Each episode's live return.
        base: Each episode's baseline return.
        achievements: Each episode's achievements.
        bounds: Position -> (low, high) for episodes with estimated counts.

    Returns:
        The HTML.
    """
    if not len(rows):
        return ""
    order = rows[np.argsort(-live[rows], kind="stable")]
    top = min(5, len(order))
    picked = [("top", order[:top])]
    if len(order) > top:
        picked.append(("bottom", order[-min(5, len(order) - top) :]))
    lines = []
    for label, indices in picked:
        lines.append(f"<tr><th colspan='4' style='text-align:left'>{label} {len(indices)}</th></tr>")
        for i in indices:
            lines.append(
                f"<tr><td title='{html.escape(policies[policy_code[i]])}'>{html.escape(str(ids[i]))}</td>"
                f"<td style='text-align:right'>{_return_cell(live[i], (bounds or {}).get(int(i)))}</td>"
                f"<td style='text-align:right;color:#777'>{base[i]:.3f}</td>"
                f"<td style='text-align:right'>{achievements[i]}</td></tr>"
            )
    return (
        EXTREMES_STYLE + "<table class='workbench-extremes' "
        "style='font-size:12px;white-space:nowrap;border-spacing:0'><thead><tr>"
        "<th>episode</th><th>return</th><th>baseline</th><th>achievements</th></tr></thead><tbody>"
        + "".join(lines)
        + "</tbody></table>"
        "<div style='font-size:11px;height:18px'>click a point in the figure to replay that episode</div>"
    )


def lint_html(config: RewardConfig) -> str:
    """``config``'s lint findings as a list (or "no findings").

    Args:
        config: The config.

    Returns:
        The HTML.
    """
    findings = config.lint()
    if not findings:
        return "<b>lint:</b> no findings"
    items = "".join(
        f"<li><span style='color:{LINT_COLORS.get(f.level, 'black')}'>{f.level}</span> "
        f"<code>{html.escape(f.key)}</code>: {html.escape(f.message)}</li>"
        for f in findings
    )
    return f"<b>lint:</b><ul style='margin:0;padding-left:18px'>{items}</ul>"


def _return_cell(value: float, interval: tuple[float, float] | None) -> str:
    """A return to 3 decimals, or its interval (estimated counts) with a hover saying why."""
    if interval is None or interval[0] == interval[1]:
        return f"{value:.3f}"
    return (
        "<span title='estimated achievement counts: the return lies in this interval'>"
        f"[{interval[0]:.3f}, {interval[1]:.3f}]</span>"
    )
