"""The probe corpus: episodes of every probe policy, recorded once in real Crafter and re-scored under any config.

``record_probes(out)`` plays ``episodes`` worlds per probe (``workbench.data.policies.probes``)
into one corpus folder; ``load_probes()`` opens the shipped one, recorded (from the repository
root) with::

    .venv/bin/python -m workbench exploitability --record /tmp/probes
    .venv/bin/python -c "from workbench.data.storage import load_corpus, save_corpus; \
        save_corpus(load_corpus('/tmp/probes'), 'workbench/data/shipped/probes')"

that is ``record_probes`` with its defaults (corpus seed 43, 3 episodes of at most 500 steps per
probe, one action per decision, no frames: 54 episodes, 26,000 decisions, about 1.5 minutes at
150-350 steps/s on the shared 2 cores), saved again as one part (136 KB). It is shipped, not recorded on install
or on first use: Crafter is not reproducible from seed and actions (crafter.md), so a fresh
recording would give other numbers, and recording costs minutes of CPU. ``workbench
exploitability --probes DIR`` uses a probe corpus recorded elsewhere (``--record DIR`` makes one,
e.g. with more episodes or longer ones).
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib import resources
from pathlib import Path

from workbench.data.episodes import Corpus
from workbench.data.policies.probes import PROBES, ProbeFactory
from workbench.data.recording import RecordReport, record
from workbench.data.storage import load_corpus
from workbench.errors import RecordingError

__all__ = ["PROBE_EPISODES", "PROBE_MAX_STEPS", "PROBE_SEED", "load_probes", "record_probes", "shipped_probes_path"]

#: The shipped probe corpus's recipe (``record_probes`` defaults).
PROBE_EPISODES, PROBE_MAX_STEPS, PROBE_SEED = 3, 500, 43


def shipped_probes_path() -> Path:
    """The folder holding the shipped probe corpus inside the installed package.

    Returns:
        The folder.
    """
    return Path(str(resources.files("workbench").joinpath("data", "shipped", "probes")))


def load_probes(path: str | Path | None = None) -> Corpus:
    """A probe corpus (default: the shipped one), its ``policy`` column naming each episode's probe.

    Args:
        path: A folder ``record_probes`` recorded into, or None for the shipped one.

    Returns:
        The corpus (opened lazily; opening it writes nothing).
    """
    return load_corpus(shipped_probes_path() if path is None else Path(path))


def record_probes(
    out: str | Path,
    *,
    probes: Sequence[str] | None = None,
    episodes: int = PROBE_EPISODES,
    max_steps: int = PROBE_MAX_STEPS,
    seed: int = PROBE_SEED,
    workers: int = 1,
    resume: bool = False,
    progress: bool = True,
) -> list[RecordReport]:
    """Record ``episodes`` episodes of every probe (or of ``probes``) into the folder ``out``.

    Every probe plays the same worlds (episode n's world derives from ``(seed, n)``). An
    interrupted run is continued by calling again with the same arguments and ``resume``.

    Args:
        out: The corpus folder (new, or one an earlier call with these arguments began).
        probes: ``PROBES`` names (None: all of them).
        episodes: Episodes per probe.
        max_steps: Crafter steps at most per episode.
        seed: The corpus seed.
        workers: Processes playing episodes (see ``record``).
        resume: Continue a recording ``out`` holds.
        progress: Show tqdm bars.

    Returns:
        One ``RecordReport`` per probe, in order.

    Raises:
        RecordingError: an unknown probe, no probes, or an argument out of range.
        TargetExistsError: ``out`` holds episodes and ``resume`` is False.
    """
    names = list(PROBES) if probes is None else list(probes)
    unknown = [name for name in names if name not in PROBES]
    if unknown or not names:
        raise RecordingError(f"probes: expected some of {', '.join(PROBES)}, got {names}")
    return [
        record(
            ProbeFactory(name),
            episodes,
            out,
            seed=seed,
            max_steps=max_steps,
            workers=workers,
            frames=False,
            resume=resume or i > 0,
            progress=progress,
        )
        for i, name in enumerate(names)
    ]
