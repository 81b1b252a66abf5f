"""The worker against mail from the open internet: a mail that kills its worker is set
aside, auto-responders and forged delivery reports get nothing, error replies are
capped for every address, secrets come from a random key, and a tagged address of the
server is only ever what its tag says."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import select

from conftest import Died, Server, body_of, die_on
from pbmserv.keys import derive, install_replay_key, server_key
from pbmserv.store.db import open_database
from pbmserv.store.models import Address, Inbound
from pbmserv.store.queue import enqueue
from pbmserv.worker import SET_ASIDE, Handler, Worker

ALICE, BOB = "alice@example.org", "bob@example.org"


# --- a mail that kills its worker ----------------------------------------------------------

def test_a_mail_that_kills_the_worker_three_times_is_set_aside_and_the_next_one_is_answered(server, monkeypatch):
    server.signup("alice")
    poison = server.count + 1
    die_on(monkeypatch, b"poison")
    with pytest.raises(Died):
        server.send(ALICE, "help", "poison")
    for _restart in range(2):  # each restart of the server begins on it again, and dies
        with pytest.raises(Died):
            server.worker.run_pending()
    replies = server.send(BOB, "help")  # the fourth start sets it aside, then goes on
    assert [r.subject for r in replies] == ["pbmserv help"]
    with server.sessions() as session:
        row = session.scalar(select(Inbound).where(Inbound.message_id.contains(f"test{poison}@")))
        assert (row.status, row.error, row.attempts) == ("failed", SET_ASIDE, 3)
    assert server.worker.run_pending() == 0  # and no restart loops on it


def test_a_mail_that_fails_once_is_not_set_aside_when_it_then_succeeds(server, monkeypatch):
    handle, died = Handler.handle, []

    def dying_once(self):
        if not died:
            died.append(1)
            raise Died
        return handle(self)

    monkeypatch.setattr(Handler, "handle", dying_once)
    with pytest.raises(Died):
        server.send(ALICE, "help")
    assert [r.subject for r in server.collect(server.worker.run_pending)] == ["pbmserv help"]


# --- auto-responders -----------------------------------------------------------------------

@pytest.mark.parametrize("subject, headers", [
    ("Automatic reply: pbmserv error", {}),
    ("Out of Office: superwari move 101 alice alice-pw c", {}),
    ("Re: pbmserv error", {"X-Auto-Response-Suppress": "All"}),
    ("Abwesenheitsnotiz: pbmserv error", {}),
    ("Auto: pbmserv error", {}),
])
def test_outlook_and_other_auto_replies_are_never_answered(server, subject, headers):
    server.signup("alice")
    assert server.send(ALICE, subject, "I am away until Monday.", headers=headers) == []
    with server.sessions() as session:
        assert session.scalar(select(Inbound.status).order_by(Inbound.id.desc()).limit(1)) == "ignored"


def test_error_replies_to_a_registered_address_stop_after_the_days_limit(make_server):
    """An auto-responder that marks nothing answers every error with a mail that is one:
    the loop ends after the day's limit, and starts again the next day."""
    server = make_server(limits={"errors_per_day": 3})
    server.signup("alice")
    answered = [len(server.send(ALICE, "Re: pbmserv error", "I am away.")) for _ in range(5)]
    assert answered == [1, 1, 1, 0, 0]
    assert server.one(ALICE, "help").subject == "pbmserv help"  # commands still work
    server.clock += timedelta(days=1)
    assert len(server.send(ALICE, "Re: pbmserv error", "I am away.")) == 1


# --- delivery reports ----------------------------------------------------------------------

def report(server: Server, failed: str, to: str = "pbmserv@localhost") -> bytes:
    server.count += 1
    return (f"From: MAILER-DAEMON@mx.example\r\nTo: {to}\r\nSubject: Undelivered Mail\r\n"
            f"Message-ID: <dsn{server.count}@mx.example>\r\n"
            "Content-Type: multipart/report; report-type=delivery-status; boundary=b\r\n\r\n"
            "--b\r\nContent-Type: text/plain\r\n\r\nfailed\r\n"
            "--b\r\nContent-Type: message/delivery-status\r\n\r\nReporting-MTA: dns; mx.example\r\n\r\n"
            f"Final-Recipient: rfc822; {failed}\r\nAction: failed\r\nStatus: 5.1.1\r\n\r\n--b--\r\n").encode()


def failures(server: Server, address: str) -> int:
    with server.sessions() as session:
        return session.scalar(select(Address.failures).where(Address.address_key == address))


def test_forged_delivery_reports_silence_nobody(server):
    server.signup("alice", "bob")
    for _ in range(5):
        assert server.send_raw(report(server, ALICE), envelope_from="") == []
    assert failures(server, ALICE) == 0
    assert [r.to for r in server.send(BOB, "superwari challenge bob bob-pw alice")] == [[BOB], [ALICE]]


