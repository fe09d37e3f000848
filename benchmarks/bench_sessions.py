"""``bench_app.py --sessions N``: N people on one dashboard server at once (issue 33).

    python benchmarks/bench_app.py --sessions 8                 # the sample and ~100k decisions
    python benchmarks/bench_app.py --sessions 2 --repeat 10     # a quick run

One ``workbench app`` server (a real process, ``tests/helpers/browser_app.app_server``) per
corpus size; N browser sessions (each a browser context on its own thread, in its own Debian
chromium or, with ``--one-browser``, all in one chromium over the DevTools protocol; driven
through the helpers of ``tests/helpers/browser_app.py`` so a change of the views' markup is
followed there) open the dashboard one after the other (the server's resident memory read
after each: memory per added session), then all at once drag the Tuner's collect_wood weight
(``--repeat`` key presses each, input event to the figure's change painted) and play the
Replayer (click on play to the step counter's change painted), while session 0's Live page
follows a run that a thread keeps adding rollout files to. Server CPU seconds are read from
/proc over the busy phase, and so are every process's, by kind (chromium renderers, the rest of
chromium, Playwright's drivers, the server, the rest): what the cores were busy with. At the end each session checks it still shows its own state: its
weight moved by its own presses (each session presses a different number of times) and its own
Replayer episode. Prints p50/p95 per action and size, the memory and CPU per session, the check,
console errors, and the load average.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
from browser_js import TIMED_JS  # puts tests/ on the path for the browser helpers
from helpers.browser_app import (
    app_server,
    follow_run,
    open_dashboard,
    open_in_replayer,
    replay_controls,
    tuner_weight,
)
from helpers.browser_lab import CHROMIUM, CHROMIUM_ARGS, collect_errors, launch

from workbench.data.episodes import Corpus
from workbench.data.sample import sample_corpus, sample_path
from workbench.data.storage import save_corpus

REPO = Path(__file__).resolve().parents[1]
ROLLOUTS = sample_path().parent / "sample_imports" / "rollouts"
#: Click on a button, to the first change of ``counter`` painted (ms; -1 after 15 s).
PLAY_JS = """async ([button, counter]) => { const t0 = performance.now();
  const done = new Promise(res => { const obs = new MutationObserver(() => { obs.disconnect();
     requestAnimationFrame(() => setTimeout(() => res(performance.now() - t0), 0)); });
     obs.observe(counter, {subtree: true, childList: true, characterData: true}); });
  button.click();
  return await Promise.race([done, new Promise(r => setTimeout(() => r(-1), 15000))]); }"""


def server_pid(url: str) -> int:
    """The process of the ``workbench app`` serving ``url`` (found by its --port argument)."""
    port = url.split("?")[0].rstrip("/").rsplit(":", 1)[1].encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"app" in argv and b"--port" in argv and argv[argv.index(b"--port") + 1] == port:
            return int(entry.name)
    raise RuntimeError(f"no workbench app process on port {port.decode()}")


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def process_kind(pid: int, server: int) -> str:
    """What a process is, for the CPU table (from its command line)."""
    argv = (Path("/proc") / str(pid) / "cmdline").read_bytes().split(b"\0")
    line = b" ".join(argv)
    if pid == server:
        return "workbench app server"
    if b"chromium" in line:
        return "chromium renderers" if b"--type=renderer" in line else "chromium (browser, GPU, utility)"
    if b"playwright" in line or Path(argv[0].decode(errors="replace")).name == "node":
        return "Playwright drivers (node)"
    return "everything else (this script, other work)"


def cpu_by_kind(server: int) -> dict[int, tuple[str, float]]:
    """Every process's kind and CPU seconds so far (those gone while reading are skipped)."""
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                found[int(entry.name)] = (process_kind(int(entry.name), server), cpu_seconds(int(entry.name)))
            except (OSError, IndexError, ValueError):
                continue
    return found


def cpu_spent(before: dict[int, tuple[str, float]], after: dict[int, tuple[str, float]]) -> dict[str, float]:
    """CPU seconds by kind between two ``cpu_by_kind`` readings (a process born between counts whole)."""
    spent: dict[str, float] = {}
    for pid, (kind, seconds) in after.items():
        spent[kind] = spent.get(kind, 0.0) + seconds - before.get(pid, (kind, 0.0))[1]
    return spent


