"""Every Python block of the README and of the docs site runs as written, and its console examples
do what they show.

Each page's ``python`` blocks run in order in one namespace of their own (a block may use an
earlier block's names on the same page, as a reader runs them), beside a copy of ``configs/`` in
a temporary folder, so files they write never land in the checkout. ``console`` blocks run their
``$ workbench ...`` lines and must print every line shown under them. ``bash``, ``sh`` and
``text`` blocks are shown, not run. A block that cannot run here is fenced ``python {.notest}`` and
says why in a comment on its first line (docs/contributing.md).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers import REPO

PAGES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
WORKBENCH = Path(sys.executable).with_name("workbench")
#: Fence languages a page may use: run (python, console), opted out (python {.notest}), or shown.
RUN, OPTED_OUT, SHOWN = {"python", "console"}, {"python {.notest}"}, {"bash", "sh", "text"}
#: The README is the five-minute page; the rest belongs in the site.
README_MAX_LINES = 250


@dataclass(frozen=True)
class Block:
    """One fenced code block: its page, its first line number, its info string and its text."""

    page: Path
    line: int
    info: str
    text: str

    @property
    def where(self) -> str:
        page = self.page.relative_to(REPO) if self.page.is_relative_to(REPO) else self.page
        return f"{page}:{self.line}"


def fenced_blocks(page: Path) -> list[Block]:
    """The top-level fenced blocks of a Markdown page, in order. A fence of N backticks closes
    only on a line of at least N backticks, so a page can show a fence inside a longer one."""
    blocks: list[Block] = []
    opening: tuple[int, str, str] | None = None  # (line number, backticks, info string)
    body: list[str] = []
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), start=1):
        fence = re.match(r"^(`{3,})(.*)$", line)
        if opening is None:
            if fence:
                opening, body = (number, fence.group(1), fence.group(2).strip()), []
        elif fence and fence.group(1).startswith(opening[1]) and not fence.group(2).strip():
            blocks.append(Block(page, opening[0], opening[2], "\n".join(body) + "\n"))
            opening = None
        else:
            body.append(line)
    assert opening is None, f"{page}:{opening[0]}: a fence that never closes"
    return blocks


BLOCKS = [block for page in PAGES for block in fenced_blocks(page)]
PAGES_WITH_PYTHON = [page for page in PAGES if any(b.page == page and b.info == "python" for b in BLOCKS)]
CONSOLE_BLOCKS = [block for block in BLOCKS if block.info == "console"]


def test_the_readme_is_short_and_has_examples():
    readme = [block for block in BLOCKS if block.page.name == "README.md" and block.page.parent == REPO]
    assert sum(b.info == "python" for b in readme) >= 2 and any(b.info == "console" for b in readme)
    assert len((REPO / "README.md").read_text(encoding="utf-8").splitlines()) <= README_MAX_LINES


def test_the_site_pages_have_runnable_examples():
    # The point of running the pages: most of the site's topics show code that really runs.
    assert len(PAGES_WITH_PYTHON) >= 10, [p.name for p in PAGES_WITH_PYTHON]


@pytest.mark.parametrize("block", BLOCKS, ids=lambda b: b.where)
def test_every_block_is_run_or_opted_out_with_a_reason(block):
    # An unknown language would be silently skipped; a notest block must say why it cannot run.
    assert block.info in RUN | OPTED_OUT | SHOWN, f"{block.where}: fence language {block.info!r} is not known"
    if block.info in OPTED_OUT:
        first = block.text.splitlines()[0] if block.text.strip() else ""
        assert re.match(r"#\s*\S.{8,}", first), f"{block.where}: a notest block says why on its first line"


@pytest.mark.parametrize("page", PAGES_WITH_PYTHON, ids=lambda p: str(p.relative_to(REPO)))
def test_every_python_block_runs_in_order(page, monkeypatch, tmp_path):
    shutil.copytree(REPO / "configs", tmp_path / "configs")
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__docs__"}
    for block in (b for b in BLOCKS if b.page == page and b.info == "python"):
        try:
            # Blank lines in front, so a traceback's line numbers are the page's own.
            source = "\n" * block.line + block.text
            exec(compile(source, str(page.relative_to(REPO)), "exec"), namespace)
        except Exception as error:  # noqa: BLE001 - re-raised with the block named
            raise AssertionError(f"the python block at {block.where} fails: {type(error).__name__}: {error}") from error


def console_examples(block: str) -> list[tuple[str, list[str]]]:
    """(command, the output lines the page shows under it) for each ``$ `` line; a line
    starting with ``...`` stands for lines left out (or summarised)."""
    examples: list[tuple[str, list[str]]] = []
    for line in block.splitlines():
        if line.startswith("$ "):
            examples.append((line[2:], []))
        elif line.strip() and not line.strip().startswith("...") and examples:
            examples[-1][1].append(line)
    return examples


@pytest.mark.parametrize("block", CONSOLE_BLOCKS, ids=lambda b: b.where)
def test_console_examples_print_what_the_page_shows(block, tmp_path):
    # Commands write files (convert, export): run them where they cannot touch the checkout.
    shutil.copytree(REPO / "configs", tmp_path / "configs")
    examples = console_examples(block.text)
    assert examples
    for command, shown in examples:
        assert command.startswith("workbench "), command
        run = subprocess.run(
            [str(WORKBENCH), *command.split()[1:]], cwd=tmp_path, capture_output=True, text=True, timeout=120
        )
        assert run.returncode in (0, 1), f"{block.where}: {command}: exit {run.returncode}\n{run.stderr}"
        printed = run.stdout.splitlines()
        for line in shown:
            assert line in printed, f"{block.where}: {command}: the page shows {line!r}, which it does not print"


def test_fences_are_read_as_a_reader_sees_them(tmp_path):
    # A longer fence shows a shorter one inside it (docs/contributing.md does); the info string
    # is kept whole, so `python {.notest}` is never taken for a block to run.
    page = tmp_path / "page.md"
    page.write_text(
        "text\n\n````text\n```python\nnot run\n```\n````\n\n```python {.notest}\n# needs a server\nx = 1\n```\n"
        "\n```python\ny = 2\n```\n"
    )
    blocks = fenced_blocks(page)
    assert [(b.line, b.info, b.text) for b in blocks] == [
        (3, "text", "```python\nnot run\n```\n"),
        (9, "python {.notest}", "# needs a server\nx = 1\n"),
        (14, "python", "y = 2\n"),
    ]
