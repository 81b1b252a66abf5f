"""Mail preferences (`set`, pbmserv/commands/settings.py) and the daily digest
(pbmserv/digest.py): `html off` drops the HTML part, `mail turn` keeps only the mails
where the player must act and the game's end, `mail digest` one mail a day fired by
the scheduler; the answer to one's own command, deadlines, reminders and forfeits come
always. Bad input is answered with what to send instead and changes nothing."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import select

from conftest import body_of
from pbmserv.store.models import User

ALICE, BOB, CAROL = "alice@example.org", "bob@example.org", "carol@example.org"
LISTING = ("The mail preferences of alice:\n"
           "  html {html:<7} {html_text}\n"
           "  mail {mail:<7} {mail_text}\n"
           "  digest 07:00 the time of the digest (UTC), for 'mail digest'\n"
           "  listed off   'players' does not list you\n\n"
           "To change one, send: set alice PASSWORD NAME VALUE\n"
           "For example: set alice PASSWORD mail turn\n")


def listing(html: str = "on", mail: str = "every") -> str:
    return LISTING.format(html=html, mail=mail, html_text={"on": "board mails draw the board in HTML too",
                                                          "off": "board mails are plain text only"}[html],
                          mail_text={"every": "a mail for every action on your boards",
                                     "turn": "only the mails where you must act, and the game's end",
                                     "digest": "one digest a day at 07:00 UTC with the boards where you must\n"
                                               "act"}[mail])


def kinds(replies) -> list[tuple[list[str], str]]:
    return [(r.to, r.message.get_content_type()) for r in replies]


def preferences(server, userid: str) -> tuple:
    with server.sessions() as session:
        user = session.scalar(select(User).where(User.userid_key == userid))
        return user.html, user.mail, user.digest_at, user.listed, user.digest_due


@pytest.fixture
def game(server):
    server.signup("alice", "bob", "carol")
    server.send(ALICE, "superwari challenge alice alice-pw bob")
    return server


def test_set_alone_shows_the_preferences_and_each_change_says_what_changed(game):
    assert body_of(game.one(ALICE, "set alice alice-pw")) == listing()
    reply = game.one(ALICE, "set alice alice-pw HTML Off")
    assert (reply.subject, body_of(reply)) == ("pbmserv preferences", "html is off now.\n\n" + listing(html="off"))
    assert body_of(game.one(ALICE, "set alice alice-pw mail turn")) == "mail is turn now.\n\n" + listing("off", "turn")
    assert preferences(game, "alice")[:4] == (False, "turn", "07:00", False)


@pytest.mark.parametrize("words, problem, instead", [
    ("colour blue", "There is no preference 'colour': the preferences are html, mail, digest and\nlisted.",
     "Send: set alice PASSWORD NAME VALUE, e.g. set alice PASSWORD mail turn;\n"
     "'set alice PASSWORD' alone shows them."),
    ("mail weekly", "'weekly' is not a value of mail.", "Send: set alice PASSWORD mail every|turn|digest"),
    ("html", "'set alice PASSWORD html' needs a value.", "Send: set alice PASSWORD html on|off"),
    ("digest 25:00", "'25:00' is not a time of day.",
     "Send the time in hours and minutes, UTC: set alice PASSWORD digest 07:00"),
    ("listed <script>", "'<script>' is not a value of listed.", "Send: set alice PASSWORD listed on|off"),
])
def test_a_bad_preference_is_refused_and_changes_nothing(game, words, problem, instead):
    before = preferences(game, "alice")
    reply = game.one(ALICE, f"set alice alice-pw {words}")
    assert body_of(reply).startswith(f"{problem}\n{instead}\n\nYour message:\n")
    assert "alice-pw" not in reply.body
    assert preferences(game, "alice") == before


def test_a_wrong_password_changes_no_preference(game):
    before = preferences(game, "alice")
    reply = game.one(ALICE, "set alice wrong html off")
    assert "wrong" not in body_of(reply).split("Your message:")[0] and "password" in body_of(reply).lower()
    assert preferences(game, "alice") == before


def test_html_off_sends_text_only_to_that_player(game):
    game.one(BOB, "set bob bob-pw html off")
    replies = game.send(ALICE, "superwari move 101 alice alice-pw c")
    assert sorted(kinds(replies)) == [([ALICE], "multipart/alternative"), ([BOB], "text/plain")]
    game.one(BOB, "set bob bob-pw html on")
    assert {kind for _to, kind in kinds(game.send(BOB, "superwari move 101 bob bob-pw c"))} == {
        "multipart/alternative"}


def test_mail_turn_gets_only_the_mails_where_the_player_must_act_and_the_end(game):
    game.one(BOB, "set bob bob-pw mail turn")
    game.one(CAROL, "superwari subscribe 101 carol carol-pw")
    game.one(CAROL, "set carol carol-pw mail turn")
    # alice moves: now bob must act, so bob gets it; carol watches and never must act
    assert sorted(r.to for r in game.send(ALICE, "superwari move 101 alice alice-pw c")) == [[ALICE], [BOB]]
    # bob's own move is answered, though he need not act after it
    assert sorted(r.to for r in game.send(BOB, "superwari move 101 bob bob-pw c")) == [[ALICE], [BOB]]
    # the game's end reaches everyone who chose turn
    assert sorted(r.to for r in game.send(ALICE, "superwari resign 101 alice alice-pw")) == [[ALICE], [BOB], [CAROL]]


def test_digest_holds_board_mails_back_and_sends_one_mail_a_day(game):
    game.one(BOB, "set bob bob-pw mail digest")
    assert preferences(game, "bob")[4] == (game.clock.replace(hour=7, minute=0) + timedelta(days=1))
    assert [r.to for r in game.send(ALICE, "superwari move 101 alice alice-pw c", "Your go.")] == [[ALICE]]
    digest = game.wait(timedelta(days=1))
    assert [(r.to, r.subject) for r in digest] == [([BOB], "pbmserv digest: your move on 1 board")]
    text = body_of(digest[0])
    assert text.startswith("Your daily digest, bob: your move on Super-Wari 101.\n"
                           "To get a mail for every action again, send: set bob PASSWORD mail every\n\n"
                           "Summary of Super-Wari Board 101\n\nIt is bob's turn.\n"
                           "Since 2026-11-01 12:05 UTC: move #1.\n")
    assert "\nalice writes:\nYour go.\n" in text
    assert digest[0].message.get_content_type() == "multipart/alternative"
    # the next day nothing happened, but bob still must act: reminded in the digest
    again = game.wait(timedelta(days=1))
    assert "Nothing new since 2026-11-02 07:00 UTC." in body_of(again[0])
    # back to every: no more digests
    game.one(BOB, "set bob bob-pw mail every")
    assert preferences(game, "bob")[4] is None
    assert game.wait(timedelta(days=2)) == []


def test_a_digest_with_nothing_to_tell_is_not_sent(game):
    game.one(CAROL, "set carol carol-pw mail digest")
    assert game.wait(timedelta(days=3)) == []
    assert preferences(game, "carol")[4] > game.clock


def test_the_digest_time_can_be_set(game):
    game.one(BOB, "set bob bob-pw mail digest")
    reply = game.one(BOB, "set bob bob-pw digest 18:30")
    assert body_of(reply).startswith("Your digest comes at 18:30 UTC from now on.\n")
    assert preferences(game, "bob")[4] == game.clock.replace(hour=18, minute=30)


def test_deadlines_reach_a_digest_player_at_once(server):
    server.signup("alice", "bob")
    server.send(ALICE, "superwari challenge alice alice-pw bob -nagtime=1d -forfeittime=3d")
    server.one(ALICE, "set alice alice-pw mail digest")
    replies = server.wait(timedelta(hours=23))  # the digest at 07:00 comes first: alice must act
    assert [r.subject for r in replies] == ["pbmserv digest: your move on 1 board"]
    nag = server.wait(timedelta(hours=2))
    assert [(r.to, r.subject) for r in nag] == [([ALICE], "Nag: Super-Wari Board 101 alice")]
    forfeit = server.wait(timedelta(days=2, hours=1))
    assert sorted(r.to for r in forfeit if r.subject == "Super-Wari Board 101") == [[ALICE], [BOB]]


def test_replay_sends_the_same_digests_at_their_times(tmp_path, monkeypatch):
    """Preferences set by mail hold under `replay` too: the scheduler fires the digest
    when the replayed Dates pass 07:00, and a second replay writes the same bytes."""
    from datetime import datetime

    from conftest import maildir_messages
    from mailgen import mail as dated_mail, write_mbox
    from pbmserv.cli import main

    start = datetime(2026, 11, 1, 9, 0).astimezone()
    lines = [("alice", "signup alice alice-pw", 0), ("bob", "signup bob bob-pw", 1),
             ("alice", "superwari challenge alice alice-pw bob", 2),
             ("bob", "set bob bob-pw mail digest", 3), ("alice", "set alice alice-pw html off", 4),
             ("alice", "superwari move 101 alice alice-pw c", 5),
             ("alice", "superwari show 101", 60 * 30)]  # the next day, after bob's digest
    mbox = write_mbox(tmp_path / "prefs.mbox", [dated_mail(f"{who}@example.org", subject, "", start + timedelta(
        minutes=minutes), n + 1) for n, (who, subject, minutes) in enumerate(lines)])
    monkeypatch.chdir(tmp_path)
    for name in ("PBMSERV_SERVER_SEED", "PBMSERV_DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    outboxes = []
    for run in ("one", "two"):
        assert main(["replay", str(mbox), "--outbox", run]) == 0
        outboxes.append([(m["To"], m["Subject"], m.get_content_type(), m.as_bytes())
                         for m in maildir_messages(tmp_path / run)])
    assert outboxes[0] == outboxes[1]
    heads = [(to, subject, kind) for to, subject, kind, _raw in outboxes[0]][4:]
    assert heads == [
        (BOB, "pbmserv preferences", "text/plain"), (ALICE, "pbmserv preferences", "text/plain"),
        (ALICE, "Super-Wari Board 101 bob", "text/plain"),  # alice: html off; bob: digest
        (BOB, "pbmserv digest: your move on 1 board", "multipart/alternative"),
        (ALICE, "Super-Wari Board 101 bob", "text/plain")]


def test_a_digest_draws_at_most_twenty_boards_those_waiting_first(server, monkeypatch):
    """A player on many boards gets one digest of bounded size: the boards waiting for
    them first, the rest counted and named by `all games`."""
    monkeypatch.setattr("pbmserv.digest.DIGEST_BOARDS", 2)
    server.signup("alice", "bob")
    server.send(ALICE, "superwari challenge alice alice-pw bob")  # 101: alice to move
    server.send(BOB, "superwari challenge bob bob-pw alice")  # 102: bob to move
    server.send(BOB, "superwari challenge bob bob-pw alice")  # 103: bob to move
    server.one(BOB, "set bob bob-pw mail digest")
    server.send(ALICE, "superwari move 101 alice alice-pw c")  # now bob's move on 101
    [digest] = server.wait(timedelta(days=1))
    text = body_of(digest)
    assert text.startswith("Your daily digest, bob: your move on Super-Wari 101, Super-Wari 102,\n"
                           "Super-Wari 103.\nTo get a mail for every action again, send: set bob PASSWORD mail every\n"
                           "Not drawn here: 1 more board; for all your boards, send: all games bob\n")
    assert [line for line in text.split("\n") if line.startswith("Summary of")] == [
        "Summary of Super-Wari Board 101", "Summary of Super-Wari Board 102"]


def test_preferences_by_mail_through_serve(tmp_path, serve_url):
    """Over real SMTP into `serve`: `html off` and `mail turn` set by mail shape the
    board mails its sender writes to the Maildir."""
    from datetime import datetime, timezone

    from mailgen import mail
    from test_smtp import RunningServer

    running = RunningServer(tmp_path, url=serve_url)
    try:
        start = datetime(2026, 11, 1, 9, 0, tzinfo=timezone.utc)
        sent = [("alice", "signup alice alice-pw"), ("bob", "signup bob bob-pw"),
                ("alice", "superwari challenge alice alice-pw bob"), ("alice", "set alice alice-pw html off"),
                ("bob", "set bob bob-pw mail turn"), ("bob", "superwari move 101 bob bob-pw c"),
                ("alice", "superwari move 101 alice alice-pw c")]
        for number, (user, subject) in enumerate(sent, start=1):
            running.send(mail(f"{user}@example.org", subject, "", start + timedelta(minutes=number), number))
        replies = running.replies(9)
    finally:
        running.stop()
    assert [(r["To"], r["Subject"], r.get_content_type()) for r in replies[4:]] == [
        (ALICE, "pbmserv preferences", "text/plain"), (BOB, "pbmserv preferences", "text/plain"),
        (BOB, "Super-Wari Board 101 Error", "multipart/alternative"),  # not bob's turn: the error shows the board
        (ALICE, "Super-Wari Board 101 bob", "text/plain"),  # alice: html off
        (BOB, "Super-Wari Board 101 bob", "multipart/alternative")]  # bob must act now
