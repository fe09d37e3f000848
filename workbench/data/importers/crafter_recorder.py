"""crafter.Recorder runs: its ``.npz`` episode files, turned into episodes with lazy frames."""

from __future__ import annotations

import re
import struct
import zipfile
from collections.abc import Mapping
from functools import partial
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from workbench.core.crafter_facts import ACHIEVEMENTS, ACTIONS, INVENTORY_ITEMS
from workbench.data.episodes import FRAME_SHAPE, Episode, Frames, reset_state_arrays
from workbench.data.importers.batch import (
    BadInput,
    ImportIssue,
    ImportResult,
    batch_files,
    keep_items,
    safe_id,
    unexpected,
    unstorable,
)
from workbench.data.importers.values import INT32_MIN, check_array
from workbench.data.storage import npy_deflate_frames
from workbench.errors import NPZ_READ_ERRORS, EpisodeError, FrameReadError

#: Arrays every crafter.Recorder episode file holds that the importer needs (``semantic`` and
#: ``discount`` are not needed: the workbench keeps frames, inventories and counts).
RECORDER_ARRAYS = (
    ("image", "action", "reward", "done", "player_pos")
    + tuple(f"achievement_{name}" for name in ACHIEVEMENTS)
    + tuple(f"ainventory_{item}" for item in INVENTORY_ITEMS)
)
#: ``<YYYYmmddTHHMMSS>-ach<N>-len<L>``: the Recorder's file names, which state the episode length.
_RECORDER_NAME = re.compile(r"-ach(\d+)-len(\d+)$")


def import_crafter_recorder(path: str | Path, *, progress: bool = True) -> ImportResult:
    """Import the episode files ``crafter.Recorder`` wrote (a folder of ``.npz``, or one file).

    Each file is one episode of one action per decision. The Recorder's row 0 is the reset
    observation with every other key zero-filled (health 0), so the reset state is Crafter's
    start state (``reset_state_arrays``) and the reset player position is unknown (-1); frames
    are the ``image`` rows (row 0 = reset frame), read lazily from the source file.
    ``stats.jsonl`` and videos are summaries of the same episodes and are not needed.

    Args:
        path: A folder (searched recursively for ``*.npz``, any case) or one ``.npz`` file.
        progress: Show a progress bar (only when there are two files or more).

    Returns:
        The episodes that imported (ids from the file stems, made unique in the batch) and one
        ``ImportIssue`` per file that did not (a missing path or an empty folder is an issue
        too): nothing is raised for a bad file, the batch goes on past it.
    """
    files, collected = batch_files(Path(path), ("*.npz",), "crafter.Recorder episode files (.npz)")
    for file in tqdm(files, desc="import", unit="file", disable=not progress or len(files) < 2):
        keep_items(collected, str(file), recorder_file_items(file))
    return collected.result(len(files))


def recorder_file_items(file: Path) -> list[Episode | ImportIssue]:
    """One Recorder file's episode, checked storable, or the issue that stops it.

    Args:
        file: A ``.npz`` episode file.

    Returns:
        The episode or an issue, for ``keep_items``.
    """
    try:
        episode = _recorder_episode(file)
    except BadInput as error:
        return [ImportIssue(str(file), error.location, error.message)]
    except Exception as error:  # noqa: BLE001 - whatever a file does, the batch goes on
        return [ImportIssue(str(file), "", unexpected(error))]
    return [unstorable(episode, str(file)) or episode]


def _recorder_episode(file: Path) -> Episode:
    arrays = _read_recorder_arrays(file)
    steps = len(arrays["action"]) - 1
    _check_recorder_shapes(file, arrays, steps)
    inventory0, counts0 = reset_state_arrays()
    # Row 0 is the Recorder's zero-filled reset row: only rows 1.. are read, so only they are checked.
    inventory = np.column_stack(
        [check_array(arrays[f"ainventory_{item}"][1:], f"ainventory_{item}", kind="count") for item in INVENTORY_ITEMS]
    )
    counts = np.column_stack(
        [check_array(arrays[f"achievement_{name}"][1:], f"achievement_{name}", kind="count") for name in ACHIEVEMENTS]
    )
    positions = check_array(arrays["player_pos"][1:], "player_pos", kind="count", low=INT32_MIN)
    rewards = check_array(arrays["reward"][1:], "reward", kind="real")
    dones = check_array(arrays["done"][1:], "done", kind="flag")
    try:
        return Episode(
            id=safe_id(file.stem),
            inventory=np.vstack([inventory0, inventory]),
            achievement_counts=np.vstack([counts0, counts]),
            player_pos=np.vstack([[-1, -1], positions]),
            actions=[[ACTIONS[a]] for a in arrays["action"][1:]],
            env_reward=rewards,
            done=dones,
            metadata={"source": "crafter-recorder", "file": file.name, "policy": "unknown", "seed": None},
            frames_loader=partial(_recorder_frames, file, steps),
        )
    except EpisodeError as error:
        raise BadInput("", str(error)) from None


