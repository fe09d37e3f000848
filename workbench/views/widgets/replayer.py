"""The Replayer: an episode played in the browser beside what each decision was paid.

The frames (or, for text rollouts without frames, the model's map views drawn with Crafter's
textures) go to the page once per episode as one zlib-compressed binary buffer; a small
anywidget front end (``replayer.js``) plays them at the chosen speed and draws the state, the
decision's components, the per-decision reward strip and its cursor in the same tick.
"""

from __future__ import annotations

import json
import zlib
from pathlib import Path
from typing import Any

import anywidget
import ipywidgets as w
import numpy as np
import traitlets

from workbench.core.components import KIND_LABELS, component_label
from workbench.core.config import RewardConfig
from workbench.core.crafter_facts import ACHIEVEMENTS, INVENTORY_ITEMS
from workbench.data.episodes import Corpus, Episode
from workbench.errors import CorpusError
from workbench.scoring import Scores, score
from workbench.views.plots import KIND_COLORS
from workbench.views.widgets.common import counts_note, from_browser
from workbench.views.widgets.map_view import render_views
from workbench.views.widgets.pick import link
from workbench.views.widgets.traits import Pick, ViewTraits

HERE = Path(__file__).parent
#: A decision is a spike when it pays at least this many times the median paying decision.
SPIKE_FACTOR = 3.0
#: Inventory entries shown even at 0 (health 0 is how an episode ends).
VITALS = ("health", "food", "drink", "energy")


class ReplayView(anywidget.AnyWidget):
    """The front end: ``frames`` (zlib of (n, H, W, 3) uint8, ``frame_shape`` = [n, H, W]), the
    ``episode`` data (see ``episode_data``), the shown ``step`` (synced when paused or sought)
    and the ``speed`` in steps per second. The page reports a step with the id of the episode it
    was shown for (``step_episode``), so a report that crosses an episode change is told apart."""

    _esm = HERE / "replayer.js"
    _css = HERE / "replayer.css"
    frames = traitlets.Bytes(b"").tag(sync=True)
    frame_shape = traitlets.List(traitlets.Int(), [0, 0, 0]).tag(sync=True)
    episode = traitlets.Dict({}).tag(sync=True)
    step = traitlets.Int(0).tag(sync=True)
    step_episode = traitlets.Unicode("").tag(sync=True)
    speed = traitlets.Int(10).tag(sync=True)


def picture(episode: Episode) -> tuple[np.ndarray | None, np.ndarray]:
    """What the replay shows and the decision of every step: recorded frames (one per step
    plus reset), else the map views drawn with Crafter's textures (one per state: a step per
    decision), else no picture (a step per decision). Returns (images or None, step_decision).

    Args:
        episode: The episode.

    Returns:
        The images (or None) and the decision of each step.
    """
    if episode.has_frames:
        frames = episode.load_frames(keep=False)  # only the shown episode's frames stay in memory
        return frames.images, np.asarray(frames.step_decision)
    per_decision = np.arange(1, episode.n_decisions + 1, dtype=np.int32)
    if episode.views is not None:
        return render_views(list(episode.views)), per_decision
    return None, per_decision


