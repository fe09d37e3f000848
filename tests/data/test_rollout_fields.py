"""A rollout response read for its fields only (``rollout_fields``) is what ``json`` reads of them, and imports as the text parsed whole does."""

from __future__ import annotations

import copy
import json
import random
import re
import shutil
import struct
import tempfile
from pathlib import Path

import pytest
from helpers.episodes import assert_imports_alike
from helpers.hostile import good_rollout, put
from helpers.json_cases import VALUES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench.data.importers import import_rollouts
from workbench.data.importers.rollout_fields import response_fields
from workbench.util.jsonsafe import UNSURE

REPO = Path(__file__).resolve().parents[2]
SHIPPED = REPO / "workbench" / "data" / "shipped" / "sample_imports"
ROLLOUT_FILES = [
    *sorted((SHIPPED / "taskapp").glob("*.json")),
    *sorted((SHIPPED / "rollouts").rglob("*.json*")),
    *sorted((REPO / "tests" / "fixtures" / "synth-ai-0.2.24" / "responses").glob("*.json")),
]

# What the import reads, level by level, written out apart from the module's declarations.
_READ = {
    "response": ("trajectories", "run_id", "metrics", "request", "step_rewards", "trace"),
    "trajectory": ("steps", "final", "env_id", "policy_id"),
    "step": ("obs", "tool_calls", "reward", "done", "info"),
    "info": ("meta", "stepwise", "terminated", "reason"),
    "meta": ("raw_response", "decision_rewards"),
}


def _kept(value: dict, level: str) -> dict:
    return {key: value.get(key) for key in _READ[level]}


def _read_by_json(response: dict) -> dict:
    """``json.loads``'s response cut to the fields the import reads (absent ones null)."""
    kept = _kept(response, "response")
    if kept["trajectories"] is not None:
        kept["trajectories"] = [_kept(t, "trajectory") for t in kept["trajectories"]]
        for trajectory in kept["trajectories"]:
            if trajectory["steps"] is not None:
                trajectory["steps"] = [_kept(s, "step") for s in trajectory["steps"]]
                for step in trajectory["steps"]:
                    if step["info"] is not None:
                        step["info"] = _kept(step["info"], "info")
                        if step["info"]["meta"] is not None:
                            step["info"]["meta"] = _kept(step["info"]["meta"], "meta")
    return kept


def _same(fast: object, general: object) -> bool:
    """Equal, with the same types and float bits (json.dumps writes 1, 1.0, True and -0.0 apart)."""
    return json.dumps(fast) == json.dumps(general)


@pytest.mark.parametrize("file", ROLLOUT_FILES, ids=lambda f: f.name)
def test_each_shipped_rollout_reads_as_json_reads_its_fields(file):
    lines = file.read_bytes().split(b"\n") if file.suffix == ".jsonl" else [file.read_bytes()]
    for line in filter(bytes.strip, lines):
        general = json.loads(line)
        fast = response_fields(line)
        assert fast is not UNSURE
        expected = [_read_by_json(r) for r in general] if isinstance(general, list) else _read_by_json(general)
        assert _same(fast, expected)


def test_every_shipped_rollout_imports_the_same_read_by_fields_or_whole(tmp_path):
    for i, file in enumerate(ROLLOUT_FILES):
        shutil.copyfile(file, tmp_path / f"{i:02d}-{file.name}")
    # and as JSON Lines: a response a line, and a list of them in one document
    documents = [json.loads(f.read_bytes()) for f in ROLLOUT_FILES if f.suffix == ".json"]
    (tmp_path / "all.jsonl").write_text("\n".join(json.dumps(d) for d in documents if isinstance(d, dict)) + "\n")
    (tmp_path / "list.json").write_text(json.dumps([d for d in documents if isinstance(d, dict)][:2]))
    result = import_rollouts(tmp_path, progress=False)
    assert len(result.corpus) > 20 and not result.errors
    assert_imports_alike(tmp_path)


def _with(value: bytes, where: str) -> bytes:
    """A small rollout with ``value`` (raw JSON text) placed at ``where``."""
    response = good_rollout()
    response["trajectories"][0]["steps"][0]["info"] = {"meta": {"raw_response": "ok"}, "stepwise": {"r": 1}}
    marker = "@@VALUE@@"
    if where == "unread meta field":
        response["trajectories"][0]["steps"][0]["info"]["meta"]["inference_request"] = marker
    elif where == "read field":
        response["trajectories"][0]["steps"][1]["reward"] = marker
    elif where == "inside a read object":
        response["trajectories"][0]["steps"][0]["info"]["stepwise"]["x"] = marker
    elif where == "unread trajectory field":
        response["trajectories"][0]["decision_samples"] = [marker]
    elif where == "unread response field":
        response["branches"] = {"x": marker}
    text = json.dumps(response).encode()
    if where == "before":
        return value + text
    if where == "after":
        return text + value
    return text.replace(json.dumps(marker).encode(), value)


PLACES = [
    "unread meta field",
    "read field",
    "inside a read object",
    "unread trajectory field",
    "unread response field",
    "before",
    "after",
]


