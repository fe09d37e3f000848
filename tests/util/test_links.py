"""The replay link's form: the keys, their order and the escaping, written out by hand."""

from urllib.parse import parse_qs

from workbench.util.links import replay_pairs, replay_query
from workbench.views.app.deep_link import DeepLink, parse_link


def test_replay_query_by_hand():
    assert replay_query("farmer-s2024-00000", 42) == "?view=replayer&episode=farmer-s2024-00000&decision=42"
    assert replay_query("x") == "?view=replayer&episode=x"  # no decision: the episode's start
    # a space is '+' and '&' is '%26' in a query (application/x-www-form-urlencoded)
    assert replay_query("a b&c", 0) == "?view=replayer&episode=a+b%26c&decision=0"
    assert replay_pairs("e", 3) == [("view", "replayer"), ("episode", "e"), ("decision", "3")]


def test_the_dashboard_reads_what_the_audit_writes():
    for episode, decision in [("a b&c", 7), ("ünïcode/ep?1=2", 1), ("plain", None)]:
        query = replay_query(episode, decision)[1:]
        assert parse_link(query) == DeepLink("replayer", episode, decision)
        assert parse_qs(query)["episode"] == [episode]


def test_the_query_is_urlencode_of_the_pairs():
    from urllib.parse import urlencode

    # replay_query writes the pairs out itself (an audit builds thousands of links): the same text
    for episode in ["plain", "a b&c=d", "x+y%z/é", "", "日本#?"]:
        for decision in [None, 0, 17]:
            assert replay_query(episode, decision) == "?" + urlencode(replay_pairs(episode, decision))