def episode_data(episode: Episode, config: RewardConfig, step_decision: np.ndarray) -> dict[str, Any]:
    """Everything the front end draws for one episode under ``config`` (plain JSON): per state
    inventory and first unlocks; per decision actions, Crafter's reward, shaped reward (total,
    by component kind, each component), running return; paying decisions and spikes.

    Args:
        episode: The episode.
        config: The config to score it under.
        step_decision: The decision of each step (``picture``).

    Returns:
        The data, as plain JSON types.
    """
    scores = score(Corpus([episode]), config)
    n = episode.n_decisions
    reward = scores.reward.astype(float)
    components = scores.components
    by_kind = {}
    for kind in KIND_COLORS:
        rows = components[components["kind"] == kind]
        if len(rows):
            by_kind[kind] = (
                np.bincount(rows["decision"].to_numpy() - 1, weights=rows["scaled"].to_numpy(), minlength=n)
                .round(9)
                .tolist()
            )
    listed: dict[str, list] = {}
    for decision, kind, name, scaled in zip(
        components["decision"], components["kind"], components["name"], components["scaled"]
    ):
        listed.setdefault(str(int(decision)), []).append([component_label(str(kind), str(name)), float(scaled)])
    status = episode.achievement_status
    assert status is not None  # filled from the counts when not given
    first_unlock = {name: int(np.argmax(status[:, i])) for i, name in enumerate(ACHIEVEMENTS) if status[:, i].any()}
    paying = (np.flatnonzero(reward != 0) + 1).tolist()
    spikes: list[int] = []
    if paying:
        paid = np.abs(reward[np.array(paying) - 1])
        spikes = [d for d, v in zip(paying, paid) if v >= SPIKE_FACTOR * float(np.median(paid))]
    ends = np.cumsum([len(a) for a in episode.actions]) if len(step_decision) != n else np.arange(1, n + 1)
    return {
        "id": episode.id,
        "n_decisions": n,
        "n_steps": len(step_decision),
        "step_per_decision": bool(len(step_decision) == n and not episode.has_frames),
        "step_decision": np.asarray(step_decision).astype(int).tolist(),
        "decision_end": np.asarray(ends).astype(int).tolist(),
        "items": list(INVENTORY_ITEMS),
        "inventory": episode.inventory.tolist(),
        "first_unlock": first_unlock,
        "actions": episode.actions,
        "env_reward": episode.env_reward.astype(float).tolist(),
        "reward": reward.tolist(),
        "return": np.cumsum(reward).tolist(),
        "by_kind": by_kind,
        "kind_colors": {k: KIND_COLORS[k] for k in by_kind},
        "kind_labels": {k: KIND_LABELS[k] for k in by_kind},
        "components": listed,
        "paying": paying,
        "spikes": spikes,
        "messages": list(episode.messages) if episode.messages is not None else None,
        "calls_given": calls_given(episode),
        "config": f"{config.rule.name}, lambda x{config.effective_lambda:g}",
    }


def calls_given(episode: Episode) -> list[str | None] | None:
    """Per decision, its tool calls as the policy gave them where they differ from the actions
    played (the task app skipped, parsed, cut or filled in something), else None; None for an
    episode without calls or where every decision played its one ``interact_many`` list as written.

    Args:
        episode: The episode.

    Returns:
        Per decision the calls as given or None, or None for the whole episode.
    """
    if episode.calls is None:
        return None
    given = [None if _listed(call) == played else call for call, played in zip(episode.calls, episode.actions)]
    return given if any(given) else None


def _listed(call: str) -> list[Any] | None:
    """The action list of a decision's calls when they are exactly one ``interact_many`` call, else None."""
    try:
        calls = json.loads(call)
    except ValueError:
        return None
    if not (isinstance(calls, list) and len(calls) == 1 and isinstance(calls[0], dict)):
        return None
    name = calls[0].get("tool") or calls[0].get("tool_name")
    args = calls[0].get("arguments") or calls[0].get("args")
    return args.get("actions") if name == "interact_many" and isinstance(args, dict) else None


