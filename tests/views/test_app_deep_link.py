"""The dashboard's deep links (``?view=replayer&episode=ID&decision=N``): read, made, and followed by a session."""

from __future__ import annotations

import pytest
from helpers.polling import until

from workbench.data.sample import sample_corpus
from workbench.errors import WorkbenchError
from workbench.views.app.common import CORPUS, REPLAY
from workbench.views.app.deep_link import DeepLink, parse_link, replayer_link
from workbench.views.app.options import AppOptions
from workbench.views.app.session import AppSession

TOKEN = "ab" * 24


def test_a_link_is_read_whatever_else_the_query_holds():
    assert parse_link(None) == DeepLink() == parse_link("") == parse_link(f"token={TOKEN}")
    assert parse_link(f"token={TOKEN}&view=replayer&episode=farmer-s2024-00000&decision=42") == DeepLink(
        "replayer", "farmer-s2024-00000", 42
    )
    assert parse_link("view=replayer&episode=a%20b%26c") == DeepLink("replayer", "a b&c", None)  # escaped id
    assert parse_link("view=replayer&episode=x&decision=0") == DeepLink("replayer", "x", 0)  # the reset frame


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("view=tuner", "view='tuner' is not one the dashboard opens"),
        ("view=replayer", "needs episode=<episode id>"),
        ("view=replayer&episode=x&decision=-3", "decision='-3' is not a decision number"),
        ("view=replayer&episode=x&decision=2.5", "decision='2.5' is not a decision number"),
        # a superscript two: ``isdigit`` accepts it, ``int`` refuses it (ValueError on first render)
        ("view=replayer&episode=x&decision=%C2%B2", "decision='\u00b2' is not a decision number"),
        # an Arabic-Indic three: ``int`` would read it as 3, a number the link does not spell
        ("view=replayer&episode=x&decision=%D9%A3", "decision='\u0663' is not a decision number"),
    ],
)
def test_a_link_the_dashboard_cannot_follow_says_why(query, message):
    with pytest.raises(WorkbenchError, match=message):
        parse_link(query)


def test_replayer_link_keeps_the_token_and_escapes_the_episode():
    url = f"http://127.0.0.1:8765/?token={TOKEN}"
    assert replayer_link(url, "farmer-s2024-00000", 42) == (
        f"http://127.0.0.1:8765/?token={TOKEN}&view=replayer&episode=farmer-s2024-00000&decision=42"
    )
    # no path: "/" is added; an id with a space and "&" is escaped; a link made twice is one link
    again = replayer_link(replayer_link("http://127.0.0.1:9/", "a b&c", 1), "a b&c")
    assert again == "http://127.0.0.1:9/?view=replayer&episode=a+b%26c"
    assert parse_link(again.split("?", 1)[1]) == DeepLink("replayer", "a b&c", None)


def test_a_session_follows_a_link_to_the_replayer(tmp_path):
    corpus = sample_corpus()
    episode = corpus.ids[4]
    session = AppSession(AppOptions(corpus=corpus, workspace=tmp_path / "ws"))
    session.open_link(f"token={TOKEN}&view=replayer&episode={episode}&decision=17")
    assert session.page.value == REPLAY
    until(lambda: session.replayer is not None and session.replayer.episode == episode, "the Replayer on the episode")
    replayer = session.replayer
    until(lambda: replayer.decision == 17, "decision 17 shown")
    assert replayer.decision_at(replayer.step) == 17 and session.replayer_view.shown.value is replayer


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("view=replayer&episode=missing", "link: no episode 'missing' in"),
        ("view=replayer&episode=farmer-s2024-00000&decision=100000", "has decisions 1 to"),
        ("view=compare", "is not one the dashboard opens"),
        ("view=replayer&episode=farmer-s2024-00000&decision=%C2%B2", "is not a decision number"),
    ],
)
def test_a_session_says_why_it_cannot_follow_a_link(tmp_path, query, message):
    session = AppSession(AppOptions(corpus=sample_corpus(), workspace=tmp_path / "ws"))
    session.open_link(query)
    assert message in session.status.text and session.status.level == "error"
    assert session.page.value == CORPUS and session.replayer is None
