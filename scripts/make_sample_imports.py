"""Write the example files that tutorial 05 imports, into ``workbench/data/shipped/sample_imports/``.

Usage, from the repository root::

    .venv/bin/python scripts/make_sample_imports.py --overwrite

- ``recorder/``: two short random-action episodes written by ``crafter.Recorder`` itself (the
  ``.npz`` files a Crafter user already has).
(``taskapp/``, four responses of the real task-app server, is made by ``tests/taskapp/produce.py``;
``traces/``, a trace database of that server, by ``scripts/make_sample_traces.py``.)

- ``rollouts/shaped_raw.json``: one task-app rollout response with raw observation dicts,
  per_achievement shaping on, 5 actions per decision and ``on_done = "reset"``, so it holds two
  episodes (the second one's first decision shows quirk 7).
- ``rollouts/text_runs.jsonl``: two responses storing observations as the task app's text, one
  per_achievement, one consistent.

The rollouts are played on real Crafter by ``tests/helpers/rollouts.py``, which mirrors the task
app's rollout loop (synth-ai.md) and logs each decision's ``info.stepwise`` as the task app does.
Like the sample corpus, the files are shipped: Crafter does not replay byte-identically.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

import crafter
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
# The rollout player is test code (tests/helpers), shared with the tests that check these files.
sys.path.insert(0, str(ROOT / "tests"))
from helpers.rollouts import play_rollout, raw_variant, text_variant  # noqa: E402

DEFAULT_OUT = ROOT / "workbench" / "data" / "shipped" / "sample_imports"
CONSISTENT_TABLE = {"enabled": True, "mode": "decision_stepwise", "strategy": "consistent", "indicator_lambda": 1.0}


def write_recorder_runs(folder: Path) -> None:
    """Random-action episodes through ``crafter.Recorder`` (no video: the npz holds the frames)."""
    rng = np.random.default_rng(11)
    for seed, length in ((11, 90), (12, 60)):
        env = crafter.Recorder(crafter.Env(seed=seed, length=length), folder, save_video=False)
        env.reset()
        done = False
        while not done:
            _, _, done, _ = env.step(int(rng.integers(env.action_space.n)))


def write_rollouts(folder: Path) -> None:
    shaped = play_rollout(
        seed=21, decisions=40, actions_per_decision=5, episode_length=120, run_id="shaped-run-21", include_request=True
    )
    (folder / "shaped_raw.json").write_text(json.dumps(raw_variant(shaped), indent=1), encoding="utf-8")
    runs = [
        play_rollout(seed=22, decisions=30, actions_per_decision=3, run_id="text-run-22", include_request=True),
        play_rollout(
            seed=23,
            decisions=30,
            actions_per_decision=3,
            table=CONSISTENT_TABLE,
            run_id="text-run-23",
            include_request=True,
        ),
    ]
    lines = [json.dumps(text_variant(run)) for run in runs]
    (folder / "text_runs.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


PARTS = {"recorder": write_recorder_runs, "rollouts": write_rollouts}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"output folder (default {DEFAULT_OUT})")
    parser.add_argument(
        "--parts",
        nargs="+",
        choices=list(PARTS),
        default=list(PARTS),
        help="which sub-folders to write (default both; taskapp/ is made by tests/taskapp/produce.py)",
    )
    parser.add_argument("--overwrite", action="store_true", help="replace existing sub-folders")
    args = parser.parse_args(argv)
    for part in args.parts:
        target = args.out / part
        if target.exists() and not args.overwrite:
            parser.error(f"{target} exists; pass --overwrite to replace it")
        # Write beside the target, then swap, so a failure never leaves half the files.
        staged = target.with_name(f".{part}.new")
        shutil.rmtree(staged, ignore_errors=True)
        staged.mkdir(parents=True)
        PARTS[part](staged)
        shutil.rmtree(target, ignore_errors=True)
        staged.rename(target)
        for file in sorted(target.rglob("*.*")):
            print(f"{file.relative_to(ROOT)}: {file.stat().st_size / 1e3:.0f} kB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
