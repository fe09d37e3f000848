"""Train PPO (stable-baselines3) on Crafter with the task app's stepwise reward, watched live by the workbench.

    pip install "crafter-reward-workbench[train,live]" "stable-baselines3[extra]"   # brings torch
    python examples/train_sb3.py --config configs/recommended.yaml --steps 200000 --envs 4

What it does:

- makes ``--envs`` copies of ``workbench/CrafterStepwise-v0`` paying ``--config`` (one decision per
  step), each wrapped in ``workbench.env.RecordEpisodes``: every finished episode is saved into
  ``--corpus`` as the agent trains (ready for ``workbench watch``, ``workbench audit --follow`` and
  the app's Live page), and its per-component reward series go to ``--logdir/reward_series/envN``
  as TensorBoard event files, beside SB3's own curves in ``--logdir`` (``tensorboard --logdir
  runs/``);
- every ``--audit-every`` steps, audits the corpus recorded so far (``workbench.analysis.audit``,
  the same checks as ``workbench audit``) and stops training at the first hacking flag (farming,
  a dominating component, dead entries, estimated counts), printing why.

Not a test dependency: torch and stable-baselines3 are not installed by the workbench. Without
them the script says what to install and exits 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

try:
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.vec_env import SubprocVecEnv
except ImportError:  # torch and stable-baselines3 are the user's to install
    PPO = None  # type: ignore[assignment,misc]
    BaseCallback = object  # type: ignore[assignment,misc]

import gymnasium

import workbench.env  # noqa: F401  (registers workbench/CrafterStepwise-v0)
from workbench.analysis.audit import audit
from workbench.core.config import RewardConfig
from workbench.data.storage import holds_episodes, load_corpus
from workbench.env import ENV_ID, RecordEpisodes


def make_env(index: int, args: argparse.Namespace):
    """A factory SubprocVecEnv calls in each worker process: the env, recorded."""

    def build() -> gymnasium.Env:
        env = gymnasium.make(ENV_ID, config=args.config, length=args.length)
        return RecordEpisodes(
            env,
            args.corpus,
            name=f"env{index}",
            num_envs=args.envs,
            tensorboard=Path(args.logdir) / "reward_series" / f"env{index}",
        )

    return build


class AuditGate(BaseCallback):  # type: ignore[misc,valid-type]
    """Stops training when the recorded corpus shows a hacking sign under the training config."""

    def __init__(self, corpus: str, config: RewardConfig, every: int) -> None:
        super().__init__()
        self.corpus, self.config, self.every = corpus, config, every
        self.next_audit = every
        self.flags = None

    def _on_step(self) -> bool:
        # num_timesteps grows by the number of envs per call: audit once past each multiple
        if self.num_timesteps < self.next_audit or not holds_episodes(self.corpus):
            return True
        self.next_audit += self.every
        found = audit(load_corpus(self.corpus), {"training": self.config})
        if found.clean:
            return True
        self.flags = found.flags
        print(f"audit flagged the run at step {self.num_timesteps}:", file=sys.stderr)
        for row in found.flags.itertuples(index=False):
            print(f"  [{row.section}] {row.code} {row.subject}: {row.why}", file=sys.stderr)
        return False  # stop training


def main() -> int:
    """Train, record, audit; exit 1 when the audit stopped the run, 2 without SB3."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default="configs/recommended.yaml", help="the reward config to train on")
    parser.add_argument("--steps", type=int, default=200_000, help="training decisions in total")
    parser.add_argument("--envs", type=int, default=4, help="parallel envs (SubprocVecEnv)")
    parser.add_argument("--length", type=int, default=10_000, help="Crafter's episode length in steps")
    parser.add_argument("--corpus", default="corpora/ppo-live", help="corpus folder episodes are recorded into")
    parser.add_argument("--logdir", default="runs/ppo", help="TensorBoard folder (SB3's curves and the reward series)")
    parser.add_argument("--audit-every", type=int, default=20_000, help="audit the corpus every N steps")
    args = parser.parse_args()
    if PPO is None:
        print('this example needs stable-baselines3 and torch: pip install "stable-baselines3[extra]"', file=sys.stderr)
        return 2
    config = RewardConfig.from_file(args.config)
    vector = SubprocVecEnv([make_env(i, args) for i in range(args.envs)])
    model = PPO("CnnPolicy", vector, verbose=1, tensorboard_log=args.logdir)
    gate = AuditGate(args.corpus, config, args.audit_every)
    model.learn(total_timesteps=args.steps, callback=gate)
    vector.close()  # each RecordEpisodes saves its unfinished episode and waits for its writer
    return 1 if gate.flags is not None else 0


if __name__ == "__main__":
    sys.exit(main())
