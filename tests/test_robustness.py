"""No mail, however malformed, makes the worker fail: every one is answered with an
error or silently dropped by the loop rules, and the queue goes on."""

import string

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from conftest import Server
from pbmserv.store.models import Inbound

WORDS = ["signup", "change", "password", "address", "help", "list", "message", "broadcast", "superwari",
         "wari", "move", "show", "showas", "challenge", "resign", "games", "legal", "101", "102", "#1", "101#2",
         "alice", "bob", "alice-pw", "bob-pw", "-pits=5", "-stones=9", "-pits=", "a", "c", "H", "x@y", "@", "<>",
         "\u00e9t\u00e9", "'", '"', "9" * 30, ""]
ONE_LINE = "".join(c for c in string.printable if c not in "\r\n\x0b\x0c")
SERVERS: dict = {}  # one server per test function, shared by its examples (a live game to poke at)


def shared_server(name: str, tmp_path_factory) -> Server:
    """The server of test `name`, made for its first example."""
    if name not in SERVERS:
        SERVERS[name] = Server(tmp_path_factory.mktemp(name))
    return SERVERS[name]


line = st.lists(st.one_of(st.sampled_from(WORDS), st.text(ONE_LINE, max_size=12)), max_size=8).map(" ".join)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(subject=line, body=st.lists(line, max_size=6).map("\n".join), sender=st.sampled_from(
    ["alice@example.org", "stranger@example.net", "Bob <bob@example.org>", "odd\"name@example.org"]))
def test_random_commands_never_fail_the_worker(tmp_path_factory, subject, body, sender):
    server = shared_server("fuzz", tmp_path_factory)
    if not SERVERS.get("ready"):
        server.signup("alice", "bob")
        server.send("alice@example.org", "superwari challenge alice alice-pw bob")
        SERVERS["ready"] = True
    server.send(sender, subject, body)
    with server.sessions() as session:
        failed = session.scalars(select(Inbound).where(Inbound.status == "failed")).all()
        assert not failed, failed[0].error


@settings(max_examples=100, deadline=None)
@given(raw=st.binary(max_size=400))
def test_arbitrary_bytes_never_fail_the_worker(tmp_path_factory, raw):
    server = shared_server("bytes", tmp_path_factory)
    server.send_raw(raw)
    with server.sessions() as session:
        assert session.scalars(select(Inbound.status).where(Inbound.status == "failed")).all() == []