def test_a_report_to_a_replys_bounce_address_counts_only_for_that_replys_recipients(server):
    server.signup("alice", "bob")
    server.send(BOB, "superwari challenge bob bob-pw alice")
    to_bob, to_alice = server.transport.senders[-2:]
    assert to_alice.startswith("pbmserv+b-") and to_alice != to_bob
    server.send_raw(report(server, BOB, to=to_alice), envelope_from="")  # bob was not sent that one
    assert (failures(server, ALICE), failures(server, BOB)) == (0, 0)
    for _ in range(3):
        server.send_raw(report(server, ALICE, to=to_alice), envelope_from="")
    assert failures(server, ALICE) == 3
    replies = server.send(BOB, "superwari move 101 bob bob-pw a")
    assert [r.to for r in replies] == [[BOB]]  # alice's address bounces: no more mail to it


# --- secrets -------------------------------------------------------------------------------

def test_every_server_makes_its_own_key_whatever_seed_is_configured(tmp_path):
    """What an attacker could compute from `[server] seed` (and the inbound ids seen in
    Message-IDs) is nothing: serve's key is random; only replay derives one."""
    keys, tokens = [], []
    for name in ("one", "two"):
        sessions = open_database(f"sqlite:///{tmp_path / name}.db")
        with sessions.begin() as session:
            keys.append(server_key(session))
            tokens.append(derive(session, "token", 1, "reset", "alice"))
    assert keys[0] != keys[1] and tokens[0] != tokens[1] and len(keys[0]) == 32
    replayed = []
    for name in ("three", "four"):
        sessions = open_database(f"sqlite:///{tmp_path / name}.db")
        with sessions.begin() as session:
            install_replay_key(session, "replay")
            replayed.append(derive(session, "token", 1, "reset", "alice"))
    assert replayed[0] == replayed[1] != tokens[0]


def test_a_servers_key_is_kept_across_restarts(tmp_path):
    url = f"sqlite:///{tmp_path / 'kept.db'}"
    with open_database(url).begin() as session:
        first = server_key(session)
    with open_database(url).begin() as session:
        assert server_key(session) == first


# --- tagged addresses ----------------------------------------------------------------------

@pytest.mark.parametrize("tag", ["b-1-aaaaaaaaaaaaaaaaaaaa", "x-1-aaaaaaaaaaaaaaaaaaaa", "c-1-short", "nonsense"])
def test_a_mail_to_a_tagged_address_that_is_no_reply_address_gets_an_error_and_changes_nothing(server, tag):
    server.signup("alice")
    reply = server.one(ALICE, "hello", "just saying", headers={"To": f"pbmserv+{tag}@localhost"})
    assert reply.subject == "pbmserv error"
    assert body_of(reply).split("\n")[0] in ("This address of the server takes no mail from players.",
                                             "That confirmation address confirms nothing.")


# --- relayed text --------------------------------------------------------------------------

def test_relayed_text_carries_no_control_characters_no_password_and_no_line_over_78(server):
    server.signup("alice", "bob")
    hostile = ("\x1b[2J\x1b]0;owned\x07 hello\x00 \u202eevil\u202c\n"
               "my password is alice-pw, (alice-pw) and alice-pw.\n" + "word " * 1000 + "\n" + "x" * 5000)
    replies = server.send(ALICE, "message alice alice-pw bob", hostile)
    relayed = next(r for r in replies if r.to == [BOB])
    text = body_of(relayed)
    assert not any(ch in text for ch in "\x1b\x00\x07\u202e\u202c")
    assert "alice-pw" not in text and text.count("********") == 3
    assert "\ufffd[2J" in text and "hello" in text
    assert max(len(line) for line in text.split("\n")) <= 78
    assert text.count("x" * 78) == 5000 // 78  # a word longer than a line is cut, not lost


def test_answers_to_an_address_no_account_confirmed_are_capped_a_day(make_server):
    """`help` with a forged From (or Reply-To) 10,000 times mails the victim a few times."""
    server = make_server(limits={"unconfirmed_replies_per_day": 4})
    answered = [len(server.send("stranger@example.net", "help")) for _ in range(6)]
    assert answered == [1, 1, 1, 1, 0, 0]
    server.signup("alice")  # a confirmed address is not capped
    assert [len(server.send(ALICE, "help")) for _ in range(6)] == [1] * 6
    forged = [len(server.send(ALICE, "help", headers={"Reply-To": "victim@example.net"})) for _ in range(6)]
    assert forged == [1, 1, 1, 1, 0, 0]
    server.clock += timedelta(days=1)
    assert len(server.send("stranger@example.net", "help")) == 1