class Session(threading.Thread):
    """One person: opens the dashboard when told, then (all together) tunes and replays."""

    def __init__(self, number: int, url: str, args: argparse.Namespace, shared: dict[str, Any]) -> None:
        super().__init__(name=f"session-{number}", daemon=True)
        self.number, self.url, self.args, self.shared = number, url, args, shared
        self.go, self.opened = threading.Event(), threading.Event()
        self.times: dict[str, list[float]] = {"Tuner move": [], "Replayer play": []}
        self.timeouts = 0
        self.errors: list[str] = []
        self.mixed: list[str] = []

    def run(self) -> None:
        from playwright.sync_api import sync_playwright

        try:
            with sync_playwright() as playwright:
                endpoint = self.shared.get("endpoint")
                browser = playwright.chromium.connect_over_cdp(endpoint) if endpoint else launch(playwright)
                try:
                    self._session(browser)
                finally:
                    browser.close()
        except Exception as error:  # reported in the table, the other sessions go on
            self.errors.append(f"session {self.number}: {type(error).__name__}: {error}")
        finally:
            self.opened.set()

    def _session(self, browser: Any) -> None:
        self.go.wait()
        context = browser.new_context()
        page = open_dashboard(context, self.url)
        collect_errors(page, self.errors)
        figure, handle, readout = tuner_weight(page, "collect_wood")
        start = float(readout.inner_text())
        controls = open_in_replayer(page, self.number)  # each session its own episode
        episode = controls["picker"].input_value()
        if self.number == 0:
            follow_run(page, self.shared["run"], self.shared["target"])
        self.opened.set()
        self.shared["start"].wait()
        presses = 0
        for i in range(self.args.repeat + self.number):  # a different count per session: its own state
            figure, handle, _ = tuner_weight(page, "collect_wood")
            elapsed = page.evaluate(TIMED_JS, [figure, "key", handle])
            presses += 1
            if i < self.args.repeat:
                self._keep("Tuner move", elapsed)
            page.wait_for_timeout(self.args.gap_ms)
            if i % 5 == 4:  # now and then, play the Replayer a moment
                self._play(page)
        self.shared["done"].wait()  # every session finished: now look for another's state
        _, _, readout = tuner_weight(page, "collect_wood")
        shown = float(readout.inner_text())
        if abs(shown - (start + presses / 100)) > 1e-6:
            self.mixed.append(f"session {self.number}: weight {shown}, its own {start + presses / 100:.2f}")
        picked = replay_controls(page)["picker"].input_value()
        if picked != episode:
            self.mixed.append(f"session {self.number}: Replayer on {picked!r}, its own {episode!r}")
        context.close()

    def _play(self, page: Any) -> None:
        controls = replay_controls(page)
        controls["start"].click()
        page.wait_for_timeout(200)
        elapsed = page.evaluate(PLAY_JS, [controls["play"].element_handle(), controls["counter"].element_handle()])
        self._keep("Replayer play", elapsed)
        page.wait_for_timeout(self.args.play_ms)
        controls["pause"].click()

    def _keep(self, action: str, elapsed: float) -> None:
        if elapsed < 0:
            self.timeouts += 1
        else:
            self.times[action].append(elapsed)


def feed_run(run: Path, stop: threading.Event) -> None:
    """A training run: a rollout file lands every second (the same episodes under new run ids)."""
    files = sorted(ROLLOUTS.iterdir())
    n = 0
    while not stop.wait(1.0):
        source = files[n % len(files)]
        text = source.read_text().replace('"run_id": "', f'"run_id": "feed{n}-')
        (run / f"{n:05d}-{source.name}").write_text(text)
        n += 1


def measure(corpus: Path, folder: Path, args: argparse.Namespace) -> dict[str, Any]:
    """One server on ``corpus``, ``args.sessions`` sessions on it; their figures."""
    configs = [REPO / "configs" / f"{name}.yaml" for name in ("upstream_shaped", "recommended", "consistent")]
    arguments = [str(corpus), *[a for c in configs for a in ("--config", str(c))], "--workspace", str(folder / "ws")]
    run, stop = folder / "run", threading.Event()
    run.mkdir(exist_ok=True)
    browser = shared_chromium(folder) if args.one_browser else contextlib.nullcontext(None)
    with app_server(arguments, folder / "server.log") as (url, _), browser as endpoint:
        pid = server_pid(url)
        shared = {
            "run": run,
            "target": folder / "live",
            "start": threading.Event(),
            "done": threading.Event(),
            "endpoint": endpoint,
        }
        sessions = [Session(i, url, args, shared) for i in range(args.sessions)]
        time.sleep(2.0)
        memory = [rss_mb(pid)]
        for session in sessions:  # one after the other: the memory each adds
            session.start()
            session.go.set()
            session.opened.wait(timeout=600)
            time.sleep(2.0)  # its views built
            memory.append(rss_mb(pid))
        feeder = threading.Thread(target=feed_run, args=(run, stop), daemon=True)
        feeder.start()
        cpu, every, started = cpu_seconds(pid), cpu_by_kind(pid), time.perf_counter()
        shared["start"].set()
        while any(s.is_alive() for s in sessions) and not all(_finished(s, args) for s in sessions):
            time.sleep(0.5)
        busy, wall = cpu_seconds(pid) - cpu, time.perf_counter() - started
        kinds = cpu_spent(every, cpu_by_kind(pid))
        shared["done"].set()
        for session in sessions:
            session.join(timeout=300)
        stop.set()
        peak = rss_mb(pid)
    return {"sessions": sessions, "memory": memory, "peak": peak, "cpu": busy, "wall": wall, "kinds": kinds}