def _read_recorder_arrays(file: Path) -> dict[str, np.ndarray]:
    """All arrays the importer needs, fully read: a truncated file fails here, not later."""
    try:
        with np.load(file, allow_pickle=False) as data:
            missing = [name for name in RECORDER_ARRAYS if name not in data.files]
            if missing:
                shown = ", ".join(missing[:4]) + (f" and {len(missing) - 4} more" if len(missing) > 4 else "")
                raise BadInput("", f"missing array(s) {shown}: not a crafter.Recorder episode file")
            return {name: data[name] for name in RECORDER_ARRAYS}
    except NPZ_READ_ERRORS as error:
        raise BadInput("", f"corrupt or truncated .npz ({type(error).__name__}: {error})") from None


def _check_recorder_shapes(file: Path, arrays: Mapping[str, np.ndarray], steps: int) -> None:
    if arrays["action"].ndim != 1:
        raise BadInput("action", f"has shape {arrays['action'].shape}, expected (steps + 1,)")
    if steps < 1:
        raise BadInput("action", "no step after the reset row: an episode needs at least one decision")
    rows = steps + 1
    expected: dict[str, tuple[int, ...]] = {name: (rows,) for name in RECORDER_ARRAYS}
    expected.update(image=(rows, *FRAME_SHAPE), player_pos=(rows, 2))
    for name, shape in expected.items():
        if arrays[name].shape != shape:
            raise BadInput(name, f"has shape {arrays[name].shape}, expected {shape} (the action array has {rows} rows)")
    if arrays["image"].dtype != np.uint8:
        raise BadInput("image", f"has dtype {arrays['image'].dtype}, expected uint8")
    action = arrays["action"][1:]
    if not np.issubdtype(action.dtype, np.integer) or action.min() < 0 or action.max() >= len(ACTIONS):
        raise BadInput("action", f"holds values outside Crafter's action ids 0..{len(ACTIONS) - 1}")
    named = _RECORDER_NAME.search(file.stem)
    if named and int(named.group(2)) != steps:
        raise BadInput("", f"the file name says len{named.group(2)} but the file holds {steps} steps (truncated?)")


def _recorder_frames(file: Path, steps: int) -> Frames:
    """The ``image`` rows of a Recorder file, read when an episode's frames are first touched:
    decoded from the file's deflated ``image.npy`` member, which they keep (saving stores those
    bytes as they are, ``frames.NPY_DEFLATE``), or read by ``np.load`` when the member is not
    deflated (``np.savez``) or does not decode that way."""
    step_decision = np.arange(1, steps + 1, dtype=np.int32)
    member = _deflated_member(file, "image.npy")
    if member is not None:
        try:
            return npy_deflate_frames(member[0], step_decision, crc=member[1])
        except ValueError:
            pass  # np.load below reads it, or names what is wrong
    try:
        with np.load(file, allow_pickle=False) as data:
            images = data["image"]
    except NPZ_READ_ERRORS as error:
        raise FrameReadError(f"{file}: cannot read frames ({type(error).__name__}: {error})") from None
    return Frames(images=images, step_decision=step_decision)


#: A zip local file header: signature, then fixed fields; the name's and the extra field's
#: lengths are its last two 16-bit fields (APPNOTE.TXT 4.3.7).
_LOCAL_HEADER = struct.Struct("<4s22xHH")


def _deflated_member(file: Path, name: str) -> tuple[bytes, int] | None:
    """A zip archive member's raw deflate stream and its CRC-32 as the archive stores them
    (not inflated), or None when the member is missing, not deflated, encrypted, or its
    bytes cannot be read."""
    try:
        with zipfile.ZipFile(file) as archive:
            info = archive.getinfo(name)
        if info.compress_type != zipfile.ZIP_DEFLATED or info.flag_bits & 0x1:
            return None
        with open(file, "rb") as handle:
            handle.seek(info.header_offset)
            signature, name_length, extra_length = _LOCAL_HEADER.unpack(handle.read(_LOCAL_HEADER.size))
            if signature != b"PK\x03\x04":
                return None
            handle.seek(info.header_offset + _LOCAL_HEADER.size + name_length + extra_length)
            blob = handle.read(info.compress_size)
    except (OSError, KeyError, zipfile.BadZipFile, struct.error):
        return None
    return (blob, info.CRC) if len(blob) == info.compress_size else None
