"""Security of accounts: wrong passwords are limited per address and per user without
letting a stranger lock a player out; no password ever appears in a reply."""

from datetime import timedelta

import pytest

ALICE = "alice@example.org"


@pytest.fixture
def server(make_server):
    """Errors to unregistered addresses are not throttled here, so every refusal is seen."""
    return make_server(limits={"unregistered_errors_per_day": 100})


def first_line(reply) -> str:
    return reply.text.split("\n")[0]


def heads(replies) -> list[tuple[list[str], str]]:
    return [(r.to, r.subject) for r in replies]


def test_wrong_passwords_are_limited_per_sending_address(server):
    server.signup("alice")
    for number in range(5):
        replies = server.send("mallory@example.net", "change password alice guess1 new-pw")
        assert first_line(replies[-1]) == "Wrong password for alice."
        # the fifth starts a lock: alice is told
        assert heads(replies[:-1]) == ([([ALICE], "pbmserv lock")] if number == 4 else [])
    refused = server.one("mallory@example.net", "change password alice alice-pw new-pw")
    assert refused.text.split("\n")[:2] == [
        "Too many wrong passwords were sent from mallory@example.net in the last hour.",
        "Wait an hour, then send the command again with the right password."]
    # the player is not locked out of their own account
    assert server.one(ALICE, "change password alice alice-pw second-pw").subject == "pbmserv change password"
    server.clock += timedelta(minutes=61)
    assert server.one("mallory@example.net", "change password alice second-pw third-pw").subject == \
        "pbmserv change password"


def test_wrong_passwords_for_one_user_from_many_addresses(server):
    server.signup("alice")
    for number in range(5):
        replies = server.send(f"bot{number}@example.net", "superwari challenge alice guess alice")
        assert heads(replies) == ([([ALICE], "pbmserv lock")] if number == 4 else []) + \
            [([f"bot{number}@example.net"], "Super-Wari error")]
    refused = server.one("bot9@example.net", "change password alice alice-pw new-pw")
    assert refused.text.split("\n")[:2] == [
        "Too many wrong passwords for alice came from other addresses in the last hour.",
        "Send the command from an address registered to alice, or wait an hour."]
    assert server.one(ALICE, "change password alice alice-pw new-pw").subject == "pbmserv change password"


def test_wrong_passwords_from_a_registered_address_count_only_for_that_address(server):
    server.signup("alice", "bob")
    for _ in range(4):
        server.one(ALICE, "change password alice typo new-pw")
    assert heads(server.send(ALICE, "change password alice typo new-pw")) == [
        ([ALICE], "pbmserv lock"), ([ALICE], "pbmserv error")]
    assert first_line(server.one(ALICE, "change password alice alice-pw new-pw")) == \
        "Too many wrong passwords were sent from alice@example.org in the last hour."
    # bob, writing from his own address, is not affected
    assert server.one("bob@example.org", "change password bob bob-pw new-pw").subject == "pbmserv change password"


def test_no_password_in_any_mail_or_log_line_after_whole_games(tmp_path, caplog, serve_url):
    """Whole games over SMTP, with errors on the way (each quoting the mail that caused
    it): no outbound mail and no log line at the server's level carries a password."""
    import logging

    from mailgen import game_mails
    from test_smtp import RunningServer

    caplog.set_level(logging.INFO)
    running = RunningServer(tmp_path, url=serve_url)
    try:
        mails = game_mails("superwari", seed=4, params="-pits=4 -stones=2")
        for message in mails:
            running.send(message)
        wrong = mails[-2]
        del wrong["Message-ID"]
        wrong["Message-ID"] = "<resent@example.org>"
        running.send(wrong)  # a stale move: an error quoting it
        for subject in ("change password alice alice-secret", "superwari move 101 bob bob-secret zz"):
            message = game_mails()[0]
            message.replace_header("Subject", subject)
            message.replace_header("Message-ID", f"<{len(subject)}@example.org>")
            running.send(message)
        expected = sum(1 if m["Subject"].startswith(("signup", "superwari show")) else 2 for m in mails) + 3
        replies = running.replies(expected)
    finally:
        running.stop()
    assert [r["Subject"] for r in replies[-3:]] == ["Super-Wari Board 101 Error", "pbmserv error",
                                                     "Super-Wari Board 101 Error"]
    texts = [r.as_bytes() for r in replies] + [record.getMessage().encode() for record in caplog.records]
    assert len(caplog.records) > 0
    for secret in (b"alice-secret", b"bob-secret"):
        assert not [text for text in texts if secret in text]


def delivery_report(number: int, recipient: str, to: str = "pbmserv@localhost") -> bytes:
    return (f"From: MAILER-DAEMON@mx.example\r\nTo: {to}\r\nSubject: Undelivered Mail\r\n"
            f"Message-ID: <bounce{number}@mx.example>\r\n"
            "Content-Type: multipart/report; report-type=delivery-status; boundary=b\r\n\r\n"
            "--b\r\nContent-Type: text/plain\r\n\r\nYour mail could not be delivered.\r\n"
            "--b\r\nContent-Type: message/delivery-status\r\n\r\nReporting-MTA: dns; mx.example\r\n\r\n"
            f"Final-Recipient: rfc822; {recipient}\r\nAction: failed\r\nStatus: 5.1.1\r\n\r\n--b--\r\n").encode()


def test_bounces_stop_mail_to_an_address_until_it_writes_again(server):
    from pbmserv.store.models import Inbound
    from sqlalchemy import select

    server.signup("alice", "bob")
    bounce_address = server.transport.senders[0]  # alice's signup reply left with its own
    for number in range(3):
        assert server.send_raw(delivery_report(number, "Alice@Example.org", to=bounce_address)) == []
    with server.sessions() as session:
        assert session.scalars(select(Inbound.error).order_by(Inbound.id.desc())).first() == (
            "sent by mailer-daemon; delivery failed for alice@example.org")
    # alice's address has bounced three times: nothing more is sent to it
    replies = server.send("bob@example.org", "message bob bob-pw alice", "still there?")
    assert [(r.subject, r.to) for r in replies] == [("pbmserv message", ["bob@example.org"])]
    # alice writes again: her address works, and mail to it resumes
    server.one(ALICE, "list")
    replies = server.send("bob@example.org", "message bob bob-pw alice", "welcome back")
    assert [r.to for r in replies] == [["bob@example.org"], [ALICE]]
