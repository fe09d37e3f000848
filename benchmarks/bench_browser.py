"""Latency the researcher feels, measured in a real browser: JupyterLab in Debian's chromium
driven by Playwright, from the input event to the change painted in the page.

Measures (medians over --repeat actions): a Tuner weight change (arrow key on a slider handle)
and a strategy change on the sample corpus and on a ~1M-decision corpus (copies of the sample),
a Compare pick, and the Replayer's Play at 24 steps/s (distinct frames shown per second and the
share of steps shown). The reference, measured in the same run, is the floor any widget pays: a
slider whose kernel callback only echoes its value into an HTML label. Also prints the kernel's
own time per Tuner move (the Tuner reports it) and the machine load.

    python benchmarks/bench_browser.py [--repeat 25] [--copies 304] [--play-seconds 5]
    python benchmarks/bench_browser.py --libraries   # bqplot against plotly's FigureWidget (needs plotly)
    python benchmarks/bench_browser.py --app [--repeat 25] [--copies 304]
    python benchmarks/bench_browser.py --app --first-load [--repeat 15]
    python benchmarks/bench_browser.py --sections [--repeat 25]

``--sections`` (``bench_sections.py``) times a Tuner move with the Tuner's advantages section
open, then with its shaping-certificate section open too, until each section's figure has
repainted (not only the Tuner's), against the same reference.

``--app`` measures the same actions in the dashboard (``workbench app``, a server process of its
own) instead of JupyterLab, plus the page's first load (from navigation to the Tuner's figure
drawn with every episode); there the reference is the kernel's own time per Tuner move (the
rest is transport and paint).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import tempfile
import time
from pathlib import Path

from browser_js import MEASURE_JS  # puts tests/ on the path for the browser helpers
from helpers.browser_lab import lab_server, launch, open_notebook, output, run_all, write_notebook

REPO = Path(__file__).resolve().parents[1]


def cells(copies: int) -> list[str]:
    shaped = REPO / "configs" / "upstream_shaped.yaml"
    return [
        (
            "import ipywidgets as w, workbench\nfrom workbench.data.episodes import Corpus\n"
            "from workbench.views.widgets import Compare, Replayer, Tuner\n"
            f"corpus = workbench.sample_corpus()\nshaped = workbench.RewardConfig.from_file({str(shaped)!r})\n"
            f"recommended = workbench.RewardConfig.from_file({str(REPO / 'configs' / 'recommended.yaml')!r})\n"
            f"default = workbench.RewardConfig.from_file({str(REPO / 'configs' / 'consistent.yaml')!r})\n"
            f"large = Corpus.concat([corpus] * {copies})\n"
            "echo_slider = w.IntSlider(0, 0, 10**6, description='echo')\necho_label = w.HTML('0')\n"
            "echo_slider.observe(lambda c: setattr(echo_label, 'value', str(c['new'])), 'value')"
        ),
        "w.VBox([echo_slider, echo_label])",
        "Tuner(corpus, shaped)",
        "Tuner(large, shaped)",
        "Compare(corpus, {'shaped': shaped, 'recommended': recommended, 'default': default})",
        "Replayer(corpus, shaped, episode='scripted-s2024-00000')",
    ]


def median_ms(page, target, action, args, repeat: int, gap_ms: int = 250) -> list[float]:
    times = []
    for i in range(repeat):
        times.append(page.evaluate(MEASURE_JS, [target, action, args(i)]))
        page.wait_for_timeout(gap_ms)
    return times


def tuner_runs(page, cell: int, repeat: int) -> dict[str, list[float]]:
    view = output(page, cell)
    view.scroll_into_view_if_needed()
    view.locator(".jupyter-widget-Collapse-header", has_text="weights: collect").click()
    figure = view.locator(".bqplot").first.element_handle()
    handle = view.locator(".widget-slider", has_text="collect_wood").locator(".noUi-handle").first.element_handle()
    weight = median_ms(page, figure, "key", lambda i: handle, repeat)
    timing = view.locator(".widget-html-content", has_text="redrew in")
    kernel_ms = []
    for _ in range(repeat):
        page.evaluate(MEASURE_JS, [figure, "key", handle])
        page.wait_for_timeout(250)
        kernel_ms.append(float(re.search(r"redrew in (\d+) ms", timing.inner_text()).group(1)))
    select = view.locator("select").first.element_handle()
    strategy = median_ms(
        page, figure, "select", lambda i: [select, "consistent" if i % 2 == 0 else "per_achievement"], repeat, 400
    )
    return {"weight": weight, "strategy": strategy, "kernel": kernel_ms}


def play(page, cell: int, seconds: float) -> tuple[float, float, int]:
    view = output(page, cell)
    view.scroll_into_view_if_needed()
    view.locator(".wb-speed").select_option("24")
    view.locator(".wb-btn", has_text="start").click()
    view.locator(".wb-btn", has_text="play").click()
    page.wait_for_timeout(int(seconds * 1000))
    view.locator(".wb-btn", has_text="pause").click()
    log = view.locator(".wb-replay").evaluate("r => r.workbenchReplay.log")
    steps = [s for _, s in log]
    duration = (log[-1][0] - log[0][0]) / 1000
    distinct = len(set(steps))
    return (distinct - 1) / duration, distinct / (steps[-1] - steps[0] + 1), distinct


#: The same update in both libraries: three boxes (precomputed quartiles) and 20 points move.
LIBRARIES_SETUP = """
import numpy as np, ipywidgets as w, plotly.graph_objects as go, bqplot as bq
rng = np.random.default_rng(0)
vals = np.sort(rng.normal(size=(3, 5)), axis=1)
def stats(shift):
    return [dict(q1=[v[1] + shift], median=[v[2] + shift], q3=[v[3] + shift], lowerfence=[v[0] + shift],
                 upperfence=[v[4] + shift]) for v in vals]
