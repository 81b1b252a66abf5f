"""`pbmserv serve --role`: the roles of a server split between processes on one
database (here two servers in one process, on one SQLite file)."""

from __future__ import annotations

import pytest

from mailgen import game_mails
from pbmserv.cli import main
from test_smtp import RunningServer, read_maildir


def test_a_listener_and_a_worker_apart_play_a_game(tmp_path, serve_url):
    listener = RunningServer(tmp_path, url=serve_url, roles=("smtp",))
    try:
        for message in game_mails("wari", seed=7)[:3]:  # two sign-ups and a challenge
            listener.send(message)
        assert read_maildir(listener.maildir) == []  # stored, but nobody plays it here
        rest = RunningServer(tmp_path, url=serve_url, roles=("worker", "sender", "scheduler"))
        try:
            replies = rest.replies(4)
            assert rest.server.port is None  # it does not listen
        finally:
            rest.stop()
        assert [r["Subject"] for r in replies] == ["pbmserv signup", "pbmserv signup", "New Wari Board 101 alice **",
                                                   "New Wari Board 101 alice **"]
    finally:
        listener.stop()


def test_an_unknown_role_is_refused(capsys):
    assert main(["serve", "--role", "smtp,juggler"]) == 2
    assert capsys.readouterr().err == ("pbmserv serve: no role juggler; choose from smtp, worker, sender, scheduler, "
                                       "robots, all\n")


class Started(Exception):
    """Raised by a stand-in `serve` with the roles it was given."""


def stand_in(config, sessions, roles):
    raise Started(roles)


@pytest.mark.parametrize("argument", ["", "--role=all", "--role=worker,smtp --role sender --role scheduler --role robots"])
def test_all_roles_by_name_are_the_default(argument, monkeypatch):
    from pbmserv import cli
    monkeypatch.setattr(cli, "serve", stand_in)
    monkeypatch.setattr(cli, "open_database", lambda *args: None)
    with pytest.raises(Started) as started:
        main(["serve", *argument.split()])
    assert started.value.args[0] == ("smtp", "worker", "sender", "scheduler", "robots")


@pytest.mark.parametrize("roles, woken", [
    (("worker", "scheduler", "robots"), {"sqlite": "spooled", "postgresql": "work"}),
    (("sender",), {"sqlite": "send", "postgresql": "send"}),
])
def test_a_byte_from_the_process_before_wakes_what_this_one_does(tmp_path, serve_url, backend, roles, woken):
    """`serve`'s processes wake each other through pipes (`Server.woken`). The players'
    process, woken by the listener, has the spool's mover take the mail on SQLite, and
    reads the queue itself on PostgreSQL, where the listener stores into it directly
    (woken only by its poll, a move waited up to a second there); the sender's
    process, woken by the players, delivers."""
    from pbmserv.config import load_config
    from pbmserv.server import Server
    from pbmserv.store.db import open_database

    config = load_config(None, environ={"PBMSERV_DATABASE_URL": serve_url})
    server = Server(config, open_database(serve_url), roles=roles)
    events = {name: getattr(server, name) for name in ("spooled", "work", "send")}
    server.woken()
    assert {name for name, event in events.items() if event.is_set()} == {woken[backend]}