class Replayer(w.VBox, ViewTraits):
    """Replay episodes beside their rewards under a config.

    A widget: pick an episode, play it in the page (Space, arrows, the buttons), jump to the
    previous / next paying decision or the next spike, click the strip to go to a decision.
    Episodes with frames replay their frames; imported text rollouts their map views drawn with
    Crafter's textures, beside the model's message and tool call. Its state is traits, to link
    with ``traitlets.link``/``dlink``/``observe``:

    - ``config``: the config the rewards are scored under (setting it re-scores the episode shown).
    - ``episode``: the id of the episode shown (setting it opens that episode at its start).
    - ``decision``: the decision shown (0 = the reset frame; setting it seeks there, and the
      page's own seeks and pauses set it).
    - ``selection``: the episodes the picker offers (empty: every episode of the corpus).

    ``step`` is the step shown (set it to seek; the page reports it back when paused),
    ``state_at(step)`` what the state panel shows there, ``current`` the ``Episode`` shown.

    Args:
        corpus: The episodes to replay (at least one).
        config: The config to score them under.
        episode: The episode shown first (default: the corpus's first).

    Raises:
        CorpusError: An empty corpus, or no episode ``episode`` in it.
    """

    def __init__(self, corpus: Corpus, config: RewardConfig, *, episode: str | None = None) -> None:
        if len(corpus) == 0:
            raise CorpusError("the Replayer needs a corpus with at least one episode")
        self.corpus = corpus
        ids = corpus.ids
        if episode is not None and episode not in ids:
            raise CorpusError(f"no episode {episode!r} in this corpus")
        self.view = ReplayView()
        self.episode_picker = w.Dropdown(
            options=ids, value=episode or ids[0], description="episode", layout=w.Layout(width="420px")
        )
        self.note = w.HTML(counts_note(corpus))
        super().__init__([w.HBox([self.episode_picker]), self.note, self.view])
        self.add_class("workbench-replayer")
        self.config = config
        self._load(self.episode_picker.value)
        self.observe(lambda change: self._load(change["new"]), names="episode")
        self.observe(self._rescore, names="config")
        self.observe(self._seek_decision, names="decision")
        self.observe(self._offer, names="selection")
        w.link((self.episode_picker, "value"), (self, "episode"))
        self.view.observe(self._reported, names="step")

    def _reported(self, change: dict[str, Any]) -> None:
        # The page reports its step a moment after a pause or seek: a report for the episode shown
        # before (it crossed the switch on the wire) is no step of this one, so the page is told again.
        if from_browser(change) and self.view.step_episode not in ("", self.current.id):
            self.view.step_episode = self.current.id  # first: the step set next is this episode's
            self.view.step = int(change["old"])
            return
        self.decision = self.decision_at(self.view.step)

    def _seek_decision(self, change: dict[str, Any]) -> None:
        decision = int(change["new"])
        if decision != self.decision_at(self.view.step):  # not the step's own report
            self.step = self.data["decision_end"][decision - 1] if decision > 0 else 0

    @traitlets.validate("decision")
    def _valid_decision(self, proposal: dict[str, Any]) -> int:
        decision, shown = int(proposal["value"]), getattr(self, "current", None)
        if shown is not None and not 0 <= decision <= shown.n_decisions:
            raise CorpusError(f"episode {shown.id!r} has decisions 1 to {shown.n_decisions}, not {decision}")
        return decision

    def _offer(self, change: dict[str, Any]) -> None:
        offered = [e for e in change["new"] if e in self.corpus.ids] or self.corpus.ids
        if self.episode not in offered:
            self.episode = offered[0]
        self.episode_picker.options = offered

    def follow(self, source: ViewTraits) -> None:
        """Open every pick of ``source`` here (``pick.link(replayer=self, pickers=(source,))``):
        scored under ``source``'s ``config`` at the pick, at ``Pick.opens_at``. Following the
        same view twice follows it once.

        Args:
            source: A view with ``config`` and ``picked`` traits (a Tuner, Compare, Timeline, a panel).
        """
        link(replayer=self, pickers=(source,))

    def open_pick(self, pick: Pick, config: RewardConfig | None = None) -> None:
        """Open ``pick`` where every view opens it (``Pick.opens_at``: the decision it names,
        else the episode's highest-paying one), scored under ``config`` when given.

        Args:
            pick: The pick.
            config: The picking view's config at the pick, or None (keep the Replayer's).

        Raises:
            CorpusError: No episode of that id in the corpus, or no such decision in it.
        """
        if config is not None:
            self.config = config
        self.open_episode(pick.episode, decision=pick.opens_at)

    # -- what is shown ---------------------------------------------------------------------
    @property
    def step(self) -> int:
        """The step shown (0 = the reset frame); the page reports it when paused or sought."""
        return self.view.step

    @step.setter
    def step(self, value: int) -> None:
        """Show step ``value`` (clamped to the episode)."""
        self.view.step = int(max(0, min(value, self.data["n_steps"])))

    @property
    def scores(self) -> Scores:
        """The whole corpus scored under the Replayer's config (computed on first use per config)."""
        cached: Scores | None = getattr(self, "_scores", None)
        if cached is None or cached.config is not self.config:
            cached = self._scores = score(self.corpus, self.config)
        return cached

    @property
    def n_steps(self) -> int:
        """Steps of the shown episode (environment steps with frames, else decisions)."""
        return int(self.data["n_steps"])

    def _load(self, episode_id: str | None) -> None:
        shown = getattr(self, "current", None)
        if episode_id is None or (shown is not None and episode_id == shown.id):
            # a pick passing through None (see ``Tuner.episode``) leaves the episode shown as it is
            self.episode = shown.id if shown is not None else None
            return
        if episode_id not in self.corpus.ids:
            raise CorpusError(f"no episode {episode_id!r} in this corpus")
        self.current = self.corpus[episode_id]
        images, self.step_decision = picture(self.current)
        self.data = episode_data(self.current, self.config, self.step_decision)
        shape = [0, 0, 0] if images is None else list(images.shape[:3])
        raw = b"" if images is None else zlib.compress(np.ascontiguousarray(images).tobytes(), 1)
        with self.view.hold_sync():
            self.view.frame_shape = shape
            self.view.frames = raw
            self.view.episode = self.data
            self.view.step = 0  # another episode starts at its start (its steps are other steps)
        self.images = images
        self.episode = episode_id
        self.decision = 0

    def open_episode(self, episode: str, *, decision: int | str | None = None) -> None:
        """Show ``episode``; at ``decision`` (1-based, or ``"best"``: its highest-paying one),
        else at its start (or the step shown now when it is the episode shown).

        Args:
            episode: An episode id of the corpus.
            decision: The decision to show (0: the reset frame), ``"best"``, or None.

        Raises:
            CorpusError: No episode of that id in the corpus, or no such decision in it.
        """
        if episode not in self.corpus.ids:
            raise CorpusError(f"no episode {episode!r} in this corpus")
        self.episode = episode  # loads it (when it is not the one shown)
        if decision is None:
            return
        chosen = int(np.argmax(np.asarray(self.data["reward"]))) + 1 if decision == "best" else int(decision)
        chosen = self._valid_decision({"value": chosen})
        self.step = self.data["decision_end"][chosen - 1] if chosen > 0 else 0

    def _rescore(self, change: dict[str, Any]) -> None:
        """Score the shown episode (and later ones) under the new ``config``."""
        self.data = episode_data(self.current, change["new"], self.step_decision)
        self.view.episode = self.data

    def decision_at(self, step: int) -> int:
        """The 1-based decision that step ``step`` belongs to (0 for the reset frame).

        Args:
            step: A step of the shown episode.

        Returns:
            The decision (0 for the reset frame).
        """
        return 0 if step <= 0 else int(self.step_decision[step - 1])

    def completed_at(self, step: int) -> int:
        """How many decisions are complete once ``step`` steps have run.

        Args:
            step: A step of the shown episode.

        Returns:
            How many decisions are complete.
        """
        return int(np.searchsorted(self.data["decision_end"], step, side="right"))

    def state_at(self, step: int) -> dict[str, Any]:
        """What the page shows at ``step``: ``decision`` (0 = reset), ``completed`` decisions,
        the ``inventory`` (the vitals always, other items when held) and ``achievements`` after them, the decision's
        ``actions``, Crafter's ``env_reward`` and shaped ``reward``, and its ``components``.

        Args:
            step: A step of the shown episode.

        Returns:
            The state panel's content as a dict.
        """
        decision, completed = self.decision_at(step), self.completed_at(step)
        inventory = dict(zip(INVENTORY_ITEMS, self.data["inventory"][completed]))
        return {
            "decision": decision,
            "completed": completed,
            "inventory": {k: v for k, v in inventory.items() if v or k in VITALS},
            "achievements": [k for k, at in self.data["first_unlock"].items() if at <= completed],
            "actions": self.current.actions[decision - 1] if decision else [],
            "env_reward": float(self.current.env_reward[decision - 1]) if decision else 0.0,
            "reward": self.data["reward"][decision - 1] if decision else 0.0,
            "components": self.data["components"].get(str(decision), []),
        }