fig = go.FigureWidget(layout=dict(width=500, height=320, margin=dict(l=40, r=10, t=10, b=30), showlegend=False))
for i, s in enumerate(stats(0)):
    fig.add_box(x=[f'p{i}'], **s, name=f'p{i}')
fig.add_scatter(x=[f'p{i % 3}' for i in range(20)], y=rng.normal(size=20), mode='markers')
plotly_slider = w.IntSlider(0, 0, 1000, description='plotly')
def plotly_update(change):
    k = change['new'] * 0.01
    with fig.batch_update():
        for i, s in enumerate(stats(k)):
            fig.data[i].update(**s)
        fig.data[3].y = rng.normal(size=20) + k
plotly_slider.observe(plotly_update, 'value')
xs, ys = bq.LinearScale(), bq.LinearScale()
boxes = bq.Lines(x=np.zeros((3, 5)), y=np.zeros((3, 5)), scales={'x': xs, 'y': ys})
points = bq.Scatter(x=np.arange(20) % 3, y=rng.normal(size=20), scales={'x': xs, 'y': ys})
bq_figure = bq.Figure(marks=[boxes, points], axes=[bq.Axis(scale=xs), bq.Axis(scale=ys, side='left')],
                      layout=w.Layout(width='500px', height='320px'), animation_duration=0)
bq_slider = w.IntSlider(0, 0, 1000, description='bqplot')
def bq_update(change):
    k = change['new'] * 0.01
    x = np.array([[i - .2, i + .2, i + .2, i - .2, i - .2] for i in range(3)])
    y = np.array([[v[1], v[1], v[3], v[3], v[1]] for v in vals]) + k
    with boxes.hold_sync(), points.hold_sync():
        boxes.x, boxes.y = x, y
        points.y = rng.normal(size=20) + k
