"""The report's first sections: the corpus, the configs, the returns, and how the report was made."""

from __future__ import annotations

import pandas as pd

from workbench.data.importers.producers import producer_lines
from workbench.scoring.intervals import interval_text
from workbench.util.labels import short_label
from workbench.views.plots import compare_configs, component_share
from workbench.views.plots.returns import group_returns, rank_changes
from workbench.views.report.contents import CONFIDENCE, ReportData
from workbench.views.report.markup import facts, table, text
from workbench.views.report.svg import figure_html

#: What an estimated count is, in the report's words.
ESTIMATED = (
    "the episode's achievement counts were estimated from text observations (lower bounds), so "
    "count shaping, and the return, lies in an interval"
)
#: Rows of a long table the report keeps (the CLI commands with --out write them all).
ROWS = 40


def corpus_section(data: ReportData) -> str:
    """The corpus: where it comes from, its producers, episodes, decisions and estimated counts.

    Args:
        data: The report's contents.

    Returns:
        The section's HTML.
    """
    corpus, index = data.corpus, data.corpus.index

    def counted(column: str) -> str:
        return ", ".join(f"{k} {v}" for k, v in index[column].astype(str).value_counts(sort=False).items())

    pairs = [
        ("corpus", data.corpus_name),
        ("episodes", str(len(corpus))),
        ("decisions", str(int(index["decisions"].sum()))),
        ("environment steps", str(int(index["steps"].sum()))),
        ("source", counted("source") if "source" in index else "n/a"),
        (data.by, counted(data.by)),
        ("achievement counts", counted("counts") if "counts" in index else "n/a"),
        ("frames", f"{int(index['has_frames'].sum())} of {len(corpus)} episodes"),
    ]
    producers = producer_lines(corpus.episode_metadata())
    pairs += [("producer", line) for line in producers] or [
        ("producer", "not named (recorded or imported without one)")
    ]
    html = facts(pairs)
    estimated = [p for p in range(len(corpus)) if any(p in part.intervals for part in data.parts)]
    if estimated:
        rows = pd.DataFrame(
            {
                "episode": [corpus.ids[p] for p in estimated],
                **{
                    part.name: [_interval(part.intervals, float(part.scores.reward_sum[p]), p) for p in estimated]
                    for part in data.parts
                },
            }
        )
        html += f"<h3>Estimated counts</h3><p>{len(estimated)} episode(s): {text(ESTIMATED)}. Return interval per config:</p>"
        html += table(rows)
    else:
        html += '<p class="muted">No episode has estimated achievement counts: every return is exact.</p>'
    return html


def _interval(intervals: dict[int, tuple[float, float]], scored: float, position: int) -> str:
    """An episode's return interval under one config (the one number when it is exact there)."""
    low, high = intervals.get(position, (scored, scored))
    return interval_text(low, high, 4)


def configs_section(data: ReportData) -> str:
    """Each config as its table (strategy, lambda, weights, k-limits, overrides) and its lint findings.

    Args:
        data: The report's contents.

    Returns:
        The section's HTML.
    """
    html = ""
    for part in data.parts:
        config = part.config
        html += f"<h3>{text(part.name)}</h3>"
        html += facts(
            [
                ("shaping", "on" if config.active else f"off (enabled={config.enabled}, mode={config.mode!r})"),
                ("strategy", config.rule.name),
                ("lambda", f"{config.effective_lambda:g}"),
                ("pays", config.rule.summary),
            ]
        )
        names = sorted(set(config.weights) | set(config.k_limits))
        if names:
            entries = pd.DataFrame(
                {
                    "achievement": names,
                    "weight": [config.weights.get(n, float("nan")) for n in names],
                    "k_limit": [config.k_limits.get(n, float("nan")) for n in names],
                }
            )
            html += table(entries, formats={"k_limit": lambda v: "" if v != v else f"{v:g}"})
        if config.resource_overrides:
            html += f"<p>resource-table overrides: <code>{text(dict(config.resource_overrides))}</code></p>"
        findings = pd.DataFrame(
            [
                {"level": f.level, "code": f.code, "key": f.key, "message": f.message, "suggestion": f.suggestion or ""}
                for f in part.findings
            ],
            columns=["level", "code", "key", "message", "suggestion"],
        )
        html += f"<p>Lint: {len(findings)} finding(s).</p>" + (table(findings) if len(findings) else "")
    return html


def returns_section(data: ReportData) -> str:
    """Returns per config with bootstrap intervals, rank changes and the components that changed most.

    Args:
        data: The report's contents.

    Returns:
        The section's HTML.
    """
    by = data.by
    html = figure_html(
        group_returns(data.returns, by=by, confidence=CONFIDENCE), f"Mean shaped return per {by} and config"
    )
    html += table(
        data.returns.rename(columns={"group": by}),
        formats={c: "{:.4f}" for c in ("mean", "low", "high")},
        caption=f"Mean shaped return per episode, {CONFIDENCE:.0%} bootstrap interval (the {by}'s episodes resampled)",
    )
    names = [p.name for p in data.parts]
    groups = data.corpus.groups(by)
    if len(names) > 1:
        html += "<h3>Rank changes</h3>"
        html += figure_html(rank_changes(data.ranks, groups, by=by), "Episode ranks under each config")
        ranks = data.ranks.reset_index().rename(columns={"index": "episode"})
        ranks.insert(1, by, ranks["episode"].map(groups))
        ranks["moved"] = data.ranks.max(axis=1).to_numpy() - data.ranks.min(axis=1).to_numpy()
        ranks = ranks.sort_values("moved", ascending=False, kind="stable").head(ROWS)
        html += table(
            ranks,
            formats={n: "{:g}" for n in [*names, "moved"]},
            caption="Rank per config (1 = highest return), most moved first",
        )
    reference = data.parts[0]
    for name, comparison in data.comparisons.items():
        labels = (reference.name, name)
        title = f"{short_label(reference.name, 40)} vs {short_label(name, 40)}"
        html += f"<h3>Components that changed most: {text(title)}</h3>"
        html += figure_html(
            compare_configs(comparison, labels=labels, corpus=data.corpus, by=by), f"Returns and components, {title}"
        )
        changes = comparison.largest_changes(12)
        html += table(
            changes[changes["difference"] != 0],
            ["component", "total_a", "total_b", "difference"],
            headers={"total_a": f"total under {reference.name}", "total_b": f"total under {name}"},
            formats={c: "{:.4f}" for c in ("total_a", "total_b", "difference")},
        )
    html += "<h3>Share of reward by component kind</h3>"
    for part in data.parts:
        html += f"<p>{text(part.name)}</p>"
        html += figure_html(
            component_share(part.scores, by=by, corpus=data.corpus), f"Component shares under {part.name}"
        )
    return html


def provenance_section(data: ReportData) -> str:
    """How the report was made: version, command, time, corpus digest.

    Args:
        data: The report's contents.

    Returns:
        The section's HTML.
    """
    made = data.provenance
    return facts(
        [
            ("workbench version", made.version),
            ("command", made.command),
            ("made at (UTC)", made.created),
            ("corpus digest", f"sha256:{made.digest}"),
            ("configs", ", ".join(p.name for p in data.parts)),
        ]
    ) + (
        '<p class="muted">The digest is the SHA-256 of the corpus\'s episode ids, policies, seeds and every '
        "decision's state, reward and actions: the same corpus gives the same digest wherever it is stored.</p>"
    )
