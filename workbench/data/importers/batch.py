"""What an import returns (``ImportResult``, ``ImportIssue``) and how a batch goes on past bad items."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.data.episodes import Corpus, DecisionArrays, Episode, check_values, unique_id
from workbench.data.importers.counts import estimated_counts_line
from workbench.data.importers.producers import producer_lines
from workbench.data.importers.toolcalls import NORMALISATIONS
from workbench.data.storage import check_storable
from workbench.errors import EpisodeError, WorkbenchError

#: The longest episode id an importer keeps whole; longer ones are shortened with a hash (a
#: file name past 255 bytes cannot be created: ENAMETOOLONG).
MAX_ID_CHARS = 120
#: How many normalised decisions the report names per file.
NAMED_NORMALISED = 3


@dataclass(frozen=True)
class Normalised:
    """One decision whose tool calls the task app partly ignored or changed (``NORMALISATIONS`` keys)."""

    episode: str
    decision: int
    notes: tuple[str, ...]


@dataclass(frozen=True)
class ImportIssue:
    """One bad item: the file, where in it (line, JSON path, array) and what is wrong.

    Attributes:
        file: The file (or folder) the item came from, as given ("" when not known).
        location: Where in the file: a line (``line 7``), a JSON path or an array name;
            empty for the whole file.
        message: What is wrong, in words.
    """

    file: str
    location: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}: {self.location}" if self.location else self.file
        return f"{where}: {self.message}"


@dataclass
class ImportResult:
    """The episodes that imported cleanly, the problems with everything else, and warnings
    about imported episodes (e.g. a text observation that disagrees with what was logged).

    Attributes:
        corpus: The episodes that imported cleanly, ids made unique within the batch.
        errors: One issue per item that did not import (the batch went on past it).
        files: How many files were read.
        warnings: Issues about episodes that did import.
        normalised: Per file, the decisions whose tool calls were normalised by the task
            app's rules.
        notes: Other things the report says (e.g. sessions of a trace database already
            imported).
    """

    corpus: Corpus
    errors: list[ImportIssue] = field(default_factory=list)
    files: int = 0
    warnings: list[ImportIssue] = field(default_factory=list)
    normalised: dict[str, list[Normalised]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when every item imported (warnings do not count)."""
        return not self.errors

    def __str__(self) -> str:
        index = self.corpus.index
        metadata = self.corpus.episode_metadata()
        return report_text(
            self, len(self.corpus), self.corpus.n_decisions, metadata, list(index["episode"]), list(index["counts"])
        )

    @property
    def n_normalised(self) -> int:
        """How many imported decisions had tool calls the task app partly ignored or changed."""
        return sum(len(decisions) for decisions in self.normalised.values())

    def normalised_lines(self) -> list[str]:
        """A line per file: how many decisions were normalised, how, and the first few by name.

        Returns:
            One line per file of ``normalised``, in the order the files were read (empty when
            no decision was normalised).
        """
        return normalised_lines(self.normalised)


def normalised_lines(normalised: dict[str, list[Normalised]]) -> list[str]:
    """A line per file: how many decisions were normalised, how, and the first few by name.

    Args:
        normalised: Per file, the decisions whose calls were normalised.

    Returns:
        One line per file, in the order the files were read.
    """
    lines = []
    for file, decisions in normalised.items():
        tally: dict[str, int] = {}
        for decision in decisions:
            for note in decision.notes:
                tally[note] = tally.get(note, 0) + 1
        how = "; ".join(f"{NORMALISATIONS[note]}: {n}" for note, n in tally.items())
        named = ", ".join(f"{d.episode} decision {d.decision}" for d in decisions[:NAMED_NORMALISED])
        more = ", ..." if len(decisions) > NAMED_NORMALISED else ""
        lines.append(
            f"{file}: {len(decisions)} decision(s) played by the task app's tool-call rules ({how}); e.g. {named}{more}"
        )
    return lines