bq_slider.observe(bq_update, 'value')
"""


def libraries(repeat: int) -> None:
    """Print the median latency of one figure update in plotly's FigureWidget and in bqplot."""
    from playwright.sync_api import sync_playwright

    try:
        import plotly  # noqa: F401
    except ImportError:
        raise SystemExit("--libraries needs plotly (pip install plotly)") from None
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        write_notebook(
            root / "libraries.ipynb",
            [LIBRARIES_SETUP, "w.VBox([plotly_slider, fig])", "w.VBox([bq_slider, bq_figure])"],
        )
        with lab_server(root) as (base, token), sync_playwright() as playwright:
            browser = launch(playwright)
            page = open_notebook(browser, base, token, "libraries.ipynb", width=1280, height=900, file_browser=False)
            run_all(page, [1, 2])
            page.wait_for_timeout(3000)
            for cell, name, selector in ((1, "plotly FigureWidget", ".js-plotly-plot"), (2, "bqplot", ".bqplot")):
                view = output(page, cell)
                view.scroll_into_view_if_needed()
                target = view.locator(selector).first.element_handle()
                handle = view.locator(".noUi-handle").first.element_handle()
                times = median_ms(page, target, "key", lambda i, handle=handle: handle, repeat, 150)
                print(f"{name}: median {statistics.median(times):.0f} ms (min {min(times):.0f}, max {max(times):.0f})")
            browser.close()
    print(f"load average {os.getloadavg()[0]:.2f} (2 cores)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=25)
    parser.add_argument("--copies", type=int, default=304, help="copies of the sample corpus in the large one")
    parser.add_argument("--play-seconds", type=float, default=5.0)
    parser.add_argument("--libraries", action="store_true", help="compare bqplot with plotly's FigureWidget")
    parser.add_argument("--app", action="store_true", help="measure the dashboard (workbench app) instead")
    parser.add_argument(
        "--first-load", action="store_true", help="with --app: only the first load, beside the least Solara page's"
    )
    parser.add_argument(
        "--sections", action="store_true", help="a Tuner move with the advantages and certificate sections open"
    )
    args = parser.parse_args()
    if args.sections:
        from bench_sections import main as sections_main

        sections_main(args)
        return
    if args.libraries:
        libraries(args.repeat)
    if args.app:
        from bench_app import main as app_main

        app_main(args)
        return
    from playwright.sync_api import sync_playwright

    load_before = os.getloadavg()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        write_notebook(root / "bench.ipynb", cells(args.copies))
        with lab_server(root) as (base, token), sync_playwright() as playwright:
            browser = launch(playwright)
            page = open_notebook(browser, base, token, "bench.ipynb", width=1920, height=1080, file_browser=False)
            run_all(page, [1, 2, 3, 4, 5])
            page.wait_for_timeout(3000)
            echo_view = output(page, 1)
            echo_handle = echo_view.locator(".noUi-handle").first.element_handle()
            echo = median_ms(
                page,
                echo_view.locator(".widget-html-content").first.element_handle(),
                "key",
                lambda i: echo_handle,
                args.repeat,
            )
            small = tuner_runs(page, 2, args.repeat)
            large = tuner_runs(page, 3, args.repeat)
            compare_view = output(page, 4)
            compare_view.scroll_into_view_if_needed()
            picker = compare_view.locator("select").first.element_handle()
            compare_ms = median_ms(
                page,
                compare_view.locator(".bqplot").first.element_handle(),
                "select",
                lambda i: [picker, "recommended" if i % 2 == 0 else "shaped"],
                args.repeat,
                400,
            )
            fps, shown, distinct = play(page, 5, args.play_seconds)
            errors = list(page.errors)
            browser.close()
    load_after = os.getloadavg()
    decisions = 3296 * args.copies
    reference = statistics.median(echo)
    rows = [
        ("reference: slider echoed into a label", echo, None),
        ("Tuner weight change, sample corpus (3,296 decisions)", small["weight"], 150),
        ("Tuner strategy change, sample corpus", small["strategy"], 150),
        (f"Tuner weight change, {decisions:,} decisions", large["weight"], 250),
        (f"Tuner strategy change, {decisions:,} decisions", large["strategy"], 250),
        ("Compare pick (3 configs, sample corpus)", compare_ms, 300),
    ]
    print(f"browser latency, input event to change painted (median of {args.repeat}; min-max):")
    print("| action | median ms | min-max ms | vs reference | target |")
    print("|---|---:|---:|---:|---:|")
    for name, times, target in rows:
        median = statistics.median(times)
        print(
            f"| {name} | {median:.0f} | {min(times):.0f}-{max(times):.0f} | {median / reference:.1f}x | "
            f"{'' if target is None else f'<= {target}'} |"
        )
    print(
        f"kernel time per Tuner move (median): sample {statistics.median(small['kernel']):.0f} ms, "
        f"{decisions:,} decisions {statistics.median(large['kernel']):.0f} ms"
    )
    print(
        f"Replayer Play at 24 steps/s: {fps:.1f} distinct frames/s, {shown:.1%} of steps shown "
        f"({distinct} frames in {args.play_seconds:g} s)"
    )
    print(
        f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f} (2 cores); "
        f"{time.perf_counter() - started:.0f} s; page errors: {errors or 'none'}"
    )


if __name__ == "__main__":
    main()
