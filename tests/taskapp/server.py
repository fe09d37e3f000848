"""Start and stop synth-ai's real Crafter task app (0.2.14 or 0.2.24) with synth-ai's own CLI.

``synth-ai task-app serve`` finds task apps by scanning the ``.py`` files under the current
folder (and its ``examples/``) for a ``TaskAppConfig(app_id=...)`` / ``register_task_app``
call, skipping any path with a ``venv`` part, so the app cannot be served from inside the venv.
The folder is therefore laid out as the synth-ai repository is: ``examples/task_apps/crafter/
task_app/`` (``grpo_crafter.py`` and its ``synth_envs_hosted`` package, copied from the venv),
the ``__init__.py`` files above it, and a ``.env`` the CLI requires. The CLI asks whether to
enable tracing when ``--trace`` is not given; the answer ``n`` is piped to it. ``HOME`` points
into the folder so no stored synth-ai demo directory (``~/.synth-ai/demo.json``) redirects it.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from taskapp.venv import VERSION, TaskAppVenv

APP_ID = "grpo-crafter-task-app"
API_KEY = "workbench-test-environment-key"
#: Dummy keys: the stand-in needs none, the CLI refuses to start (or prompts) without them.
DUMMY_ENV = {
    "ENVIRONMENT_API_KEY": API_KEY,
    "OPENAI_API_KEY": "sk-workbench-dummy",
    "GROQ_API_KEY": "gsk-workbench-dummy",
}
#: Environment variables of this process the task app must not see (a real backend key would
#: make the CLI upload the environment key; tracing settings would turn tracing on).
_DROPPED = (
    "SYNTH_API_KEY",
    "BACKEND_BASE_URL",
    "SYNTH_BASE_URL",
    "TASKAPP_TRACING_ENABLED",
    "TASKAPP_SFT_OUTPUT_DIR",
    "TURSO_LOCAL_DB_URL",
    "SQLD_DB_PATH",
    "SYNTH_TASK_APP_SEARCH_PATH",
    "SYNTH_DEMO_DIR",
    "PYTHONPATH",
    "VIRTUAL_ENV",
    "SYNTH_FAKE_INFERENCE",
)
HEALTH_TIMEOUT_S = 120.0
#: The trace database's file name inside the ``trace`` folder.
TRACE_DB = "synth_ai.db"


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


def lay_out_app_folder(venv: TaskAppVenv, folder: Path) -> Path:
    """Build the folder the CLI is run from (see the module docstring); return it."""
    source = venv.site_packages() / "examples"
    target = folder / "examples"
    for package in ("", "task_apps", "task_apps/crafter"):
        (target / package).mkdir(parents=True, exist_ok=True)
        shutil.copy2(source / package / "__init__.py", target / package / "__init__.py")
    shutil.copytree(
        source / "task_apps/crafter/task_app",
        target / "task_apps/crafter/task_app",
        ignore=shutil.ignore_patterns("__pycache__"),
        dirs_exist_ok=True,
    )
    (folder / ".env").write_text("".join(f"{k}={v}\n" for k, v in DUMMY_ENV.items()), encoding="utf-8")
    (folder / "home").mkdir(exist_ok=True)
    return folder


@dataclass
class TaskAppServer:
    """A running ``synth-ai task-app serve`` process (its own process group) and its log."""

    process: subprocess.Popen
    base_url: str
    log_path: Path
    command: list[str]
    _log: IO[bytes] | None = field(default=None, repr=False)

    def log_tail(self, lines: int = 60) -> str:
        """The last lines of the server's output (for failure messages)."""
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def stop(self, timeout_s: float = 15.0) -> None:
        """Stop the server and every process it started: SIGTERM to its process group, then
        SIGKILL to whatever is left of it after ``timeout_s``."""
        pgid = self.process.pid  # started with start_new_session: its pid is its group id
        for sig, wait_s in ((signal.SIGTERM, timeout_s), (signal.SIGKILL, 5.0)):
            try:
                os.killpg(pgid, sig)
            except ProcessLookupError:
                break
            try:
                self.process.wait(timeout=wait_s)
            except subprocess.TimeoutExpired:
                continue
            if not _group_alive(pgid):
                break
        if self._log is not None:
            self._log.close()
            self._log = None


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def serve_command(venv: TaskAppVenv, host: str, port: int, version: str) -> list[str]:
    """The CLI that serves the app: ``task-app serve`` in 0.2.14; ``task-app-group serve`` (with
    the ``.env`` named: it reads none by itself) in 0.2.24, whose ``task-app serve`` exits 2."""
    # The console script's shebang names the folder the venv was built in (it is renamed after
    # the build), so the script is run by the venv's interpreter.
    if version == VERSION:
        return [str(venv.python), str(venv.synth_ai), "task-app", "serve", APP_ID, "--host", host, "--port", str(port)]
    return [
        *(str(venv.python), str(venv.synth_ai), "task-app-group", "serve", APP_ID),
        *("--host", host, "--port", str(port), "--env-file", ".env"),
    ]


def start_task_app(
    venv: TaskAppVenv,
    folder: Path,
    *,
    host: str = "127.0.0.1",
    port: int | None = None,
    trace: Path | None = None,
    version: str = VERSION,
) -> TaskAppServer:
    """Run ``synth-ai task-app serve grpo-crafter-task-app --host H --port P`` from ``folder``
    (laid out by ``lay_out_app_folder``; ``task-app-group serve`` for 0.2.24, ``version``) and
    wait until ``/health`` answers healthy. With ``trace``, tracing is on (``--trace DIR
    --trace-db DIR/synth_ai.db``: the trace database and one SFT JSONL file per rollout go there;
    0.2.24 cannot run without it: every rollout fails without a trace).

    Raises ``RuntimeError`` with the server's log when it exits or does not get healthy in time
    (the process is stopped first).
    """
    port = port or free_port(host)
    env = {k: v for k, v in os.environ.items() if k not in _DROPPED}
    env.update(DUMMY_ENV)
    env.update(HOME=str(folder / "home"), HF_HUB_OFFLINE="1", PYTHONUNBUFFERED="1", NO_COLOR="1")
    command = serve_command(venv, host, port, version)
    if trace is not None:
        trace.mkdir(parents=True, exist_ok=True)
        command += ["--trace", str(trace), "--trace-db", str(trace / TRACE_DB)]
    log_path = folder / "task_app.log"
    log = log_path.open("wb")
    process = subprocess.Popen(
        command,
        cwd=folder,
        env=env,
        stdin=subprocess.PIPE,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    assert process.stdin is not None
    process.stdin.write(b"n\n")  # "Enable tracing? [Y/n]" (asked only without --trace)
    process.stdin.close()
    server = TaskAppServer(process, f"http://{host}:{port}", log_path, command, log)
    try:
        wait_healthy(server)
    except BaseException:
        server.stop()
        raise
    return server


def wait_healthy(server: TaskAppServer, timeout_s: float = HEALTH_TIMEOUT_S) -> None:
    """Poll ``GET /health`` (with the API key) until it says healthy."""
    deadline = time.monotonic() + timeout_s
    request = urllib.request.Request(server.base_url + "/health", headers={"X-API-Key": API_KEY})
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"the task app exited with code {server.process.returncode}:\n{server.log_tail()}")
        try:
            with urllib.request.urlopen(request, timeout=5) as answer:
                if answer.status == 200 and b"healthy" in answer.read():
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
            pass
        time.sleep(0.5)
    raise RuntimeError(f"the task app was not healthy within {timeout_s:.0f} s:\n{server.log_tail()}")
