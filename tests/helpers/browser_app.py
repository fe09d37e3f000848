"""The dashboard (``workbench app``) as a real server process on a free loopback port.

For the app's browser tests and ``benchmarks/bench_browser.py --app`` (a helper, not a test
module)."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from helpers.browser_lab import REPO, LabError, free_port

URL = re.compile(r"dashboard: (http://127\.0\.0\.1:(\d+)/\?token=([0-9a-f]+))")
START_SECONDS = 90


@contextlib.contextmanager
def app_server(arguments: Sequence[str], log_path: Path) -> Iterator[tuple[str, str]]:
    """``workbench app ARGUMENTS --port FREE`` started in its own process group, its output in
    ``log_path``; yields (URL with token, token) once the page answers, and stops the whole
    group by its PID at the end."""
    port = free_port()
    command = [sys.executable, "-m", "workbench", "app", *arguments, "--port", str(port)]
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    with open(log_path, "w") as log:
        server = subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, env=environment, cwd=REPO, start_new_session=True
        )
    try:
        deadline = time.monotonic() + START_SECONDS
        while True:
            found = URL.search(log_path.read_text())
            if found:
                try:
                    urllib.request.urlopen(found.group(1), timeout=2)
                    break
                except (urllib.error.URLError, OSError):
                    pass
            if server.poll() is not None or time.monotonic() > deadline:
                raise LabError(f"workbench app did not start: {log_path.read_text()[-3000:]}")
            time.sleep(0.3)
        yield found.group(1), found.group(3)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(5)


#: The tab in front (Vuetify's ``v-tab--selected``).
FRONT_TAB = ".wb-app-tab.v-tab--selected"


def tab(page, title: str):
    """Click the dashboard's tab ``title``; returns the page's locator."""
    page.locator(".wb-app-tab", has_text=title).first.click()
    return page.locator(f".wb-app-page-{title.lower()}")


def wait_text(page, root, text: str, timeout: int = 90_000) -> None:
    """Wait until ``text`` shows in ``root`` (a locator)."""
    page.wait_for_function("([r, t]) => r.innerText.includes(t)", arg=[root.element_handle(), text], timeout=timeout)


@contextlib.contextmanager
def foreign_page(body: str) -> Iterator[str]:
    """A page of another origin (``body``, HTML) served from its own loopback port by a tiny
    ``http.server`` in a thread; yields its URL and stops the server at the end."""
    import http.server
    import threading

    page = body.encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            self.send_response(200)
            self.send_header("content-type", "text/html; charset=utf-8")
            self.send_header("content-length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, *_args: object) -> None:  # quiet: the test's output is the test's
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
    thread = threading.Thread(target=server.serve_forever, name="foreign page", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def upgrade_status(port: int, path: str, headers: dict[str, str]) -> str:
    """The status line the app answers a raw websocket upgrade of ``path`` with (``headers`` added)."""
    import base64
    import socket

    key = base64.b64encode(os.urandom(16)).decode()
    lines = [
        f"GET {path} HTTP/1.1",
        f"Host: 127.0.0.1:{port}",
        "Upgrade: websocket",
        "Connection: Upgrade",
        f"Sec-WebSocket-Key: {key}",
        "Sec-WebSocket-Version: 13",
        *(f"{k}: {v}" for k, v in headers.items()),
    ]
    with socket.create_connection(("127.0.0.1", port), timeout=30) as connection:
        connection.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        answer = b""
        while b"\r\n" not in answer:
            chunk = connection.recv(4096)
            if not chunk:
                break
            answer += chunk
    return answer.split(b"\r\n", 1)[0].decode("latin-1")


# -- driving the dashboard's views (benchmarks/bench_sessions.py and the session tests use
# these; a change of the views' markup is made here once) ---------------------------------------
def open_dashboard(context, url: str, width: int = 1280, height: int = 800):
    """A new page of ``context`` on the dashboard at ``url``, its Corpus page drawn."""
    page = context.new_page()
    page.set_viewport_size({"width": width, "height": height})
    page.goto(url)
    page.locator(".wb-app-page-corpus input").first.wait_for(timeout=START_SECONDS * 1000)
    return page


def tuner_weight(page, name: str):
    """The Tune page's figure and the weight slider of achievement ``name`` (its group opened):
    (figure element, slider handle element, readout locator). A key press on the handle moves
    the weight by 0.01."""
    tuner = tab(page, "Tune")
    tuner.locator(".workbench-tuner .bqplot").first.wait_for(timeout=START_SECONDS * 1000)
    slider = tuner.locator(".widget-slider", has_text=name)
    handle = slider.locator(".noUi-handle").first
    if not handle.is_visible():  # its group is closed
        tuner.locator(".jupyter-widget-Collapse-header", has_text=f"weights: {name.split('_')[0]}").click()
    handle.wait_for(timeout=START_SECONDS * 1000)
    figure = tuner.locator(".bqplot").first.element_handle()
    return figure, handle.element_handle(), slider.locator(".widget-readout")


def replay_controls(page) -> dict[str, Any]:
    """The Replay page's parts (locators): ``root``, ``picker`` (the episode), ``counter``
    (step n / N), and the ``start``, ``play`` and ``pause`` buttons."""
    root = tab(page, "Replay")
    return {
        "root": root,
        "picker": root.locator("select").first,
        "counter": root.locator(".wb-counter").first,
        **{name: root.locator(".wb-btn", has_text=name).first for name in ("start", "play", "pause")},
    }


def open_in_replayer(page, k: int) -> dict[str, Any]:
    """Click the Tune figure's ``k``-th episode (modulo their number) to show it in the
    Replayer; returns ``replay_controls`` once the Replayer shows it. The episode is the one the
    dot's tooltip names: the Replayer built behind the first page is visible at once on its
    start episode, before the click's episode reaches it."""
    tuner = tab(page, "Tune")
    dots = tuner.locator(".bqplot .dot")
    dots.first.wait_for(state="attached", timeout=START_SECONDS * 1000)
    dot = dots.nth(k % dots.count())
    dot.hover(force=True)
    tooltip = page.locator(".bqplot-tooltip, .bqplot.tooltip, [class*='tooltip']", has_text="achievements").first
    tooltip.wait_for(state="visible", timeout=START_SECONDS * 1000)
    episode = tooltip.inner_text().split(" · ")[0].strip()
    dot.click(force=True)
    page.locator(".wb-app-page-replay .wb-replay").wait_for(state="visible", timeout=START_SECONDS * 1000)
    controls = replay_controls(page)
    page.wait_for_function(
        "([picker, episode]) => picker.value === episode",
        arg=[controls["picker"].element_handle(), episode],
        timeout=START_SECONDS * 1000,
    )
    return controls


def follow_run(page, run: Path, target: Path, kind: str = "rollouts"):
    """Start the Live page following ``run`` into ``target``; returns the Live page's locator."""
    live = tab(page, "Live")
    live.locator("input[placeholder='/path/to/run-folder']").fill(str(run))
    live.locator("input[placeholder='/path/to/target-corpus']").fill(str(target))
    live.locator("select").first.select_option(label=kind)
    live.locator(".wb-live-follow").click()
    return live
