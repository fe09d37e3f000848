"""``bench_browser.py --sections``: a Tuner move with its advantages (and certificate) section open, timed in Debian's chromium until each figure has repainted; a module of that script, run through it.

JupyterLab at 1920x1080, the sample corpus under ``upstream_shaped``. Each action is an arrow key
on the Tuner's ``collect_stone`` weight (alternately right and left, so the weight stays in
range), timed from the key event to the next paint after the watched figure's DOM changed
(``browser_js.MEASURE_JS``, bounded to 5 s: a move that repaints nothing fails the run):

1. the reference, a slider echoing its value into a label (the floor any widget pays);
2. the Tuner's returns figure, both sections closed (the Tuner's own budget, <= 150 ms);
3. the advantages section open: the Tuner's figure, then the advantages figure (the issue's
   target: advantages re-computed with a Tuner move within the Tuner's <= 150 ms);
4. the certificate section open too: the advantages figure, the certificate's figure (its
   recompute is scheduled after the Tuner's update, at most one per ``CERTIFICATE_GAP``) and the
   Tuner's figure.

Medians over ``--repeat`` moves per row, the ratio to the reference measured in the same run,
the load average before and after, and the page's console errors.

    python benchmarks/bench_browser.py --sections [--repeat 25]
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from pathlib import Path

from browser_js import MEASURE_JS  # puts tests/ on the path for the browser helpers
from helpers.browser_lab import TIMEOUT_MS, lab_server, launch, open_notebook, output, run_all, write_notebook

REPO = Path(__file__).resolve().parents[1]
#: ``MEASURE_JS`` raced against 5 s: a move that paints nothing is -1, not a hang.
BOUNDED_JS = f"""async (args) => {{ const measure = {MEASURE_JS};
  return await Promise.race([measure(args), new Promise(res => setTimeout(() => res(-1), 5000))]); }}"""

CELLS = [
    (
        "import ipywidgets as w, workbench\nfrom workbench.views.widgets import Tuner\n"
        f"shaped = workbench.RewardConfig.from_file({str(REPO / 'configs' / 'upstream_shaped.yaml')!r})\n"
        "tuner = Tuner(workbench.sample_corpus(), shaped)\n"
        "echo_slider = w.IntSlider(0, 0, 10**6, description='echo')\necho_label = w.HTML('0')\n"
        "echo_slider.observe(lambda c: setattr(echo_label, 'value', str(c['new'])), 'value')"
    ),
    "w.VBox([echo_slider, echo_label])",
    "tuner",
]


def moves(page, target, handle, repeat: int, gap_ms: int) -> list[float]:
    """``repeat`` arrow keys on ``handle`` (right, left, right ...), each timed until ``target``
    repainted; raises when one repainted nothing within 5 s."""
    times = []
    for i in range(repeat):
        # MEASURE_JS sends ArrowRight: every other move presses ArrowLeft first, untimed, then
        # waits, so the timed moves alternate between two weights (the slider stays in range)
        if i % 2:
            handle.press("ArrowLeft")
            page.wait_for_timeout(gap_ms)
            handle.press("ArrowLeft")
            page.wait_for_timeout(gap_ms)
        elapsed = page.evaluate(BOUNDED_JS, [target, "key", handle.element_handle()])
        if elapsed < 0:
            raise RuntimeError(f"move {i}: the figure repainted nothing within 5 s")
        times.append(elapsed)
        page.wait_for_timeout(gap_ms)
    return times


def _open(view, css: str, mark: str):
    view.locator(f"{css}-section .jupyter-widget-Collapse-header").click()
    panel = view.locator(css)
    panel.locator(mark).first.wait_for(timeout=TIMEOUT_MS)
    return panel.locator(".bqplot").first.element_handle()


def measure(page, repeat: int) -> list[tuple[str, list[float]]]:
    """Every row of the table: (what was timed, the times in ms)."""
    echo = output(page, 1)
    echo.scroll_into_view_if_needed()
    label = echo.locator(".widget-html-content").first.element_handle()
    echo_handle = echo.locator(".noUi-handle").first
    rows = [("reference: slider echoed into a label", moves(page, label, echo_handle, repeat, 250))]
    view = output(page, 2)
    view.locator(".jupyter-widget-Collapse-header", has_text="weights: collect").click()
    handle = view.locator(".widget-slider", has_text="collect_stone").locator(".noUi-handle").first
    tuner = view.locator(".workbench-tuner .bqplot").first.element_handle()
    rows.append(("Tuner figure, sections closed", moves(page, tuner, handle, repeat, 250)))
    advantages = _open(view, ".workbench-advantages", ".bqplot .dot")
    page.wait_for_timeout(1000)
    rows.append(("advantages open: Tuner figure", moves(page, tuner, handle, repeat, 250)))
    rows.append(("advantages open: advantages figure", moves(page, advantages, handle, repeat, 250)))
    certificate = _open(view, ".workbench-certificate", ".bqplot rect.bar")
    page.wait_for_timeout(1000)
    rows.append(("both open: advantages figure", moves(page, advantages, handle, repeat, 400)))
    rows.append(("both open: certificate figure", moves(page, certificate, handle, repeat, 400)))
    rows.append(("both open: Tuner figure", moves(page, tuner, handle, repeat, 400)))
    return rows


def main(args) -> None:
    """Run the sections' measurements and print the table (``args.repeat`` moves per row)."""
    from playwright.sync_api import sync_playwright

    load_before = os.getloadavg()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        write_notebook(root / "sections.ipynb", CELLS)
        with lab_server(root) as (base, token), sync_playwright() as playwright:
            browser = launch(playwright)
            page = open_notebook(browser, base, token, "sections.ipynb", width=1920, height=1080, file_browser=False)
            run_all(page, [1, 2])
            page.wait_for_timeout(3000)
            rows = measure(page, args.repeat)
            errors = list(page.errors)
            browser.close()
    load_after = os.getloadavg()
    reference = statistics.median(rows[0][1])
    print(f"Tuner move (collect_stone weight), input event to figure painted (median of {args.repeat}; min-max):")
    print("| figure watched | median ms | min-max ms | vs reference | target |")
    print("|---|---:|---:|---:|---:|")
    for name, times in rows:
        median = statistics.median(times)
        # the budget: the Tuner's figure and the advantages; the certificate follows latest-wins
        target = "" if name.startswith("reference") or "certificate" in name else "<= 150"
        print(f"| {name} | {median:.0f} | {min(times):.0f}-{max(times):.0f} | {median / reference:.1f}x | {target} |")
    print(
        f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f} (2 cores); "
        f"{time.perf_counter() - started:.0f} s; page errors: {errors or 'none'}"
    )
