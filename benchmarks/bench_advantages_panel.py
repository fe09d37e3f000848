"""The advantages panel in a real browser: from a config change's input event to the panel's figure repainted.

JupyterLab in Debian's chromium (Playwright), the sample corpus. A weight slider (as the Tuner's)
sets ``panel.config`` on each move, the way ``traitlets.dlink((tuner, "config"), (panel,
"config"))`` will; timed from the key press on the slider to the next paint after the panel's
figure changed (``browser_js.MEASURE_JS``), medians over ``--repeat`` moves. The reference,
in the same run, is the floor any widget pays: a slider echoing its value into a label. Also
the estimator switch (a select in the panel) and the kernel's own time per recompute
(``panel.last_update_ms``), and the load. ``--shots DIR`` saves screenshots at 1280x800 (file
browser open) and 1920x1080 and prints the console errors of each page.

    python benchmarks/bench_advantages_panel.py [--repeat 25] [--shots DIR]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from browser_js import MEASURE_JS  # noqa: E402
from helpers.browser_lab import lab_server, launch, open_notebook, output, run_all, write_notebook  # noqa: E402

from workbench.views.widgets.advantages import ESTIMATOR_LABELS as LABELS  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
#: ``MEASURE_JS`` raced against a timeout: a change that paints nothing counts as missing, not a hang.
BOUNDED_JS = f"""async (args) => {{ const measure = {MEASURE_JS};
  return await Promise.race([measure(args), new Promise(res => setTimeout(() => res(-1), 5000))]); }}"""


def median_ms(page, target, action, args, repeat: int, gap_ms: int = 250) -> list[float]:
    """Times of ``repeat`` actions (``browser_js.MEASURE_JS``), each bounded to 5 s; raises
    when one painted nothing within that."""
    times = []
    for i in range(repeat):
        elapsed = page.evaluate(BOUNDED_JS, [target, action, args(i)])
        if elapsed < 0:
            raise RuntimeError(f"action {i} ({action}) changed nothing in 5 s")
        times.append(elapsed)
        page.wait_for_timeout(gap_ms)
    return times


SETUP = f"""
import statistics, ipywidgets as w, workbench
from workbench.views.widgets.advantages import AdvantagesPanel
corpus = workbench.sample_corpus()
shaped = workbench.RewardConfig.from_file({str(REPO / "configs" / "upstream_shaped.yaml")!r})
panel = AdvantagesPanel(corpus, shaped)
stone = w.FloatSlider(1.0, min=0.0, max=100.0, step=0.1, description='collect_stone')
stone.observe(lambda c: setattr(panel, 'config', shaped.with_changes(weights={{**shaped.weights, 'collect_stone': c['new']}})), 'value')
echo_slider = w.IntSlider(0, 0, 10**6, description='echo')
echo_label = w.HTML('0')
echo_slider.observe(lambda c: setattr(echo_label, 'value', str(c['new'])), 'value')
"""
CELLS = [SETUP, "w.VBox([echo_slider, echo_label])", "w.VBox([stone, panel])"]


def measure(page, repeat: int) -> dict[str, list[float]]:
    echo = output(page, 1)
    echo.scroll_into_view_if_needed()
    label = echo.locator(".widget-html-content").first.element_handle()
    handle = echo.locator(".noUi-handle").first.element_handle()
    reference = median_ms(page, label, "key", lambda i: handle, repeat)
    view = output(page, 2)
    view.scroll_into_view_if_needed()
    figure = view.locator(".bqplot").first.element_handle()
    handle = view.locator(".noUi-handle").first.element_handle()
    weight = median_ms(page, figure, "key", lambda i: handle, repeat)
    select = view.locator("select").first.element_handle()
    estimator = median_ms(
        page, figure, "select", lambda i: [select, LABELS["rloo" if i % 2 == 0 else "grpo"]], repeat, 400
    )
    return {"echo (reference)": reference, "weight move -> panel repainted": weight, "estimator switch": estimator}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=25)
    parser.add_argument("--shots", type=Path, help="save screenshots into this folder")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    print(f"load before: {os.getloadavg()}", flush=True)
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        write_notebook(root / "panel.ipynb", CELLS)
        with lab_server(root) as (base, token), sync_playwright() as playwright:
            browser = launch(playwright)
            page = open_notebook(browser, base, token, "panel.ipynb", width=1280, height=800, file_browser=True)
            run_all(page, [1, 2])
            page.wait_for_timeout(3000)
            results = measure(page, args.repeat)
            reference = statistics.median(results["echo (reference)"])
            for name, times in results.items():
                median = statistics.median(times)
                print(
                    f"  {name:34s} median {median:6.1f} ms (min {min(times):.0f}, max {max(times):.0f}) "
                    f"{median / reference:5.2f}x the echo"
                )
            page.evaluate("window.jupyterapp.commands.execute('notebook:insert-cell-below')")
            print(f"console errors at 1280: {page.errors}")
            if args.shots is not None:
                args.shots.mkdir(parents=True, exist_ok=True)
                output(page, 2).screenshot(path=str(args.shots / "advantages-panel-1280.png"))
                wide = open_notebook(browser, base, token, "panel.ipynb", width=1920, height=1080, file_browser=False)
                run_all(wide, [2])
                wide.wait_for_timeout(3000)
                output(wide, 2).screenshot(path=str(args.shots / "advantages-panel-1920.png"))
                print(f"console errors at 1920: {wide.errors}")
            browser.close()
    print(f"load after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