@pytest.mark.parametrize("value", VALUES)
def test_a_value_json_refuses_is_never_read(value):
    for where in PLACES:
        text = _with(value, where)
        try:
            general = json.loads(text.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            assert response_fields(text) is UNSURE, (value, where)
            continue
        fast = response_fields(text)
        if fast is not UNSURE:  # what it reads is json's, cut to the fields read
            assert _same(fast, _read_by_json(general)), (value, where)


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (["trajectories"], {"steps": []}),
        (["trajectories", 0], "a trajectory"),
        (["trajectories", 0, "steps"], {"0": {}}),
        (["trajectories", 0, "steps", 0], "a step"),
        (["trajectories", 0, "steps", 0, "info"], ["an", "info"]),
        (["trajectories", 0, "steps", 0, "info", "meta"], 3),
    ],
)
def test_an_object_of_another_shape_is_left_to_the_whole_parse(tmp_path, path, value):
    response = good_rollout()
    response["trajectories"][0]["steps"][0]["info"] = {"meta": {}}
    put(response, path, value)
    text = json.dumps(response).encode()
    assert response_fields(text) is UNSURE
    assert response_fields(b"[" + text + b"]") is UNSURE
    (tmp_path / "odd.jsonl").write_bytes(text + b"\n" + json.dumps(good_rollout("next")).encode() + b"\n")
    assert_imports_alike(tmp_path)


def test_floats_read_are_json_floats_bit_for_bit():
    rng = random.Random(7)
    read = 0
    for _ in range(400):
        number = struct.unpack("d", rng.getrandbits(64).to_bytes(8, "little"))[0]
        if number != number or number in (float("inf"), float("-inf")):
            continue
        digits = rng.choice(
            [repr(number), f"{number:.{rng.randrange(1, 25)}e}", f"{rng.random():.{rng.randrange(1, 30)}f}"]
        )
        text = _with(digits.encode(), "read field")
        fast = response_fields(text)
        if fast is UNSURE:  # only a run of 19 digits is left to json (orjson's reading of it is not sure)
            assert re.search(rb"[0-9]{19}", text), digits
            continue
        assert _same(fast, _read_by_json(json.loads(text))), digits
        read += 1
    assert read > 200


def test_a_number_past_64_bits_is_left_to_json():
    assert response_fields(_with(str(2**70).encode(), "unread meta field")) is UNSURE
    assert response_fields(_with(str(-(2**63) - 1).encode(), "read field")) is UNSURE
    eighteen = _with(b"123456789012345678", "read field")
    assert response_fields(eighteen)["trajectories"][0]["steps"][1]["reward"] == 123456789012345678
    overflowing = _with(b"1e400", "read field")  # json reads inf; left to it
    assert response_fields(overflowing) is UNSURE
    # json refuses an integer of more than 4,300 digits (Python's limit); msgspec would skip it
    huge = _with(b"9" * 5000, "unread meta field")
    with pytest.raises(ValueError):
        json.loads(huge)
    assert response_fields(huge) is UNSURE


def test_a_repeated_key_keeps_its_last_value_as_json_does():
    text = b'{"run_id": "a", "trajectories": [{"steps": [{"obs": 1, "obs": 2}]}], "run_id": "b", "metrics": {"m": 1, "m": 2}}'
    assert _same(response_fields(text), _read_by_json(json.loads(text)))
    assert response_fields(text)["run_id"] == "b"


_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
_PATHS = st.sampled_from(
    [
        ["run_id"],
        ["trajectories"],
        ["metrics"],
        ["request"],
        ["trace"],
        ["branches"],
        ["trajectories", 0, "steps"],
        ["trajectories", 0, "final"],
        ["trajectories", 0, "policy_id"],
        ["trajectories", 0, "decision_samples"],
        ["trajectories", 0, "steps", 0, "obs"],
        ["trajectories", 0, "steps", 0, "tool_calls"],
        ["trajectories", 0, "steps", 1, "reward"],
        ["trajectories", 0, "steps", 1, "done"],
        ["trajectories", 0, "steps", 0, "info"],
        ["trajectories", 0, "steps", 1, "info", "stepwise"],
        ["trajectories", 0, "steps", 1, "info", "meta", "raw_response"],
        ["trajectories", 0, "steps", 1, "info", "meta", "decision_rewards"],
        ["trajectories", 0, "steps", 1, "info", "meta", "inference_request"],
        ["trajectories", 0, "steps", 1, "info", "terminated"],
        ["trajectories", 0, "steps", 1, "truncated"],
    ]
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=st.lists(st.tuples(_PATHS, _JSON), min_size=1, max_size=3))
def test_any_edit_of_a_rollout_imports_the_same_read_by_fields_or_whole(tmp_path, edits):
    response = good_rollout()
    response["trajectories"][0]["steps"][1]["info"] = {"meta": {"raw_response": "ok"}, "stepwise": {}}
    for path, value in edits:
        put(response, path, copy.deepcopy(value))
    folder = Path(tempfile.mkdtemp(dir=tmp_path))  # a folder per example (hypothesis seeds random)
    (folder / "edited.jsonl").write_text(json.dumps(response) + "\n")
    text = json.dumps(response).encode()
    fast = response_fields(text)
    assert fast is UNSURE or _same(fast, _read_by_json(json.loads(text)))
    assert_imports_alike(folder)