def report_text(
    outcome: ImportResult | Any,
    episodes: int,
    decisions: int,
    metadata: Iterable[Mapping[str, Any]],
    ids: Sequence[str],
    counts: Sequence[Any],
) -> str:
    """An import's report: what imported, each problem, warning and note.

    Args:
        outcome: Its ``files``, ``errors``, ``warnings``, ``normalised`` and ``notes``.
        episodes: How many episodes imported.
        decisions: How many decisions they hold.
        metadata: Each imported episode's metadata (its producer is read).
        ids: The imported episodes' ids.
        counts: Their counts sources (``COUNT_SOURCES``).

    Returns:
        The report, one item a line.
    """
    lines = [
        f"imported {episodes} episode(s), {decisions} decision(s) "
        f"from {outcome.files} file(s); {len(outcome.errors)} problem(s)"
    ]
    lines += [f"  - {issue}" for issue in outcome.errors]
    lines += [f"  warning: {issue}" for issue in outcome.warnings]
    lines += [f"  note: {line}" for line in normalised_lines(outcome.normalised) + outcome.notes]
    lines += [f"  note: {line}" for line in producer_lines(metadata)]
    estimated = estimated_counts_line(list(ids), list(counts)) if episodes else None
    if estimated:
        lines.append(f"  note: {estimated}")
    return "\n".join(lines)


class BadInput(WorkbenchError):
    """Raised while reading one item; becomes an ``ImportIssue`` once the file is known."""

    def __init__(self, location: str, message: str) -> None:
        super().__init__(message)
        self.location = location
        self.message = message


class Collector:
    """Gathers a batch's episodes and issues, giving repeated ids (two files may carry the same
    run id or stem) a ``-2``, ``-3`` ... suffix as ``Corpus.concat`` does."""

    def __init__(self) -> None:
        self.episodes: list[Episode] = []
        self.errors: list[ImportIssue] = []
        self.warnings: list[ImportIssue] = []
        self.normalised: dict[str, list[Normalised]] = {}
        self._seen: set[str] = set()
        self._renamed: dict[str, str] = {}

    def add(self, episode: Episode, file: str | None = None) -> bool:
        """Keep ``episode`` under an id unique in the batch, if it can be stored (else it is
        an issue of ``file`` at the episode's ``metadata["location"]`` and the batch goes on),
        noting (under ``file``) the decisions whose calls were normalised
        (``metadata["normalised_calls"]``). Returns whether it was kept."""
        problem = unstorable(episode, file)
        if problem is not None:
            self.errors.append(problem)
            return False
        self.keep(episode, file)
        return True

    def keep(self, episode: Episode, file: str | None = None) -> None:
        """``add`` for an episode already checked (``unstorable`` found nothing, e.g. in a
        worker process): its id made unique in the batch, its normalised decisions noted."""
        unique = unique_id(safe_id(episode.id), self._seen)
        self._seen.add(unique)
        # An episode's predecessor in its trajectory arrived just before it: map to its new id.
        if "follows" in episode.metadata:
            episode.metadata["follows"] = self._renamed.get(episode.metadata["follows"], episode.metadata["follows"])
        self._renamed[episode.id] = unique
        episode.id = unique
        self.episodes.append(episode)
        for decision, notes in episode.metadata.get("normalised_calls") or []:
            self.normalised.setdefault(file or "", []).append(Normalised(unique, int(decision), tuple(notes)))

    def result(self, files: int) -> ImportResult:
        """The batch's outcome."""
        return ImportResult(Corpus(self.episodes), self.errors, files, self.warnings, self.normalised)


def unstorable(episode: Episode, file: str | None = None, *, values: bool = True) -> ImportIssue | None:
    """The issue (of ``file``, at the episode's ``metadata["location"]``) when ``episode``
    cannot be stored (what a save would refuse), else None.

    Args:
        episode: An imported episode.
        file: The file it came from.
        values: Check its decisions' value ranges too (False: checked for a batch already).

    Returns:
        The issue, or None.
    """
    return _checked(episode, file, values)[0]


def _checked(episode: Episode, file: str | None, values: bool) -> tuple[ImportIssue | None, str | None]:
    """``unstorable``'s issue, and the ``logged`` text the check made (None: an issue, or no log)."""
    try:
        row = check_storable(episode, values=values)
    except EpisodeError as error:
        # Where the counts came from explains most disagreements (estimated from a text
        # inventory that gained an item whose unlock the Achievements line does not show).
        note = episode.metadata.get("counts_note")
        why = f"; counts {episode.metadata.get('counts')}: {note}" if "status_" in str(error) and note else ""
        location = str(episode.metadata.get("location", ""))
        return ImportIssue(file or "", location, f"cannot be stored: {error}{why}"), None
    return None, row["logged"]


