"""``bench_browser.py --app``: the dashboard's latency in Debian's chromium (first load, Tuner
weight and strategy changes on the sample and on ~1M decisions, a Compare pick); a module of
that script, run through it."""

from __future__ import annotations

import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

from browser_js import TIMED_JS  # puts tests/ on the path for the browser helpers
from helpers.browser_app import tab
from helpers.browser_lab import TIMEOUT_MS, free_port, launch

REPO = Path(__file__).resolve().parents[1]

TIMEOUTS: list[str] = []


def median_ms(page, target, action, args, repeat: int, gap_ms: int = 250) -> list[float]:
    """``repeat`` timings of ``action`` (see bench_browser.median_ms); a timed-out one is left out and counted."""
    times = []
    for i in range(repeat):
        elapsed = page.evaluate(TIMED_JS, [target, action, args(i)])
        if elapsed < 0:
            TIMEOUTS.append(action)
        else:
            times.append(elapsed)
        page.wait_for_timeout(gap_ms)
    return times


#: A dashboard server on a corpus built in Python (copies of the sample), in its own process.
SERVER = """
import sys
from pathlib import Path
import workbench
from workbench.views.app.options import AppOptions
from workbench.views.app.server import serve
from workbench.data.episodes import Corpus
copies, port, token, workspace = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
corpus = workbench.sample_corpus()
configs = [Path({configs!r}) / name for name in ("upstream_shaped.yaml", "recommended.yaml", "consistent.yaml")]
serve(AppOptions(corpus=corpus if copies == 1 else Corpus.concat([corpus] * copies), configs=configs,
                 workspace=Path(workspace)), port=port, token=token, announce=lambda line: print(line, flush=True))
"""


#: The reference for the first load: the least page Solara serves (one text box), with or without
#: the workbench's AssetCache. What the dashboard adds on top of it is the workbench's own cost.
REFERENCE = """
import os, sys
port, folder, cached = int(sys.argv[1]), sys.argv[2], sys.argv[3] == "cached"
sys.path.insert(0, folder)
with open(os.path.join(folder, "least_page.py"), "w") as page:
    page.write("import ipywidgets as w, solara\\n@solara.component\\ndef Page():\\n"
               "    box = solara.use_memo(lambda: w.VBox([w.Text(description='open:')]), [])\\n"
               "    box.add_class('wb-least-page')\\n    solara.display(box)\\n")
os.environ.update(SOLARA_APP="least_page:Page", SOLARA_TELEMETRY_MIXPANEL_ENABLE="False", SOLARA_THEME_SHOW_BANNER="False",
                  SERVER_NAME="127.0.0.1", SERVER_PORT=str(port))
from solara.server.starlette import app
from workbench.views.app.assets import AssetCache
import uvicorn
uvicorn.run(AssetCache(app) if cached else app, host="127.0.0.1", port=port, log_level="warning")
"""


