"""The worker never loses a mail, and a game change goes out with its replies or not at all."""

from sqlalchemy import select

from pbmserv.mail.outbound import MaildirTransport, MemoryTransport
from pbmserv.store.models import GameRecord, Inbound, Outbound


def test_an_unexpected_failure_keeps_the_mail_marked_failed_and_the_worker_goes_on(server, monkeypatch):
    server.signup("alice", "bob")
    server.send("alice@example.org", "superwari challenge alice alice-pw bob")

    def broken(*args, **kwargs):
        raise RuntimeError("renderer exploded")

    monkeypatch.setattr("pbmserv.mail.outbound.render", broken)  # the worker frames every reply
    assert server.send("alice@example.org", "superwari move 101 alice alice-pw c") == []
    monkeypatch.undo()
    with server.sessions() as session:
        failed = session.scalars(select(Inbound).where(Inbound.status == "failed")).one()
        assert b"superwari move 101 alice alice-pw c" in failed.raw
        assert failed.error.rstrip().endswith("RuntimeError: renderer exploded")
        # all-or-nothing: the move that could not be answered was not played either
        record = session.scalar(select(GameRecord))
        assert record.moves == [] and record.version == 1
    replies = server.send("alice@example.org", "superwari move 101 alice alice-pw c")
    assert [r.subject for r in replies] == ["Super-Wari Board 101 bob"] * 2


def test_replies_are_delivered_once_even_if_asked_twice(tmp_path, server):
    server.signup("alice")
    with server.sessions() as session:
        row = session.scalars(select(Outbound)).one()
        assert row.status == "sent" and row.attempts == 1
    maildir = MaildirTransport(tmp_path / "box")
    memory = MemoryTransport()
    for _ in range(2):
        maildir.deliver(row.recipients, row.raw, row.message_id, "pbmserv@localhost")
        memory.deliver(row.recipients, row.raw, row.message_id, "pbmserv@localhost")
    assert len(list((tmp_path / "box" / "new").iterdir())) == 1
    assert len(memory.delivered) == 1


def test_mail_is_taken_in_arrival_order(server):
    from conftest import make_mail
    from pbmserv.store.queue import enqueue

    # stored first, dated later: arrival order wins (the clock is per mail)
    enqueue(server.sessions, make_mail("a@example.org", "signup alice alice-pw", date=server.clock,
                                       message_id="<1@x>"), server.clock)
    enqueue(server.sessions, make_mail("b@example.org", "signup Alice other-pw", date=server.clock,
                                       message_id="<2@x>"), server.clock)
    server.worker.run_pending()
    server.send("c@example.org", "help")
    subjects = [raw.split(b"Subject: ")[1].split(b"\n")[0] for _to, raw in server.transport.delivered]
    assert subjects[:2] == [b"pbmserv signup", b"pbmserv error"]


def test_failed_mail_is_listed_retried_and_dropped_by_the_admin(server, monkeypatch, capsys):
    from pbmserv.cli import main

    server.signup("alice", "bob")

    def broken(*args, **kwargs):
        raise RuntimeError("renderer exploded")

    monkeypatch.setattr("pbmserv.mail.outbound.render", broken)  # the worker frames every reply
    server.send("alice@example.org", "list")
    server.send("bob@example.org", "help")
    monkeypatch.undo()
    monkeypatch.setenv("PBMSERV_DATABASE_URL", server.config.database.url)
    assert main(["queue", "list"]) == 0
    assert capsys.readouterr().out == (
        "in:3  from ?  <test3@example.org>\n"
        "  RuntimeError: renderer exploded\n"
        "in:4  from ?  <test4@example.org>\n"
        "  RuntimeError: renderer exploded\n"
        "2 failed mails.\n")
    assert main(["queue", "retry", "in:3"]) == 0
    assert main(["queue", "drop", "in:4"]) == 0
    assert capsys.readouterr().out == "in:3 queued again\nin:4 dropped\n"
    assert main(["queue", "retry", "in:4"]) == 1
    assert capsys.readouterr().err == "pbmserv: in:4 is not a failed mail\n"
    assert main(["queue", "drop", "box:1"]) == 1
    assert "names no mail" in capsys.readouterr().err
    assert main(["queue", "retry"]) == 2
    server.worker.run_pending()
    with server.sessions() as session:
        assert [row.status for row in session.scalars(select(Inbound).order_by(Inbound.id))] == [
            "done", "done", "done", "dropped"]
    assert main(["queue", "list"]) == 0 and capsys.readouterr().out == "0 failed mails.\n"
