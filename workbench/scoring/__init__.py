"""The stepwise reward over whole corpora, vectorised: what a table would pay, decision by decision.

``score(corpus, config)`` gives the same numbers as ``workbench.core.episode_reward.score_episode`` run on
every episode (the reference, one ``compute_stepwise_reward`` call per decision), as three tidy
tables (``Scores.components``, ``Scores.decisions``, ``Scores.episodes``), without a Python loop
per decision. Floats are summed in the task app's order (``np.bincount`` adds its weights
sequentially, starting from 0.0), so rewards match the reference bit for bit in practice; the
tests hold them to 1e-12.

``LiveScores`` (``workbench.scoring.incremental``) keeps per-episode scores of a growing corpus
under several configs, scoring only what each append adds.

The work splits in two:

- ``prepare(corpus) -> PreparedCorpus`` reads the episodes once and keeps everything that does
  not depend on a config: unlock events (which name, which decision, the per-episode ordinal of
  that name's unlocks), positive inventory and achievement-count deltas, Crafter's rewards,
  per-episode facts. It is cached per ``Corpus`` object, so a second ``score`` reuses it.
- ``score(prepared, config)`` recombines those arrays with the weights: a few gathers and
  ``bincount``s. The per-episode table is built at once; the large per-decision and
  per-component tables are built on first access, so a weight slider re-scores a million
  decisions in milliseconds.

Every layer asks the config's rule (``config.rule``, ``workbench.core.reward_rule``) what it
pays; ``workbench.scoring.pay`` is the one place the pay is rebuilt from the prepared arrays
(``Scores.payments``, ``Scores.kind_pay``, ``Scores.pay(kind)``).

Like ``score_episode``, scoring ignores ``config.active``: it answers "what would this table
pay", and lint says when the task app would not shape at all.

Re-scoring is fastest when glibc keeps the last score's freed memory for reuse; importing this
package does not change the allocator: a program opts in with
``workbench.util.memory.retain_freed_memory()`` (the CLI and the dashboard do).
"""

from workbench.scoring.comparison import Comparison, compare
from workbench.scoring.component_table import COMPONENT_NAMES
from workbench.scoring.crafter_score import crafter_score, success_rates
from workbench.scoring.incremental import KIND_COLUMNS, LiveScores
from workbench.scoring.pay import Payments, kind_pay, payments, slot_pay
from workbench.scoring.prepare import PreparedCorpus, prepare
from workbench.scoring.score import score
from workbench.scoring.scores import Scores
from workbench.scoring.verify import VERIFY_TOLERANCE, Verification, verify, verify_logged
from workbench.scoring.weights import achievement_limits, achievement_weights, credited_unlocks, slot_weights

__all__ = [
    "COMPONENT_NAMES",
    "KIND_COLUMNS",
    "VERIFY_TOLERANCE",
    "Comparison",
    "LiveScores",
    "Payments",
    "PreparedCorpus",
    "Scores",
    "Verification",
    "achievement_limits",
    "achievement_weights",
    "compare",
    "crafter_score",
    "credited_unlocks",
    "kind_pay",
    "payments",
    "prepare",
    "score",
    "slot_pay",
    "slot_weights",
    "success_rates",
    "verify",
    "verify_logged",
]