def _process(script: str, arguments: list[str], url: str, log_path: Path):
    """``python -c script arguments`` in its own process group; returns it once ``url`` answers."""
    import subprocess
    import urllib.request

    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    log = open(log_path, "w")
    process = subprocess.Popen(
        [sys.executable, "-c", script, *arguments],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    while True:
        try:
            urllib.request.urlopen(url, timeout=2)
            return process
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(log_path.read_text()[-2000:]) from None
            time.sleep(0.3)


def _reference(playwright, folder: Path, cached: bool, repeat: int) -> list[float]:
    """Seconds to the least Solara page's box in ``repeat`` fresh browser contexts."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    process = _process(REFERENCE, [str(port), str(folder), "cached" if cached else "plain"], url, folder / "least.log")
    browser = launch(playwright)
    try:
        return _first_views(browser, url, repeat, selector=".wb-least-page input", reloads=False)[0]
    finally:
        browser.close()
        _stop(process)


def _server(copies: int, folder: Path):
    port, token = free_port(), "b" * 48
    script = SERVER.format(configs=str(REPO / "configs"))
    url = f"http://127.0.0.1:{port}/?token={token}"
    arguments = [str(copies), str(port), token, str(folder / f"ws-{copies}")]
    return _process(script, arguments, url, folder / f"server-{copies}.log"), url


def _stop(process) -> None:
    import signal

    os.killpg(process.pid, signal.SIGTERM)
    process.wait(15)


def _first_load(browser, url: str, episodes: int) -> tuple[float, object]:
    page = browser.new_page(viewport={"width": 1920, "height": 1080})
    started = time.perf_counter()
    page.goto(url)
    page.locator(".wb-app-corpus", has_text="open:").wait_for(timeout=TIMEOUT_MS * 3)
    tab(page, "Tune")
    page.wait_for_function(
        "(n) => document.querySelectorAll('.wb-app-page-tune .bqplot .dot').length >= n",
        arg=min(episodes, 10),
        timeout=TIMEOUT_MS * 3,
    )
    return (time.perf_counter() - started) * 1000, page


def _first_views(
    browser, url: str, repeat: int, selector: str = ".wb-app-page-corpus input", reloads: bool = True
) -> tuple[list[float], list[float]]:
    """Seconds from navigation to the first interactive view (``selector`` drawn: the Corpus
    page's boxes): ``repeat`` loads in fresh browser contexts (nothing cached) and, with
    ``reloads``, ``repeat`` reloads of one page."""
    cold: list[float] = []
    warm: list[float] = []
    for _ in range(repeat):
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        page = context.new_page()
        started = time.perf_counter()
        page.goto(url)
        page.locator(selector).first.wait_for(timeout=TIMEOUT_MS)
        cold.append(time.perf_counter() - started)
        for _ in range(repeat if reloads and not warm else 0):
            started = time.perf_counter()
            page.reload()
            page.locator(selector).first.wait_for(timeout=TIMEOUT_MS)
            warm.append(time.perf_counter() - started)
        context.close()
    return cold, warm


#: What shows that a view is drawn on its page, the first time the page is shown.
DRAWN = {
    "Tune": ".wb-app-page-tune .bqplot .dot",
    "Replay": ".wb-app-page-replay canvas",
    "Compare": ".wb-app-page-compare .bqplot",
}


def _first_shows(browser, url: str, repeat: int) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Seconds from the click on a view's tab to the view drawn, the first time each is shown,
    1 s after the first load (the views are built behind the first page once it is drawn), in
    ``repeat`` fresh browser contexts; then the same once more for each, back from the Corpus
    page (a page kept mounted is drawn as it was; one unmounted is drawn anew)."""
    first: dict[str, list[float]] = {title: [] for title in DRAWN}
    again: dict[str, list[float]] = {title: [] for title in DRAWN}
    for _ in range(repeat):
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        page = context.new_page()
        page.goto(url)
        page.locator(".wb-app-page-corpus input").first.wait_for(timeout=TIMEOUT_MS)
        page.wait_for_timeout(1000)  # the first load's work is over
        for times in (first, again):
            for title, drawn in DRAWN.items():
                tab(page, "Corpus")
                page.locator(".wb-app-page-corpus input").first.wait_for(timeout=TIMEOUT_MS)
                page.wait_for_timeout(300)
                started = time.perf_counter()
                tab(page, title)
                page.locator(drawn).first.wait_for(timeout=TIMEOUT_MS)
                times[title].append(time.perf_counter() - started)
        context.close()
    return first, again


def _tuner(page, repeat: int) -> dict[str, list[float]]:
    view = tab(page, "Tune")
    view.locator(".jupyter-widget-Collapse-header", has_text="weights: collect").click()
    figure = view.locator(".bqplot").first.element_handle()
    handle = view.locator(".widget-slider", has_text="collect_wood").locator(".noUi-handle").first.element_handle()
    weight = median_ms(page, figure, "key", lambda i: handle, repeat)
    timing = view.locator(".widget-html-content", has_text="redrew in")
    kernel = []
    for _ in range(repeat):
        page.evaluate(TIMED_JS, [figure, "key", handle])
        page.wait_for_timeout(250)
        kernel.append(float(re.search(r"redrew in (\d+) ms", timing.inner_text()).group(1)))
    select = view.locator("select").first.element_handle()
    strategy = median_ms(
        page, figure, "select", lambda i: [select, "consistent" if i % 2 == 0 else "per_achievement"], repeat, 400
    )
    return {"weight": weight, "strategy": strategy, "kernel": kernel}


def first_load(args) -> None:
    """Print the dashboard's first load on the sample beside the least Solara page's, served by
    Solara as it is and through the workbench's ``AssetCache``: ``--repeat`` fresh browser
    contexts each, in rounds that take turns (the machine's noise falls on all three alike);
    then the reloads and each view's first show."""
    from playwright.sync_api import sync_playwright

    load_before, started = os.getloadavg(), time.perf_counter()
    times: dict[str, list[float]] = {"dashboard": [], "least page, Solara as it is": [], "least page, AssetCache": []}
    reloads: list[float] = []
    shows: dict[str, list[float]] = {title: [] for title in DRAWN}
    again: dict[str, list[float]] = {title: [] for title in DRAWN}
    rounds = max(1, args.repeat // 3)
    with tempfile.TemporaryDirectory() as folder, sync_playwright() as playwright:
        for _ in range(rounds):
            process, url = _server(1, Path(folder))
            browser = launch(playwright)
            try:
                cold, warm = _first_views(browser, url, 3)
                times["dashboard"] += cold
                reloads += warm
                first_shows, shows_again = _first_shows(browser, url, 3)
                for title in DRAWN:
                    shows[title] += first_shows[title]
                    again[title] += shows_again[title]
            finally:
                browser.close()
                _stop(process)
            times["least page, Solara as it is"] += _reference(playwright, Path(folder), False, 3)
            times["least page, AssetCache"] += _reference(playwright, Path(folder), True, 3)
    floor = statistics.median(times["least page, AssetCache"])
    print(f"first load, navigation to the first box drawn (new browser contexts; {rounds} rounds of 3):")
    print("| page | median s | min-max s | vs least page (AssetCache) |")
    print("|---|---:|---:|---:|")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"| {name} | {median:.2f} | {min(values):.2f}-{max(values):.2f} | {median / floor:.2f}x |")
    print(f"dashboard reload: median {statistics.median(reloads):.2f} s ({min(reloads):.2f}-{max(reloads):.2f})")
    print("first show of each view, 1 s after the first load, click on its tab to the view drawn:")
    for title, values in shows.items():
        print(f"  {title}: median {statistics.median(values):.2f} s ({min(values):.2f}-{max(values):.2f})")
    print("shown again, back from the Corpus page, click on its tab to the view drawn:")
    for title, values in again.items():
        print(f"  {title}: median {statistics.median(values):.2f} s ({min(values):.2f}-{max(values):.2f})")
    load_after = os.getloadavg()
    print(
        f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f} (2 cores); {time.perf_counter() - started:.0f} s"
    )


def main(args) -> None:
    """Measure and print the dashboard's table (the same rows and targets as the notebooks')."""
    if args.first_load:
        first_load(args)
        return
    from playwright.sync_api import sync_playwright

    load_before, started = os.getloadavg(), time.perf_counter()
    results: dict[int, dict] = {}
    with tempfile.TemporaryDirectory() as folder, sync_playwright() as playwright:
        for copies in (1, args.copies):
            process, url = _server(copies, Path(folder))
            # A fresh browser per server: cookies are per host, not port, and Solara's session
            # cookie from the previous server would point the page at a kernel this one lacks.
            browser = launch(playwright)
            try:
                if copies == 1:
                    first_cold, first_warm = _first_views(browser, url, max(3, args.repeat // 3))
                load_ms, page = _first_load(browser, url, 10 * copies)
                row = {"load": load_ms, **_tuner(page, args.repeat)}
                if copies == 1:
                    view = tab(page, "Compare")
                    picker = view.locator("select").first.element_handle()
                    row["compare"] = median_ms(
                        page,
                        view.locator(".bqplot").first.element_handle(),
                        "select",
                        lambda i, picker=picker: [picker, "recommended" if i % 2 == 0 else "upstream_shaped"],
                        args.repeat,
                        400,
                    )
                row["errors"] = []
                page.close()
                results[copies] = row
            finally:
                browser.close()
                _stop(process)
    small, large = results[1], results[args.copies]
    decisions = 3296 * args.copies
    rows = [
        ("Tuner weight change, sample corpus (3,296 decisions)", small["weight"], small["kernel"], 150),
        ("Tuner strategy change, sample corpus", small["strategy"], small["kernel"], 150),
        (f"Tuner weight change, {decisions:,} decisions", large["weight"], large["kernel"], 250),
        (f"Tuner strategy change, {decisions:,} decisions", large["strategy"], large["kernel"], 250),
        ("Compare pick (3 configs, sample corpus)", small["compare"], None, 300),
    ]
    print(f"dashboard latency, input event to change painted (median of {args.repeat}; min-max):")
    print("| action | median ms | min-max ms | vs kernel time | target |")
    print("|---|---:|---:|---:|---:|")
    for name, times, kernel, target in rows:
        median = statistics.median(times)
        ratio = f"{median / max(statistics.median(kernel), 1):.1f}x" if kernel else ""
        print(f"| {name} | {median:.0f} | {min(times):.0f}-{max(times):.0f} | {ratio} | <= {target} |")
    print(
        f"first load (navigation to the Tuner's figure drawn): sample {small['load']:.0f} ms, "
        f"{decisions:,} decisions {large['load']:.0f} ms (includes building the Tuner, which scores the corpus)"
    )
    print(
        f"first interactive view (navigation to the Corpus page's boxes, sample): median "
        f"{statistics.median(first_cold):.2f} s new browser context ({min(first_cold):.2f}-{max(first_cold):.2f}), "
        f"{statistics.median(first_warm):.2f} s reload ({min(first_warm):.2f}-{max(first_warm):.2f})"
    )
    print(
        f"kernel time per Tuner move (median): sample {statistics.median(small['kernel']):.0f} ms, "
        f"{decisions:,} decisions {statistics.median(large['kernel']):.0f} ms"
    )
    load_after = os.getloadavg()
    print(
        f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f} (2 cores); "
        f"{time.perf_counter() - started:.0f} s; timed-out actions (15 s, left out): {len(TIMEOUTS)}"
    )


if __name__ == "__main__":  # `bench_app.py --sessions N`; the rest runs through `bench_browser.py --app`
    import argparse

    import bench_sessions

    parser = argparse.ArgumentParser(description=bench_sessions.__doc__.split("\n")[0])
    bench_sessions.add_arguments(parser)
    bench_sessions.main(parser.parse_args())
