"""Frames on disk: what the lossless codec costs by day and by night, and what Crafter's night noise alone carries.

    .venv/bin/python benchmarks/bench_frames.py                 # 3 seeds x 900 steps (three days)
    .venv/bin/python benchmarks/bench_frames.py --seeds 1 --steps 600

Plays Crafter with seeded random actions twice per seed, in lockstep: as it is, and with
``LocalView._noise`` drawing its random field from the world's generator (so the game, which
shares that generator, plays out the same) without mixing it into the view. The two runs give
the same frames by day and differ by night exactly by the noise Crafter adds. Then per seed:

- bytes per step of ``workbench.storage.frames.encode`` (the corpus codec) on the real frames,
  on their day steps and on their night steps (Crafter's daylight below 0.5), each stack
  encoded whole as a corpus stores an episode;
- the same codec on the noise-free frames (what the pictures themselves cost);
- the noise alone: the per-pixel difference of the two runs at night, compressed with zstd
  level 19 and with xz (lzma, preset 9 extreme), the best general-purpose lossless coders at
  hand, per night step.

Night steps are ~42% of a run (``daylight = 1 - |cos(pi (t / 300 + 0.3))|^3`` is below 0.5 for
that share of every 300-step day), so bytes per step overall = day share x day cost + night
share x night cost. The last line is machine-readable (``key=value`` pairs).
"""

from __future__ import annotations

import argparse
import lzma
import os
import statistics
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext

import crafter
import numpy as np
import pyarrow as pa
from crafter import engine

from workbench.storage.frames import encode


@contextmanager
def noise_drawn_not_shown() -> Iterator[None]:
    """``LocalView._noise`` still draws its field from the world's generator (keeping the game
    identical) but returns the canvas unchanged."""
    original = engine.LocalView._noise

    def drawn(self: engine.LocalView, canvas: np.ndarray, amount: float, stddev: float) -> np.ndarray:
        self._world.random.uniform(32, 127, canvas.shape[:2])
        return canvas

    engine.LocalView._noise = drawn
    try:
        yield
    finally:
        engine.LocalView._noise = original


def play(seed: int, steps: int, clean: bool) -> tuple[np.ndarray, np.ndarray]:
    """(frames, daylight per frame) of ``steps`` seeded random actions, episode after episode."""
    rng = np.random.default_rng(seed)
    actions = rng.integers(0, 17, steps)
    env = crafter.Env(seed=seed)
    frames, light = [env.reset()], [env._world.daylight]
    with noise_drawn_not_shown() if clean else nullcontext():
        for action in actions:
            obs, _, done, _ = env.step(int(action))
            frames.append(obs)
            light.append(env._world.daylight)
            if done:  # the next episode goes on in the same stack (both runs reset alike)
                frames.append(env.reset())
                light.append(env._world.daylight)
    return np.stack(frames), np.array(light)


def per_step(blob_bytes: int, frames: int) -> float:
    return blob_bytes / max(frames, 1)


def measure(seed: int, steps: int) -> dict[str, float]:
    real, light = play(seed, steps, clean=False)
    clean, clean_light = play(seed, steps, clean=True)
    n = len(real)
    if len(clean) != n or not np.array_equal(light, clean_light):
        raise RuntimeError(f"seed {seed}: the run without the noise played out differently")
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
