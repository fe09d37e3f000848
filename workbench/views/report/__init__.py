"""One self-contained HTML page that says what a reward pays and teaches: ``build_report``, ``write_report``.

The page holds the corpus, each config with its lint findings, the returns with bootstrap
intervals, rank changes and the components that changed most, the audit's flags and notes with
evidence and filmstrips, the shaping certificate, reward distances, the advantages a GRPO learner
sees, what probe loops earn under each config without progress against honest play
(exploitability), the over-optimisation watch of a live corpus, and how it was made. Figures are the
workbench's own matplotlib figures (``workbench.views.plots``) inlined as SVG with hover values,
frames as PNG data; the one script sorts tables. It opens offline in any browser and prints to PDF.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from workbench.analysis.audit import Audit, AuditThresholds
from workbench.core.config import RewardConfig
from workbench.data.episodes import Corpus
from workbench.util.atomic import atomic_write_bytes, write_errors_named
from workbench.views.report.contents import ReportData, corpus_digest, gather
from workbench.views.report.exploitability import exploitability_section
from workbench.views.report.findings import audit_section, shaping_section, verdict, watch_section
from workbench.views.report.markup import page
from workbench.views.report.sections import configs_section, corpus_section, provenance_section, returns_section

__all__ = ["ReportData", "build_report", "corpus_digest", "gather", "render", "verdict", "write_report"]


def render(data: ReportData) -> str:
    """The report's HTML for gathered contents.

    Args:
        data: What ``gather`` computed.

    Returns:
        The whole HTML document.
    """
    sections = [
        ("corpus", "Corpus", corpus_section(data)),
        ("configs", "Configs", configs_section(data)),
        ("returns", "Returns", returns_section(data)),
        ("audit", "Audit", audit_section(data)),
        ("shaping", "Shaping, distances and advantages", shaping_section(data)),
        ("exploitability", "Exploitability", exploitability_section(data)),
    ]
    if data.live:
        sections.append(("watch", "Over-optimisation watch", watch_section(data)))
    sections.append(("provenance", "How this report was made", provenance_section(data)))
    return page(f"Reward report: {data.corpus_name}", sections)


def build_report(
    corpus: Corpus,
    configs: Mapping[str, RewardConfig],
    *,
    corpus_name: str,
    command: str,
    by: str = "policy",
    live: bool = False,
    thresholds: AuditThresholds | None = None,
    found: Audit | None = None,
) -> str:
    """The report of ``configs`` on ``corpus`` as one HTML document.

    Args:
        corpus: The episodes.
        configs: The configs by name; the first is the reference the others are compared with.
        corpus_name: How to name the corpus.
        command: What made the report (a command line, a dashboard page), for its provenance.
        by: The index column grouping episodes.
        live: A live run: add the over-optimisation watch.
        thresholds: The audit's thresholds (default ``workbench audit``'s).
        found: An audit already run on the same corpus and configs, shown as it is.

    Returns:
        The HTML.

    Raises:
        WorkbenchError: No configs, an empty corpus or an unknown ``by`` column.
    """
    data = gather(
        corpus, configs, corpus_name=corpus_name, command=command, by=by, live=live, thresholds=thresholds, found=found
    )
    return render(data)


def write_report(path: Path, document: str, *, overwrite: bool = False) -> Path:
    """Write a report atomically (never through a symlink; an existing file only with ``overwrite``).

    Args:
        path: Where to write it.
        document: The HTML.
        overwrite: Replace an existing file.

    Returns:
        The path written.

    Raises:
        TargetExistsError: The file exists and ``overwrite`` is not set.
        UnsafePathError: A symlink, folder or device at the name.
        OutputError: The folder cannot be written.
    """
    with write_errors_named(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        # own: a symlink at the name is refused, never written through
        atomic_write_bytes(path, document.encode("utf-8"), overwrite=overwrite, own=True)
    return path
