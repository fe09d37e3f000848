"""Every Python block of the README runs as written, and its console examples do what they show."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")
PYTHON_BLOCKS = re.findall(r"```python\n(.*?)```", README, flags=re.DOTALL)
CONSOLE_BLOCKS = re.findall(r"```console\n(.*?)```", README, flags=re.DOTALL)
WORKBENCH = Path(sys.executable).with_name("workbench")


def test_the_readme_has_examples():
    assert len(PYTHON_BLOCKS) >= 2 and CONSOLE_BLOCKS


def test_every_python_block_runs_in_order(monkeypatch, tmp_path):
    # Blocks build on each other (a later one may use an earlier one's names), as a reader runs
    # them; they run beside a copy of configs/, so files they write never land in the checkout.
    shutil.copytree(REPO / "configs", tmp_path / "configs")
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    for number, block in enumerate(PYTHON_BLOCKS, start=1):
        try:
            exec(compile(block, f"README.md python block {number}", "exec"), namespace)
        except Exception as error:  # noqa: BLE001 - re-raised with the block named
            raise AssertionError(f"README python block {number} fails: {type(error).__name__}: {error}") from error


def console_examples(block: str) -> list[tuple[str, list[str]]]:
    """(command, the output lines the README shows under it) for each ``$ `` line; a line
    starting with ``...`` stands for lines left out (or summarised)."""
    examples: list[tuple[str, list[str]]] = []
    for line in block.splitlines():
        if line.startswith("$ "):
            examples.append((line[2:], []))
        elif line.strip() and not line.strip().startswith("...") and examples:
            examples[-1][1].append(line)
    return examples


@pytest.mark.parametrize("block", CONSOLE_BLOCKS, ids=lambda b: b.split("\n", 1)[0][:40])
def test_console_examples_print_what_the_readme_shows(block, tmp_path):
    # Commands write files (convert, export): run them where they cannot touch the checkout.
    shutil.copytree(REPO / "configs", tmp_path / "configs")
    examples = console_examples(block)
    assert examples
    for command, shown in examples:
        assert command.startswith("workbench "), command
        run = subprocess.run(
            [str(WORKBENCH), *command.split()[1:]], cwd=tmp_path, capture_output=True, text=True, timeout=120
        )
        assert run.returncode in (0, 1), f"{command}: exit {run.returncode}\n{run.stderr}"
        printed = run.stdout.splitlines()
        for line in shown:
            assert line in printed, f"{command}: the README shows {line!r}, which it does not print"
