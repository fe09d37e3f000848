"""Frames on disk: what the lossless codec costs by day and by night, and what Crafter's night noise alone carries.

    .venv/bin/python benchmarks/bench_frames.py                 # 3 seeds x 900 steps (three days)
    .venv/bin/python benchmarks/bench_frames.py --seeds 1 --steps 600

Plays Crafter with seeded random actions (episode after episode) and, after every step, renders
the same view a second time with ``LocalView._noise`` mixing nothing in, the world's random
state saved before and restored after (so the game plays on as if it had not happened): by day
the two frames are equal, by night they differ exactly by the noise Crafter draws per pixel
from that random state. Then per seed:

- bytes per step of ``workbench.data.storage.frames.encode`` (the corpus codec) on the real frames,
  on their day steps and on their night steps (Crafter's daylight below 0.5), each stack
  encoded whole as a corpus stores an episode;
- the same codec on the noise-free night frames (what the pictures themselves cost);
- the noise alone: the per-pixel difference of the two renders at night, compressed with zstd
  level 19 and with xz (lzma, preset 9 extreme), per night step.

Night is ~42% of every 300-step day (``daylight = 1 - |cos(pi (t / 300 + 0.3))|^3`` is below
0.5 for t in 148..272), fewer steps when random agents die early; bytes per step overall = day
share x day cost + night share x night cost. The last line is machine-readable.
"""

from __future__ import annotations

import argparse
import lzma
import os
import statistics
from collections.abc import Iterator
from contextlib import contextmanager

import crafter
import numpy as np
import pyarrow as pa
from crafter import engine

from workbench.data.storage.frames import encode


@contextmanager
def without_noise() -> Iterator[None]:
    """``LocalView._noise`` returns the canvas as it is (the caller restores the random state)."""
    original = engine.LocalView._noise
    engine.LocalView._noise = lambda self, canvas, amount, stddev: canvas
    try:
        yield
    finally:
        engine.LocalView._noise = original


def play(seed: int, steps: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(frames, the same frames without the night noise, daylight per frame) of ``steps``
    seeded random actions, episode after episode."""
    actions = np.random.default_rng(seed).integers(0, 17, steps)
    env = crafter.Env(seed=seed)
    frames, clean, light = [], [], []

    def keep(frame: np.ndarray) -> None:
        random = env._world.random
        state = random.get_state()
        with without_noise():
            clean.append(env.render())
        random.set_state(state)  # the game goes on as if the second render had not happened
        frames.append(frame)
        light.append(env._world.daylight)

    keep(env.reset())
    for action in actions:
        obs, _, done, _ = env.step(int(action))
        keep(obs)
        if done:
            keep(env.reset())
    return np.stack(frames), np.stack(clean), np.array(light)


def per_step(blob_bytes: int, frames: int) -> float:
    return blob_bytes / max(frames, 1)


def measure(seed: int, steps: int) -> dict[str, float]:
    real, clean, light = play(seed, steps)
    n = len(real)
    night = light < 0.5
    day_same = bool((real[~night] == clean[~night]).all())
    noise = (real[night].astype(np.int16) - clean[night].astype(np.int16)).astype(np.int8)
    zstd = pa.Codec("zstd", compression_level=19)
    return {
        "steps": n,
        "night_share": float(night.mean()),
        "day_frames_identical": float(day_same),
        "codec_all": per_step(len(encode(real)), n),
        "codec_day": per_step(len(encode(real[~night])), int((~night).sum())),
        "codec_night": per_step(len(encode(real[night])), int(night.sum())),
        "codec_clean_night": per_step(len(encode(clean[night])), int(night.sum())),
        "noise_zstd19": per_step(len(zstd.compress(noise.tobytes(), asbytes=True)), int(night.sum())),
        "noise_xz9e": per_step(len(lzma.compress(noise.tobytes(), preset=9 | lzma.PRESET_EXTREME)), int(night.sum())),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=900)
    args = parser.parse_args()
    load = os.getloadavg()
    rows = [measure(seed, args.steps) for seed in range(args.seeds)]
    print(
        f"machine load (1/5/15 min) {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; {args.seeds} seeds x {args.steps} steps"
    )
    print(
        "| seed | steps | night share | codec, all | by day | by night | night, noise-free | noise alone, zstd-19 | noise alone, xz -9e |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for seed, r in enumerate(rows):
        print(
            f"| {seed} | {r['steps']:.0f} | {r['night_share']:.0%} | {r['codec_all']:,.0f} B | {r['codec_day']:,.0f} B "
            f"| {r['codec_night']:,.0f} B | {r['codec_clean_night']:,.0f} B | {r['noise_zstd19']:,.0f} B | {r['noise_xz9e']:,.0f} B |"
        )
    medians = {key: statistics.median(r[key] for r in rows) for key in rows[0]}
    print("(bytes per step; night columns per night step)")
    print(" ".join(f"{key}={value:.3f}" for key, value in medians.items()))


if __name__ == "__main__":
    main()