@contextlib.contextmanager
def shared_chromium(folder: Path) -> Iterator[str]:
    """One headless Debian chromium for every session (``--one-browser``): its DevTools
    endpoint, which each session's Playwright connects to (its own context in it). Stopped by
    its process group at the end."""
    command = [
        str(CHROMIUM),
        "--headless",
        "--remote-debugging-port=0",
        f"--user-data-dir={folder / 'chromium-profile'}",
        *CHROMIUM_ARGS,
        "about:blank",
    ]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert process.stderr is not None
        endpoint = None
        for line in process.stderr:  # chromium names its endpoint on stderr once it listens
            found = re.search(r"DevTools listening on (ws://\S+)", line)
            if found:
                endpoint = found.group(1)
                break
        if endpoint is None:
            raise RuntimeError(f"chromium exited ({process.poll()}) without a DevTools endpoint")
        drain = threading.Thread(target=process.stderr.read, daemon=True)  # never blocks on a full pipe
        drain.start()
        yield endpoint
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        process.wait(30)


def _finished(session: Session, args: argparse.Namespace) -> bool:
    return len(session.times["Tuner move"]) + session.timeouts >= args.repeat or bool(session.errors)


def report(name: str, found: dict[str, Any], args: argparse.Namespace) -> None:
    sessions: list[Session] = found["sessions"]
    browsers = "one chromium, a context each" if args.one_browser else "a chromium each"
    print(f"\n{name}: {args.sessions} sessions on one server ({browsers})")
    print("| action | measured | p50 ms | p95 ms | max ms | timed out (15 s) |")
    print("|---|---:|---:|---:|---:|---:|")
    timeouts = sum(s.timeouts for s in sessions)
    for action in ("Tuner move", "Replayer play"):
        values = np.array([t for s in sessions for t in s.times[action]])
        if len(values):
            p50, p95 = np.percentile(values, [50, 95])
            print(f"| {action} | {len(values)} | {p50:.0f} | {p95:.0f} | {values.max():.0f} | {timeouts} |")
        else:
            print(f"| {action} | 0 | - | - | - | {timeouts} |")
    memory = found["memory"]
    added = np.diff(memory)
    print(
        f"server resident memory: {memory[0]:.0f} MB before any session, {memory[-1]:.0f} MB with "
        f"{args.sessions} (per added session: median {np.median(added):.0f} MB, max {added.max():.0f}), "
        f"{found['peak']:.0f} MB at the end"
    )
    print(
        f"server CPU while they worked: {found['cpu']:.1f} s over {found['wall']:.0f} s "
        f"({found['cpu'] / args.sessions:.1f} s per session, {found['cpu'] / found['wall']:.2f} cores)"
    )
    print("| CPU while they worked | cores |")
    print("|---|---:|")
    for kind, seconds in sorted(found["kinds"].items(), key=lambda item: -item[1]):
        print(f"| {kind} | {seconds / found['wall']:.2f} |")
    mixed = [m for s in sessions for m in s.mixed]
    print("no session showed another's state" if not mixed else f"SESSIONS MIXED: {mixed}")
    errors = [e for s in sessions for e in s.errors]
    print(f"console errors and failures: {len(errors)}" + (f": {errors[:5]}" if errors else ""))


def main(args: argparse.Namespace) -> None:
    """Measure each corpus size and print its table."""
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="bench_sessions_") as root:
        large = Path(root) / "large"
        copies = max(1, round(args.decisions / sample_corpus().n_decisions))
        if args.decisions:
            save_corpus(Corpus.concat([sample_corpus()] * copies), large)
        sizes = [("sample corpus (3,296 decisions)", sample_path())]
        if args.decisions:
            sizes.append((f"{copies * sample_corpus().n_decisions:,} decisions ({copies} copies)", large))
        for name, corpus in sizes:
            folder = Path(root) / name.split()[0]
            folder.mkdir()
            report(name, measure(corpus, folder, args), args)
            shutil.rmtree(folder, ignore_errors=True)
    after = os.getloadavg()
    print(f"\nload average before {load_before[0]:.2f}, after {after[0]:.2f} ({os.cpu_count()} cores)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``bench_app.py --sessions``."""
    parser.add_argument("--sessions", type=int, required=True, help="browser sessions on the one server")
    parser.add_argument("--repeat", type=int, default=20, help="timed Tuner moves per session")
    parser.add_argument(
        "--decisions", type=int, default=100_000, help="the larger corpus (copies of the sample; 0: the sample only)"
    )
    parser.add_argument("--gap-ms", type=int, default=250, help="pause between a session's moves")
    parser.add_argument("--play-ms", type=int, default=1000, help="how long each Replayer play runs")
    parser.add_argument(
        "--one-browser",
        action="store_true",
        help="all sessions as contexts of one chromium (over the DevTools protocol), not a chromium each",
    )
