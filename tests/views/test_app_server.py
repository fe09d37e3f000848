"""The app's safety rails without a browser: the token middleware (a real ASGI call chain), the
host check, the workspace's file names and no-overwrite rule, and ``workbench app``'s refusals."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

from workbench.core.config import RewardConfig
from workbench.errors import TargetExistsError
from workbench.views.app.server import COOKIE, HostError, TokenMiddleware, check_host, is_loopback, url
from workbench.views.app.workspace import Workspace, WorkspaceError, file_stem

TOKEN = "f" * 48


async def _page(scope, receive, send) -> None:
    if scope["type"] == "websocket":
        await send({"type": "websocket.accept"})
        return
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": b"the page"})


def _call(kind: str, query: str | bytes = "", cookie: str | bytes | None = None) -> list[dict]:
    sent: list[dict] = []
    as_bytes = lambda v: v if isinstance(v, bytes) else v.encode()  # noqa: E731
    headers = [(b"cookie", as_bytes(cookie))] if cookie is not None else []
    scope = {"type": kind, "path": "/", "query_string": as_bytes(query), "headers": headers}

    async def receive():
        return {"type": "http.request", "body": b""}

    async def send(message):
        sent.append(message)

    asyncio.run(TokenMiddleware(_page, TOKEN)(scope, receive, send))
    return sent


def test_the_token_lets_in_and_sets_a_cookie_the_rest_is_refused():
    first = _call("http", f"token={TOKEN}")
    assert first[0]["status"] == 200 and first[1]["body"] == b"the page"
    cookies = [v.decode() for k, v in first[0]["headers"] if k == b"set-cookie"]
    assert cookies and cookies[0].startswith(f"{COOKIE}={TOKEN};") and "HttpOnly" in cookies[0]
    assert _call("http", cookie=f"other=1; {COOKIE}={TOKEN}")[0]["status"] == 200
    for query, cookie in (("", None), ("token=wrong", None), ("", f"{COOKIE}=wrong"), ("", "garbage;;=")):
        refused = _call("http", query, cookie)
        assert refused[0]["status"] == 403 and b"token" in refused[1]["body"]
    assert _call("websocket")[0] == {"type": "websocket.close", "code": 4403}
    assert _call("websocket", cookie=f"{COOKIE}={TOKEN}")[0]["type"] == "websocket.accept"


@pytest.mark.parametrize(
    "query, cookie",
    [
        ("token=%C3%A9" + "f" * 46, None),  # a non-ASCII character, percent-encoded
        (b"token=\xe9\xff", None),  # raw bytes that are not UTF-8
        ("token=%ED%A0%80", None),  # an encoded lone surrogate
        ("", f"{COOKIE}=\u00e9t\u00e9".encode("latin-1")),
        ("", b"workbench-app-token=\xff\xfe"),
        ("token=" + "f" * 10_000, None),
        ("token", None),
        (b"\x00token=\x00", b"\x00"),
    ],
)
def test_an_odd_token_is_refused_never_an_error(query, cookie):
    for kind in ("http", "websocket"):
        sent = _call(kind, query, cookie)  # raises nothing: an ASGI traceback is a 500
        assert sent[0].get("status") == 403 or sent[0] == {"type": "websocket.close", "code": 4403}


def test_only_loopback_hosts_unless_asked():
    assert all(is_loopback(h) for h in ("127.0.0.1", "127.8.0.1", "::1", "localhost"))
    assert not any(is_loopback(h) for h in ("0.0.0.0", "192.168.1.4", "::", "example.org"))
    check_host("127.0.0.1", allow_remote=False)
    check_host("0.0.0.0", allow_remote=True)
    with pytest.raises(HostError, match="SSH tunnel"):
        check_host("0.0.0.0", allow_remote=False)
    assert url("127.0.0.1", 8765, "abc") == "http://127.0.0.1:8765/?token=abc"
    assert url("::1", 8765, None) == "http://[::1]:8765/"


def test_config_names_become_safe_file_names_inside_the_workspace(tmp_path):
    assert file_stem("../wood heavy") == "wood_heavy"
    assert file_stem("/etc/passwd") == "etc_passwd"
    assert file_stem(".hidden") == "hidden"
    assert file_stem("ok-name_1.2") == "ok-name_1.2"
    for bad in ("", "../..", "  /  "):
        with pytest.raises(WorkspaceError):
            file_stem(bad)
    space = Workspace(tmp_path / "ws")
    for name in ("../../escape", "a/b/c", "..\\x"):
        assert space.path_for(name).parent == space.folder


def test_the_workspace_keeps_configs_and_never_overwrites_unasked(tmp_path):
    space = Workspace(tmp_path / "ws")
    config = RewardConfig(strategy="per_achievement", weights={"collect_wood": 2.0})
    path = space.save("my config", config)
    assert path == tmp_path / "ws" / "my_config.yaml"
    with pytest.raises(TargetExistsError):
        space.save("my config", RewardConfig(strategy="consistent"))
    assert RewardConfig.from_file(path).weights["collect_wood"] == 2.0
    space.save("my config", RewardConfig(strategy="consistent"), overwrite=True)
    (tmp_path / "ws" / "broken.yaml").write_text("strategy: [unclosed")
    kept, problems = Workspace(tmp_path / "ws").configs()  # a restart
    assert list(kept) == ["my_config"] and kept["my_config"].strategy == "consistent"
    assert len(problems) == 1 and "broken.yaml" in problems[0]
    assert space.draft() is None
    space.save_draft(config)
    space.save_draft(RewardConfig(strategy="per_achievement", weights={"collect_wood": 3.0}))
    assert space.draft().weights["collect_wood"] == 3.0


@pytest.mark.parametrize(
    "planted",
    [
        "drafts",  # .workbench-app/drafts -> outside
        "drafts/tuner-draft-t1.yaml",  # the tab's draft file itself
        "drafts/tuner-draft.yaml",  # a draft from before drafts were per tab: never read through
        "my_config.yaml",  # a kept config's file
        "",  # the workspace folder itself (e.g. a corpus's .workbench-app -> outside)
    ],
)
def test_a_symlink_below_the_workspace_is_refused_and_nothing_is_written_outside(tmp_path, planted):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "tuner-draft.yaml").write_text("keep: me\n")
    folder = tmp_path / "corpus" / ".workbench-app"
    link = folder / planted if planted else folder
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(outside / "tuner-draft.yaml" if planted.endswith(".yaml") else outside)
    space = Workspace(folder, tab="t1")
    config = RewardConfig(strategy="per_achievement", weights={"collect_wood": 2.0})
    crossing = {
        "drafts": ["draft"],
        "drafts/tuner-draft-t1.yaml": ["draft"],
        "drafts/tuner-draft.yaml": [],
        "my_config.yaml": ["save"],
    }
    for write, action in (
        ("draft", lambda: space.save_draft(config)),
        ("save", lambda: space.save("my config", config)),
    ):
        if write in crossing.get(planted, ["draft", "save"]):
            with pytest.raises(WorkspaceError, match="is a symlink"):
                action()
        else:
            assert outside not in action().parents
    if planted.startswith("drafts") or not planted:
        assert space.draft() in (None, config)  # never read through it either (only this tab's own draft)
    assert [p.name for p in outside.iterdir()] == ["tuner-draft.yaml"]
    assert (outside / "tuner-draft.yaml").read_text() == "keep: me\n"


def test_the_session_keeps_its_draft_through_the_checked_path(tmp_path):
    folder = tmp_path / "ws"
    space = Workspace(folder, tab="t1")
    path = space.save_draft(RewardConfig(strategy="consistent"))
    assert path == space.inside("drafts", "tuner-draft-t1.yaml") == folder / "drafts" / "tuner-draft-t1.yaml"
    with pytest.raises(WorkspaceError, match="leave the workspace"):
        space.inside("..", "x.yaml")
    (folder / "sub").symlink_to(tmp_path)
    with pytest.raises(WorkspaceError, match="is a symlink"):  # what the Tuner's save box checks
        space.checked(folder / "sub" / "my_reward.yaml")
    assert space.checked(folder / "new" / "my_reward.yaml") == folder / "new" / "my_reward.yaml"
    assert space.checked(tmp_path / "elsewhere.yaml") == tmp_path / "elsewhere.yaml"


@pytest.mark.parametrize(
    "arguments,message",
    [
        (["--host", "0.0.0.0"], "not a loopback address"),
        (["/no/such/corpus"], "no such corpus folder"),
        (["sample", "--config", "/no/such.yaml"], "no/such.yaml"),
        (["--port", "0"], "--port 0"),
    ],
)
def test_workbench_app_refuses_with_one_line_and_exit_2(arguments, message):
    done = subprocess.run(
        [sys.executable, "-m", "workbench", "app", *arguments], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2, done.stderr
    assert message in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
