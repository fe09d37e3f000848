"""The sample corpus shipped with the package, so tutorials and tests have real episodes at hand.

Recorded (from the repository root) with::

    .venv/bin/python scripts/make_sample_corpus.py --overwrite

which runs ``workbench.data.recording.record`` with corpus seed 2024 for 4 scripted episodes of at
most 600 steps, 3 farmer episodes of at most 400 and 3 random episodes of at most 200, all with
frames, and saves them as one corpus in ``workbench/data/shipped/sample/`` (package data). Crafter is not
reproducible from seed and actions, so the recording is shipped, not regenerated on install
(a re-run records different episodes, and every number the notebooks and tests derive from the
sample would change).

``search_corpus()`` is larger and has no frames, for searching and diagnosing (tutorial 07).
Recorded with::

    .venv/bin/python scripts/make_search_corpus.py --overwrite

which runs ``workbench.data.recording.record`` with corpus seed 2025 and ``frames=False`` for 24
scripted episodes of at most 1500 steps, 24 farmer episodes of at most 1000 and 24 random
episodes of at most 500, saved as one corpus in ``workbench/data/shipped/search_corpus/``: enough that
the search's held-out split (30% per policy) keeps 7 episodes of each policy.

``sample_imports_path()`` holds files in the formats people already have, for tutorial 05:
``crafter.Recorder`` runs and rollout responses made by ``scripts/make_sample_imports.py``, and
four responses of the real synth-ai 0.2.14 task-app server (``taskapp/``, see its README), and a
small trace database of that server with the same rollouts' responses (``traces/``, made by
``scripts/make_sample_traces.py``).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from workbench.data.episodes import Corpus
from workbench.data.storage import load_corpus


def sample_path() -> Path:
    """The folder holding the sample corpus inside the installed package.

    Returns:
        The folder.
    """
    return Path(str(resources.files("workbench").joinpath("data", "shipped", "sample")))


def sample_corpus() -> Corpus:
    """The sample corpus: scripted, farmer and random episodes with frames (opened lazily).

    Returns:
        The corpus shipped with the package (read-only; opening it writes nothing).
    """
    return load_corpus(sample_path())


def search_corpus_path() -> Path:
    """The folder holding the search corpus inside the installed package.

    Returns:
        The folder.
    """
    return Path(str(resources.files("workbench").joinpath("data", "shipped", "search_corpus")))


def search_corpus() -> Corpus:
    """The search corpus: 24 scripted, 24 farmer and 24 random episodes without frames (opened
    lazily), for ``workbench.analysis.search.search`` and ``workbench.analysis.diagnostics.diagnose``.

    Returns:
        The corpus.
    """
    return load_corpus(search_corpus_path())


def sample_imports_path() -> Path:
    """The folder of example files to import: ``recorder/`` (``crafter.Recorder`` ``.npz`` runs),
    ``taskapp/`` (responses of the real task-app server: text observations) and ``rollouts/``
    (rollouts as other producers write them: raw observations, ``done`` and ``on_done = reset``).

    Returns:
        The folder.
    """
    return Path(str(resources.files("workbench").joinpath("data", "shipped", "sample_imports")))