def unstorable_all(episodes: Sequence[Episode], file: str | None = None) -> list[ImportIssue | None]:
    """``unstorable`` of each episode, the value ranges checked for all of them at once (numpy's
    per-call cost paid once, not per episode: most of a short episode's check); when that finds
    a problem, each episode is checked alone, so the issues are exactly ``unstorable``'s.

    Args:
        episodes: Imported episodes.
        file: The file they came from.

    Returns:
        Per episode, its issue or None.
    """
    return storable_texts(episodes, file)[0]


def storable_texts(
    episodes: Sequence[Episode], file: str | None = None
) -> tuple[list[ImportIssue | None], list[str | None]]:
    """``unstorable_all``'s issues, and per episode the ``logged`` text its check made, which a
    save of the episode unchanged reuses (``StagedSave.add``) instead of encoding it again.

    Args:
        episodes: Imported episodes.
        file: The file they came from.

    Returns:
        Per episode its issue or None, and per episode its ``logged`` text (None for an issue or
        an episode without a log).
    """
    try:
        check_values(DecisionArrays.from_episodes(episodes))
        values = False
    except Exception:  # noqa: BLE001 - any problem (or none to check): each alone says which
        values = True
    checked = [_checked(e, file, values) for e in episodes]
    return [issue for issue, _ in checked], [text for _, text in checked]


def checked_items(
    items: Sequence[Episode | ImportIssue], file: str
) -> tuple[list[Episode | ImportIssue], list[str | None]]:
    """A file's items with each episode that cannot be stored replaced by its issue, in place
    (``storable_texts``: the episodes checked together), and the ``logged`` text of each episode
    kept, in order.

    Args:
        items: Episodes and issues, in the file's order.
        file: The file.

    Returns:
        The items for ``keep_items``, and the kept episodes' ``logged`` texts.
    """
    episodes = [item for item in items if isinstance(item, Episode)]
    issues, texts = storable_texts(episodes, file)
    found = iter(issues)
    checked = [item if isinstance(item, ImportIssue) else next(found) or item for item in items]
    return checked, [text for text, issue in zip(texts, issues) if issue is None]


def keep_items(collected: Collector, file: str, items: Sequence[Episode | ImportIssue]) -> None:
    """Add one file's items, read and checked elsewhere (``unstorable``: a worker process), to
    ``collected`` in the file's order: each episode kept (``Collector.keep``, with a warning
    where its text disagrees with what the task app logged), each issue an error."""
    for item in items:
        if isinstance(item, ImportIssue):
            collected.errors.append(item)
            continue
        collected.keep(item, file)
        disagree = item.metadata.get("inventory_disagrees")
        if disagree:
            collected.warnings.append(
                ImportIssue(
                    file,
                    item.metadata.get("location", ""),
                    f"episode {item.id!r}: the text inventory disagrees with the logged inventory_deltas "
                    f"at decision(s) {disagree[:10]}: the file may have been edited",
                )
            )


def batch_files(path: Path, patterns: Sequence[str], what: str) -> tuple[list[Path], Collector]:
    """The files to read under ``path`` (itself, when it is a file) and a collector for the
    batch, which already holds an issue when there is nothing to read."""
    collected = Collector()
    if path.is_file():
        return [path], collected
    # Suffixes match in any case (a .JSONL is a .jsonl); the patterns are "*.<suffix>".
    suffixes = {pattern.lstrip("*").lower() for pattern in patterns}
    files = sorted(f for f in path.rglob("*") if f.suffix.lower() in suffixes and f.is_file()) if path.is_dir() else []
    if not path.is_dir():
        problem = (
            "not a regular file or folder (a FIFO, socket or device)" if path.exists() else "no such file or folder"
        )
        collected.errors.append(ImportIssue(str(path), "", problem))
    elif not files:
        collected.errors.append(ImportIssue(str(path), "", f"no {what} found (looked for {', '.join(patterns)})"))
    return files, collected


def unexpected(error: BaseException) -> str:
    """An item's problem from an exception no check foresaw (a huge number, a deep nesting, an
    odd type): its type and message, so the batch goes on and the report says what broke."""
    if isinstance(error, RecursionError):
        return "nested too deeply to read"
    return f"could not be read ({type(error).__name__}: {str(error)[:200]})"


def safe_id(episode_id: str) -> str:
    """``episode_id`` whole when short enough to be a file name, else its first characters and a
    hash of the whole (so two long ids stay distinct)."""
    if len(episode_id) <= MAX_ID_CHARS:
        return episode_id
    digest = hashlib.sha256(episode_id.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"{episode_id[: MAX_ID_CHARS - 13]}-{digest}"
