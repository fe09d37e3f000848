"""Live folder sources: rollout JSON files landing in a folder, a crafter.Recorder folder, a corpus being written."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from workbench.data.episodes import Corpus, Episode
from workbench.data.importers import ImportIssue, ImportResult, import_crafter_recorder, import_rollouts
from workbench.data.storage import MARKER, committed_parts, load_corpus, part_file
from workbench.data.watch.settle import FileSettler
from workbench.data.watch.source import Poll, source_key, with_origin
from workbench.errors import WorkbenchError


class _FileSource:
    """Episodes read from files that land in a folder, each read once complete (``FileSettler``)."""

    kind = ""
    suffixes: tuple[str, ...] = ()

    def __init__(self, path: Path, importer: Callable[[Path], ImportResult], *, retries: int = 2) -> None:
        self.path = Path(path)
        self._import = importer
        self._settler = FileSettler(self.path, self.suffixes, retries=retries)
        self._reported: set[str] = set()

    @property
    def key(self) -> str:
        """See ``Source.key``."""
        return source_key(self.kind, self.path)

    def poll(self) -> Poll:
        """Read the files that became complete; see ``Source.poll``."""
        ready, settling = self._settler.ready()
        episodes: list[Episode] = []
        landed: list[float] = []
        problems: list[ImportIssue] = []
        for folder, reason in self._settler.unreadable.items():
            issue = ImportIssue(
                folder, "", f"cannot list this folder ({reason}): its files are not read until it can be"
            )
            if str(issue) not in self._reported:
                self._reported.add(str(issue))
                problems.append(issue)
        for rel, signature in ready:
            result = self._import(self.path / rel)
            if result.errors and not self._settler.failed(rel, signature):
                settling += 1  # maybe still being written: read again next poll while it stays unchanged
                continue
            self._settler.take(rel, signature)
            for episode in result.corpus:
                episodes.append(with_origin(episode, self.key, self.item(rel, episode)))
                landed.append(signature[1] / 1e9)
            for issue in result.errors:
                text = str(issue)
                if text not in self._reported:  # a file that grows keeps its old problems: say them once
                    self._reported.add(text)
                    problems.append(issue)
        return Poll(Corpus(episodes), landed, problems, settling)

    def item(self, rel: str, episode: Episode) -> str:
        """Where in the source ``episode`` came from (stable when the file is read again)."""
        return rel

    def progress(self) -> dict[str, Any]:
        """The files taken and the signatures they were taken at."""
        return {"files": {rel: list(signature) for rel, signature in self._settler.taken.items()}}

    def restore(self, progress: dict[str, Any]) -> None:
        """Skip the files an earlier run took, unless they changed since."""
        files = progress.get("files") if isinstance(progress, dict) else None
        if isinstance(files, dict):
            for rel, signature in files.items():
                if isinstance(signature, list) and len(signature) == 2 and all(isinstance(v, int) for v in signature):
                    self._settler.taken[str(rel)] = (signature[0], signature[1])

    def watch_paths(self) -> list[Path]:
        """The folder itself, once it exists."""
        return [self.path] if self.path.is_dir() else []


class RolloutFolder(_FileSource):
    """A folder task-app rollout responses (``.json``, ``.jsonl``) keep landing in."""

    kind = "rollouts"
    suffixes = (".json", ".jsonl")

    def __init__(self, path: Path, *, retries: int = 2) -> None:
        super().__init__(path, lambda file: import_rollouts(file, progress=False), retries=retries)

    def item(self, rel: str, episode: Episode) -> str:
        """The file, the response's place in it and the episode's place in its trajectory."""
        metadata = episode.metadata
        return f"{rel}|{metadata.get('location', '')}|{metadata.get('episode_in_trajectory', 0)}"


class RecorderFolder(_FileSource):
    """A folder ``crafter.Recorder`` writes its ``.npz`` episode files into (one episode a file)."""

    kind = "recorder"
    suffixes = (".npz",)

    def __init__(self, path: Path, *, retries: int = 2) -> None:
        super().__init__(path, lambda file: import_crafter_recorder(file, progress=False), retries=retries)


class CorpusFolder:
    """A corpus folder that ``workbench record`` (or any writer) keeps adding parts to.

    A part exists once its episodes table (written last, by rename) does, so a committed part
    is complete: each new one is read once (only that part is opened). An episode the writer
    wrote again (``overwrite``) comes back under the same id: the watcher keeps the first."""

    kind = "corpus"
    #: An item (an episode id in the corpus, a session id in the database) names one episode for good.
    items_are_identities = True

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._seen: set[str] = set()

    @property
    def key(self) -> str:
        """See ``Source.key``."""
        return source_key(self.kind, self.path)

    def poll(self) -> Poll:
        """Read the parts committed since the last poll; a part that cannot be read is a problem."""
        if not (self.path / MARKER).exists():
            return Poll()
        episodes: list[Episode] = []
        landed: list[float] = []
        problems: list[ImportIssue] = []
        settling = 0
        for part in committed_parts(self.path):
            if part in self._seen:
                continue
            try:
                corpus = load_corpus(self.path, parts=[part])
                when = part_file(self.path, "episodes", part).stat().st_mtime_ns / 1e9
            except WorkbenchError as error:  # the part itself is broken: reported, not read again
                self._seen.add(part)
                problems.append(ImportIssue(str(self.path), f"part {part}", str(error)))
                continue
            except OSError:  # transient (a read error, a file moved mid-read): read again next poll
                settling += 1
                continue
            self._seen.add(part)
            for episode in corpus:
                episodes.append(with_origin(episode, self.key, episode.id))
                landed.append(when)
        return Poll(Corpus(episodes), landed, problems, settling)

    def progress(self) -> dict[str, Any]:
        """The parts read."""
        return {"parts": sorted(self._seen)}

    def restore(self, progress: dict[str, Any]) -> None:
        """Skip the parts an earlier run read."""
        parts = progress.get("parts") if isinstance(progress, dict) else None
        if isinstance(parts, list):
            self._seen.update(str(p) for p in parts)

    def watch_paths(self) -> list[Path]:
        """The episodes table folder (a part commits there)."""
        folder = self.path / "episodes"
        return [folder] if folder.is_dir() else ([self.path] if self.path.is_dir() else [])
