"""Open challenges (commands/seeks.py): `GAME seek`, `seeks`, `join`, `start`,
`unseek`, and their expiry after `[games] seek_days` -- by mail, through the
in-process server, through `replay` with later Dates, and over real SMTP into `serve`."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from sqlalchemy import select

from conftest import body_of, maildir_messages, plain
from pbmserv.store.models import GameRecord, Seek, User

ALICE, BOB, CAROL, DAVE = (f"{name}@example.org" for name in ("alice", "bob", "carol", "dave"))
ROBOTS = "robot1 (weak), robot2\n(medium), robot3 (strong)."


def heads(replies) -> list[tuple[list[str], str]]:
    return sorted((r.to, r.subject) for r in replies)


def seek_row(server, number: int) -> tuple[str, int, list[str], int | None]:
    """(status, players, userids of the joiners, board) of a seek."""
    with server.sessions() as session:
        seek = session.get(Seek, number)
        joined = [session.get(User, user_id).userid for user_id in seek.joined]
        return seek.status, seek.players, joined, seek.board


def board(server, number: int, game: str) -> tuple[list[str], dict, int, int, str]:
    """(userids by seat, parameters, nag and forfeit times, who started it) of a board."""
    with server.sessions() as session:
        record = session.scalar(select(GameRecord).where(GameRecord.game_type == game, GameRecord.board == number))
        return ([seat.user.userid for seat in record.seats], record.params, record.nag_after, record.forfeit_after,
                session.get(User, record.starter_id).userid)


def boards_of(server, game: str) -> list[int]:
    with server.sessions() as session:
        return list(session.scalars(select(GameRecord.board).where(GameRecord.game_type == game)))


def first_lines(reply, count: int = 2) -> str:
    return "\n".join(body_of(reply).split("\n")[:count])


@pytest.fixture
def players(server):
    server.signup("alice", "bob", "carol", "dave")
    return server


# --- posting, listing, joining --------------------------------------------------------------------


def test_a_two_player_seek_is_listed_and_starts_when_someone_joins(players):
    reply = players.one(ALICE, "superwari seek alice alice-pw -pits=6 -forfeittime=3d")
    assert (reply.to, reply.subject) == ([ALICE], "Super-Wari seek"), body_of(reply)
    assert body_of(reply) == (
        "Super-Wari seek 1 is open: alice seeks 1 opponent for a game of 2.\n"
        "Parameters: -pits=6 -stones=3 -nagtime=1d -forfeittime=3d\n"
        "It expires at 2026-11-08 12:05 UTC if it has not started by then.\n\n"
        "Others join it with: superwari join 1 USERID PASSWORD\n"
        "The game starts as soon as someone joins: you get the new board mail.\n"
        "To start it now against robots, send:\n"
        "  superwari start 1 alice PASSWORD ROBOT ...\n"
        "where each ROBOT names a robot player for an empty seat: " + ROBOTS + "\n"
        "To withdraw it, send: superwari unseek 1 alice PASSWORD\n")
    listing = players.one(BOB, "superwari seeks")
    assert (listing.to, listing.subject) == ([BOB], "Super-Wari seeks")
    assert body_of(listing) == (
        "Open Super-Wari seeks, the oldest first:\n\n"
        "  Seek 1: alice (unrated), 1 of 2 players, open until 2026-11-08 12:05 UTC\n"
        "    -pits=6 -stones=3 -nagtime=1d -forfeittime=3d\n\n"
        "To join one, send: superwari join SEEK USERID PASSWORD\n"
        "To post your own, send:\n"
        "  superwari seek USERID PASSWORD [PLAYERS] [-NAME=VALUE ...]\n")
    replies = players.send(BOB, "superwari join 1 bob bob-pw", "Good luck!")
    assert heads(replies) == [([ALICE], "New Super-Wari Board 101 alice **"),
                              ([BOB], "New Super-Wari Board 101 alice **")]
    alice, bob = sorted(replies, key=lambda r: r.to)
    assert "It is alice's turn.\nbob joined your seek 1, so the game starts.\n" in body_of(alice)
    assert ("alice's seek 1 is full. Move, or decline:\n  superwari decline 101 bob PASSWORD\n"
            "Once it is your turn, a reply to this mail with just your move plays it.\n") in body_of(bob)
    assert "\nbob writes:\nGood luck!\n" in body_of(alice)
    assert board(players, 101, "superwari") == (["alice", "bob"], {"pits": 6, "stones": 3}, 86400, 3 * 86400,
                                                "alice")
    assert seek_row(players, 1) == ("started", 2, ["bob"], 101)
    assert body_of(players.one(CAROL, "superwari seeks")) == (
        "Open Super-Wari seeks, the oldest first:\n\n"
        "  none. Post one with:\n"
        "    superwari seek USERID PASSWORD [PLAYERS] [-NAME=VALUE ...]\n")
    # the joiner was challenged: they may decline; the seeker started the board and may not
    assert first_lines(players.one(ALICE, "superwari decline 101 alice alice-pw"), 1) == (
        "alice started Super-Wari board 101, so cannot decline it.")


def test_seeks_show_the_seekers_rating_and_the_players_of_a_multi_player_seek(players):
    players.send(ALICE, "superwari challenge alice alice-pw bob")
    players.send(BOB, "superwari resign 101 bob bob-pw")  # alice: 1616, provisional
    players.one(ALICE, "superwari seek alice alice-pw")
    players.one(CAROL, "superwari seek carol carol-pw -stones=2")
    assert body_of(players.one(DAVE, "superwari seeks")) == (
        "Open Super-Wari seeks, the oldest first:\n\n"
        "  Seek 1: alice (1616?), 1 of 2 players, open until 2026-11-08 12:07 UTC\n"
        "    -pits=8 -stones=3 -nagtime=7d -forfeittime=21d\n"
        "  Seek 2: carol (unrated), 1 of 2 players, open until 2026-11-08 12:08 UTC\n"
        "    -pits=8 -stones=2 -nagtime=7d -forfeittime=21d\n\n"
        "? provisional rating: fewer than 20 rated games.\n\n"
        "To join one, send: superwari join SEEK USERID PASSWORD\n"
        "To post your own, send:\n"
        "  superwari seek USERID PASSWORD [PLAYERS] [-NAME=VALUE ...]\n")
    players.one(ALICE, "survive seek alice alice-pw 4 -deadline=2d -first=alice")
    players.send(BOB, "survive join 3 bob bob-pw")
    assert body_of(players.one(DAVE, "survive seeks")) == (
        "Open Survive seeks, the oldest first:\n\n"
        "  Seek 3: alice (unrated), 2 of 4 players (alice, bob), open until 2026-11-08\n"
        "    12:10 UTC\n"
        "    -deadline=2d -window=1d -first=alice\n\n"
        "To join one, send: survive join SEEK USERID PASSWORD\n"
        "To post your own, send:\n"
        "  survive seek USERID PASSWORD [PLAYERS] [-NAME=VALUE ...]\n")
    assert "none." in body_of(players.one(DAVE, "serpent seeks"))  # each game lists its own


def test_a_multi_player_survive_seek_fills_and_starts(players):
    players.one(ALICE, "survive seek alice alice-pw 3 -deadline=2d")
    replies = players.send(BOB, "survive join 1 bob bob-pw")
    assert heads(replies) == [([ALICE], "Survive seek 1: bob joined"), ([BOB], "Survive join")]
    to_alice, to_bob = sorted(replies, key=lambda r: r.to)
    assert body_of(to_bob) == (
        "bob joined Survive seek 1 of alice: 2 of 3 players now (alice and bob).\n"
        "It starts when 1 more player joins, or when alice starts it: you get the new\n"
        "board mail.\n"
        "To leave it, send: survive unseek 1 bob PASSWORD\n")
    assert body_of(to_alice) == (
        "bob joined your Survive seek 1: 2 of 3 players now (alice and bob).\n"
        "It starts when 1 more player joins.\n"
        "To start it now with these players, send:\n"
        "  survive start 1 alice PASSWORD [ROBOT ...]\n"
        "where each ROBOT names a robot player for an empty seat: " + ROBOTS + "\n"
        "To withdraw it, send: survive unseek 1 alice PASSWORD\n")
    replies = players.send(CAROL, "survive join 1 carol carol-pw")
    assert heads(replies) == [([ALICE], "New Survive Board 101 ALL"), ([BOB], "New Survive Board 101 ALL"),
                              ([CAROL], "New Survive Board 101 ALL")]
    notes = {r.to[0]: body_of(r) for r in replies}
    assert "carol joined your seek 1, so the game starts.\n" in notes[ALICE]
    assert "alice's seek 1 is full. Move, or decline:\n  survive decline 101 bob PASSWORD\n" in notes[BOB]
    assert "alice's seek 1 is full. Move, or decline:\n  survive decline 101 carol PASSWORD\n" in notes[CAROL]
    assert board(players, 101, "survive")[0] == ["alice", "bob", "carol"]
    assert board(players, 101, "survive")[1]["deadline"] == 2 * 86400
    assert board(players, 101, "survive")[4] == "alice"
    assert seek_row(players, 1)[0] == "started"


def test_the_seeker_starts_a_multi_player_seek_with_fewer_players(players):
    players.one(ALICE, "survive seek alice alice-pw 5")
    refused = players.one(ALICE, "survive start 1 alice alice-pw")
    assert (refused.subject, first_lines(refused, 5)) == ("Survive error", (
        "Seek 1 has 1 player; Survive needs at least 2.\n"
        "Wait for others to join.\n"
        "To start it now against robots, send:\n"
        "  survive start 1 alice PASSWORD ROBOT ...\n"
        "where each ROBOT names a robot player for an empty seat: robot1 (weak), robot2"))
    players.send(BOB, "survive join 1 bob bob-pw")
    players.send(CAROL, "survive join 1 carol carol-pw")
    joiner = players.one(BOB, "survive start 1 bob bob-pw")
    assert first_lines(joiner, 3) == ("Only alice, who posted seek 1, can start it.\n"
                                      "It starts when it is full, or when alice starts it.\n"
                                      "To leave it, send: survive unseek 1 bob PASSWORD")
    stranger = players.one(DAVE, "survive start 1 dave dave-pw")
    assert first_lines(stranger) == ("Only alice, who posted seek 1, can start it.\n"
                                     "To join it, send: survive join 1 dave PASSWORD")
    replies = players.send(ALICE, "survive start 1 alice alice-pw", "Let's go")
    assert heads(replies) == [([ALICE], "New Survive Board 101 ALL **"), ([BOB], "New Survive Board 101 ALL **"),
                              ([CAROL], "New Survive Board 101 ALL **")]
    bob = next(body_of(r) for r in replies if r.to == [BOB])
    assert "alice started seek 1. Move, or decline:\n  survive decline 101 bob PASSWORD\n" in bob
    assert board(players, 101, "survive")[0] == ["alice", "bob", "carol"]
    gone = players.one(DAVE, "survive join 1 dave dave-pw")
    assert first_lines(gone, 3) == ("Seek 1 has started already: it is Survive board 101.\n"
                                    "Send 'survive seeks' for the open seeks.\n"
                                    "To look at the board, send: survive show 101")


def test_the_seeker_names_robots_to_fill_the_empty_seats(players):
    players.one(ALICE, "superwari seek alice alice-pw")
    replies = players.send(ALICE, "superwari start 1 alice alice-pw robot2")
    assert [r.to for r in replies if r.subject.startswith("New Super-Wari Board 101")] == [[ALICE]]  # robots read no mail
    assert all(r.to == [ALICE] for r in replies)
    assert board(players, 101, "superwari")[0] == ["alice", "robot2"]
    assert seek_row(players, 1)[0] == "started"
    players.one(ALICE, "survive seek alice alice-pw 4")
    players.send(BOB, "survive join 2 bob bob-pw")
    for words, problem in [
        ("robot1 robot2 robot3", "Seek 2 is for 4 players and has 2: there are 2 empty seats, not 3."),
        ("robot1 carol", "carol is not a robot player: only robots are named to fill seats."),
        ("robot1 robot1", "robot1 is named twice."),
        ("robot9", "There is no user robot9."),
        ("alice", "alice is not a robot player: only robots are named to fill seats."),
    ]:
        refused = players.one(ALICE, f"survive start 2 alice alice-pw {words}")
        assert (refused.subject, first_lines(refused, 1)) == ("Survive error", problem)
    replies = players.send(ALICE, "survive start 2 alice alice-pw robot3 robot1")
    assert {r.to[0] for r in replies} == {ALICE, BOB}
    bob = next(body_of(r) for r in replies if r.to == [BOB] and r.subject.startswith("New Survive Board 101"))
    assert "alice started seek 2 with robot3 and robot1. Move, or decline:\n" in bob
    assert board(players, 101, "survive")[0] == ["alice", "bob", "robot3", "robot1"]
    assert seek_row(players, 2) == ("started", 4, ["bob"], 101)  # the joiners: bob alone, no robots


# --- leaving and withdrawing -------------------------------------------------------------------


def test_the_seeker_withdraws_a_seek_and_its_joiners_are_told(players):
    players.one(ALICE, "survive seek alice alice-pw 4 -window=2h")
    players.send(BOB, "survive join 1 bob bob-pw")
    players.send(CAROL, "survive join 1 carol carol-pw")
    replies = players.send(ALICE, "survive unseek 1 alice alice-pw")
    assert heads(replies) == [([ALICE], "Survive unseek"), ([BOB], "Survive seek 1 withdrawn"),
                              ([CAROL], "Survive seek 1 withdrawn")]
    mails = {r.to[0]: body_of(r) for r in replies}
    assert mails[ALICE] == ("Survive seek 1 is withdrawn. bob and carol, who joined it, are told.\n"
                            "To post it again, send:\n  survive seek alice PASSWORD 4 -window=2h\n")
    assert mails[BOB] == ("alice withdrew Survive seek 1, which you had joined.\n"
                          "Send 'survive seeks' for the open seeks, or post your own:\n"
                          "  survive seek bob PASSWORD 4 -window=2h\n")
    assert seek_row(players, 1)[0] == "withdrawn"
    again = players.one(DAVE, "survive join 1 dave dave-pw")
    assert first_lines(again) == ("Seek 1 was withdrawn by alice.\nSend 'survive seeks' for the open seeks.")
    assert "none." in body_of(players.one(DAVE, "survive seeks"))


def test_a_joiner_leaves_a_seek_and_the_seeker_is_told(players):
    players.one(ALICE, "survive seek alice alice-pw 4")
    players.send(BOB, "survive join 1 bob bob-pw")
    players.send(CAROL, "survive join 1 carol carol-pw")
    replies = players.send(BOB, "survive unseek 1 bob bob-pw")
    assert heads(replies) == [([ALICE], "Survive seek 1: bob left"), ([BOB], "Survive unseek")]
    mails = {r.to[0]: body_of(r) for r in replies}
    assert mails[BOB] == "bob left Survive seek 1 of alice.\nTo join it again, send: survive join 1 bob PASSWORD\n"
    assert mails[ALICE].startswith("bob left your Survive seek 1: 2 of 4 players now.\n"
                                   "To start it now with these players, send:\n"
                                   "  survive start 1 alice PASSWORD [ROBOT ...]\n")
    assert seek_row(players, 1)[2] == ["carol"]
    twice = players.one(BOB, "survive unseek 1 bob bob-pw")
    assert first_lines(twice) == ("bob has not joined seek 1, and only alice can withdraw it.\n"
                                  "To join it, send: survive join 1 bob PASSWORD")
    # bob may come back; carol cannot join twice; alice cannot join her own seek
    assert players.send(BOB, "survive join 1 bob bob-pw")
    assert first_lines(players.one(CAROL, "survive join 1 carol carol-pw")) == (
        "carol has joined seek 1 already: 3 of 4 players.\nIt starts when it is full, or when alice starts it.")
    assert first_lines(players.one(ALICE, "survive join 1 alice alice-pw")) == (
        "alice posted seek 1, so cannot join it.\nOthers join it.")


# --- expiry --------------------------------------------------------------------------------------


def test_a_seek_expires_after_seven_days_and_the_seeker_and_joiners_are_told(players):
    players.one(ALICE, "survive seek alice alice-pw 3 -deadline=1d")  # 12:05
    players.send(BOB, "survive join 1 bob bob-pw")
    assert players.wait(timedelta(days=7) - timedelta(minutes=2)) == []  # 12:04 on the 7th day
    replies = players.wait(timedelta(minutes=1))
    assert heads(replies) == [([ALICE], "Survive seek 1 expired"), ([BOB], "Survive seek 1 expired")]
    mails = {r.to[0]: body_of(r) for r in replies}
    assert mails[ALICE] == ("Your Survive seek 1 expired after 7 days: bob joined it, but it did not start.\n"
                            "To post it again, send:\n  survive seek alice PASSWORD 3 -deadline=1d\n")
    assert mails[BOB] == ("alice's Survive seek 1, which you joined, expired after 7 days without\n"
                          "starting.\n"
                          "Send 'survive seeks' for the open seeks, or post one like it yourself:\n"
                          "  survive seek bob PASSWORD 3 -deadline=1d\n")
    assert seek_row(players, 1)[0] == "expired"
    assert players.wait(timedelta(days=30)) == []  # once
    late = players.one(CAROL, "survive join 1 carol carol-pw")
    assert first_lines(late, 1) == "Seek 1 expired at 2026-11-08 12:05 UTC."


def test_a_seek_past_its_time_is_closed_even_before_the_scheduler_runs(players):
    players.one(ALICE, "superwari seek alice alice-pw")
    players.clock += timedelta(days=8)  # no tick in between
    late = players.one(BOB, "superwari join 1 bob bob-pw")
    assert first_lines(late, 1) == "Seek 1 expired at 2026-11-08 12:05 UTC."
    assert "none." in body_of(players.one(BOB, "superwari seeks"))
    assert heads(players.wait(timedelta(0))) == [([ALICE], "Super-Wari seek 1 expired")]


def test_serve_wakes_for_the_first_expiry(players):
    """`earliest_due`, which `serve` sleeps until, counts the open seeks' expiry."""
    from pbmserv.scheduler import earliest_due

    assert earliest_due(players.sessions) is None
    players.one(ALICE, "superwari seek alice alice-pw")  # 12:05
    players.one(BOB, "survive seek bob bob-pw 3")  # 12:06
    assert earliest_due(players.sessions) == datetime(2026, 11, 8, 12, 5)
    players.send(ALICE, "superwari unseek 1 alice alice-pw")
    assert earliest_due(players.sessions) == datetime(2026, 11, 8, 12, 6)
    players.send(BOB, "survive unseek 2 bob bob-pw")
    assert earliest_due(players.sessions) is None


def test_replay_expires_a_seek_when_a_later_date_passes_and_repeats(tmp_path, monkeypatch):
    """Through `replay`: the scheduler expires the seek at its time, before the mail
    dated 8 days later, and a second replay writes the same bytes."""
    from mailgen import mail as dated_mail, write_mbox
    from pbmserv.cli import main

    start = datetime(2026, 11, 1, 9, 0, tzinfo=timezone.utc)
    lines = [("alice", "signup alice alice-pw", 0), ("bob", "signup bob bob-pw", 1),
             ("carol", "signup carol carol-pw", 2),
             ("alice", "survive seek alice alice-pw 3", 3), ("bob", "survive join 1 bob bob-pw", 4),
             ("carol", "superwari seek carol carol-pw -pits=5", 5), ("bob", "superwari seeks", 6),
             ("bob", "superwari join 2 bob bob-pw", 7),
             ("carol", "survive seeks", 60 * 24 * 8)]  # eight days on
    mbox = write_mbox(tmp_path / "seeks.mbox", [dated_mail(f"{who}@example.org", subject, "", start + timedelta(
        minutes=minutes), n + 1) for n, (who, subject, minutes) in enumerate(lines)])
    monkeypatch.chdir(tmp_path)
    for name in ("PBMSERV_SERVER_SEED", "PBMSERV_DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    outboxes = []
    for run in ("one", "two"):
        assert main(["replay", str(mbox), "--outbox", run]) == 0
        outboxes.append([(m["To"], m["Subject"], m.as_bytes()) for m in maildir_messages(tmp_path / run)])
    assert outboxes[0] == outboxes[1]
    messages = maildir_messages(tmp_path / "one")
    assert [(m["To"], m["Subject"]) for m in messages][3:] == [
        (ALICE, "Survive seek"), (BOB, "Survive join"), (ALICE, "Survive seek 1: bob joined"),
        (CAROL, "Super-Wari seek"), (BOB, "Super-Wari seeks"),
        (CAROL, "New Super-Wari Board 101 carol"), (BOB, "New Super-Wari Board 101 carol"),
        (ALICE, "Survive seek 1 expired"), (BOB, "Survive seek 1 expired"),  # at 09:03, seven days on
        (CAROL, "Nag: Super-Wari Board 101 carol"),  # at 09:07: each event at its own time, in order
        (CAROL, "Survive seeks")]
    expired = plain(messages[-4])
    assert expired.startswith("Your Survive seek 1 expired after 7 days: bob joined it, but it did not start.\n"
                              "To post it again, send:\n  survive seek alice PASSWORD 3\n")
    assert messages[-4]["Date"].startswith("Sun, 08 Nov 2026 09:03:00")  # at its expiry, not the later mail's
    assert "  none. Post one with:" in plain(messages[-1])


# --- refuse and limit ------------------------------------------------------------------------


def test_a_joiner_who_refuses_the_game_cannot_join(players):
    players.one(ALICE, "superwari seek alice alice-pw")
    players.one(BOB, "superwari refuse bob bob-pw")
    refused = players.one(BOB, "superwari join 1 bob bob-pw")
    assert (refused.to, refused.subject) == ([BOB], "Super-Wari error")
    assert first_lines(refused, 3) == (
        "bob refuses challenges of Super-Wari, and joining a seek accepts one.\n"
        "To accept challenges of Super-Wari again, send: superwari welcome bob PASSWORD\n")
    players.one(ALICE, "superwari refuse alice alice-pw")  # the seeker's own settings do not count
    players.one(BOB, "superwari welcome bob bob-pw")
    assert heads(players.send(BOB, "superwari join 1 bob bob-pw"))[0][1].startswith("New Super-Wari Board 101")


def test_a_joiner_at_their_limit_cannot_join_and_open_seeks_count(players):
    players.send(CAROL, "superwari challenge carol carol-pw bob")  # bob plays 1 board carol started
    players.one(BOB, "superwari limit bob bob-pw 2")
    players.one(ALICE, "superwari seek alice alice-pw 2")
    players.one(DAVE, "superwari seek dave dave-pw")
    players.one(ALICE, "survive seek alice alice-pw 3")
    players.send(BOB, "survive join 3 bob bob-pw")  # another game: not counted
    started = players.send(BOB, "superwari join 1 bob bob-pw")  # one running, none pending: under 2
    assert heads(started)[1] == ([BOB], "New Super-Wari Board 102 alice")
    refused = players.one(BOB, "superwari join 2 bob bob-pw")
    assert (refused.to, refused.subject) == ([BOB], "Super-Wari error")
    assert first_lines(refused, 3) == (
        "bob plays 2 running Super-Wari boards that others started (limit: 2), so\n"
        "cannot join another seek of Super-Wari.\n"
        "Wait until one of those boards ends ('superwari games bob' lists them).")
    players.one(BOB, "superwari limit bob bob-pw 3")
    players.one(CAROL, "superwari seek carol carol-pw")
    players.send(BOB, "survive unseek 3 bob bob-pw")
    players.one(ALICE, "survive seek alice alice-pw 4")  # seek 5
    players.one(BOB, "survive limit bob bob-pw 1")
    assert heads(players.send(BOB, "survive join 5 bob bob-pw"))[1] == ([BOB], "Survive join")  # now pending: 1
    refused = players.one(BOB, "survive join 3 bob bob-pw")
    assert first_lines(refused, 4) == (
        "bob plays 0 running Survive boards that others started and has joined 1 open\n"
        "seek (limit: 1), so cannot join another seek of Survive.\n"
        "Wait until one of those boards ends ('survive games bob' lists them), or leave\n"
        "a seek (survive unseek SEEK bob PASSWORD).")


def test_every_joiner_is_checked_again_when_the_board_would_start(players):
    players.one(ALICE, "survive seek alice alice-pw 4")
    players.send(BOB, "survive join 1 bob bob-pw")
    players.one(BOB, "survive refuse bob bob-pw")
    refused = players.one(ALICE, "survive start 1 alice alice-pw")
    assert (refused.to, refused.subject) == ([ALICE], "Survive error")
    assert first_lines(refused, 5) == (
        "Seek 1 cannot start: bob, who joined it, refuses challenges of Survive.\n"
        "It can start once bob sends 'survive welcome bob PASSWORD', or once bob leaves\n"
        "it ('survive unseek 1 bob PASSWORD').\n"
        "To ask bob, send: message alice PASSWORD bob\n")
    players.send(CAROL, "survive join 1 carol carol-pw")
    full = players.one(DAVE, "survive join 1 dave dave-pw")  # it would fill the seek
    assert first_lines(full, 1) == "Seek 1 cannot start: bob, who joined it, refuses challenges of Survive."
    assert seek_row(players, 1) == ("open", 4, ["bob", "carol"], None)  # dave did not join
    players.one(BOB, "survive welcome bob bob-pw")
    replies = players.send(DAVE, "survive join 1 dave dave-pw")
    assert board(players, 101, "survive")[0] == ["alice", "bob", "carol", "dave"]
    assert len(replies) == 4


# --- caps and hostile input ---------------------------------------------------------------------


def test_at_most_three_open_seeks_of_a_game_and_twenty_in_all(players, monkeypatch):
    for _ in range(3):
        players.one(ALICE, "serpent seek alice alice-pw")
    refused = players.one(ALICE, "serpent seek alice alice-pw")
    assert first_lines(refused, 3) == (
        "alice has 3 open seeks of Serpent already, the most one may have.\n"
        "Withdraw one first ('serpent seeks' lists them): serpent unseek SEEK alice\n"
        "PASSWORD")
    players.send(ALICE, "serpent unseek 2 alice alice-pw")
    assert players.one(ALICE, "serpent seek alice alice-pw").subject == "Serpent seek"  # room again
    monkeypatch.setattr("pbmserv.commands.seeks.SEEKS_IN_ALL", 5)
    players.one(ALICE, "wari seek alice alice-pw")
    players.one(ALICE, "wari seek alice alice-pw")
    refused = players.one(ALICE, "survival seek alice alice-pw")
    assert first_lines(refused, 1) == "alice has 5 open seeks already, the most one may have in all games."
    players.clock += timedelta(days=8)  # expired seeks count for nothing
    assert players.one(ALICE, "survival seek alice alice-pw").subject == "Survival seek"


def test_joins_are_limited_per_day(players, monkeypatch):
    monkeypatch.setattr("pbmserv.commands.seeks.JOINS_PER_DAY", 2)
    players.one(ALICE, "survive seek alice alice-pw 7")
    players.send(BOB, "survive join 1 bob bob-pw")
    players.send(BOB, "survive unseek 1 bob bob-pw")
    players.send(BOB, "survive join 1 bob bob-pw")
    players.send(BOB, "survive unseek 1 bob bob-pw")
    refused = players.one(BOB, "survive join 1 bob bob-pw")
    assert first_lines(refused) == ("bob joined 2 seeks in the last 24 hours, the most a day.\n"
                                    "Wait a day, then send it again.")


@pytest.mark.parametrize("subject, problem", [
    ("superwari join abc bob bob-pw", "'abc' is not a seek number."),
    ("superwari join 0 bob bob-pw", "There is no seek 0."),
    ("superwari join 999 bob bob-pw", "There is no seek 999."),
    ("superwari join 99999999999999999999999 bob bob-pw", "'99999999999999999999...' is not a seek number."),
    ("superwari join \u00b2 bob bob-pw", "'\u00b2' is not a seek number."),
    ("superwari join -1 bob bob-pw", "'-1' is not a seek number."),
    ("survive join 1 bob bob-pw", "Seek 1 is for Super-Wari, not Survive."),
    ("superwari join 1 robot1 robot-pw", "robot1 is a robot player: it has no password, and it moves by itself."),
    ("superwari join 1 ROBOT2 x", "robot2 is a robot player: it has no password, and it moves by itself."),
    ("superwari seek robot3 x", "robot3 is a robot player: it has no password, and it moves by itself."),
    ("superwari join 1 nobody x", "There is no user nobody."),
    ("superwari join 1 bob wrong-pw", "Wrong password for bob."),
    ("superwari join 1 bob", "superwari join: too few words for this command."),
    ("superwari join 1 bob bob-pw extra", "superwari join: too many words for this command."),
    ("superwari unseek 1 bob bob-pw", "bob has not joined seek 1, and only alice can withdraw it."),
    ("superwari start 1 bob bob-pw", "Only alice, who posted seek 1, can start it."),
    ("superwari seeks everything", "superwari seeks: too many words for this command."),
    ("superwari seek bob bob-pw 3", "Super-Wari is played by 2 players, not 3."),
    ("superwari seek bob bob-pw 0", "Super-Wari is played by 2 players, not 0."),
    ("survive seek bob bob-pw 99999999999999999999999999", "Survive is played by 2 to 7 players, not "
                                                           "'99999999999999999999...'."),
    ("survive seek bob bob-pw 3 4", "'3 4': give the number of players once."),
    ("superwari seek bob bob-pw carol", "'carol' is not a number of players."),
    ("superwari seek bob bob-pw pits=5", "Parameters start with '-': -pits=5"),
    ("superwari seek bob bob-pw -pits=99", "-pits must be from 4 to 10, not 99."),
    ("superwari seek bob bob-pw -colour=red", "Super-Wari has no parameter '-colour=red'."),
    ("superwari seek bob bob-pw -nagtime=9d -forfeittime=3d",
     "-nagtime must be shorter than -forfeittime: the reminder comes before the forfeit."),
    ("survive seek bob bob-pw 3 -first=carol", "-first must name a player of this game (bob), not 'carol'."),
])
def test_hostile_and_malformed_commands_get_a_specific_error(players, subject, problem):
    players.one(ALICE, "superwari seek alice alice-pw")
    reply = players.one(BOB, subject)
    assert reply.subject.endswith("error") and reply.to == [BOB]
    assert body_of(reply).replace("\n", " ").startswith(problem + " ")  # a long one is wrapped
    assert "bob-pw" not in reply.body and "robot-pw" not in reply.body
    assert seek_row(players, 1) == ("open", 2, [], None)
    assert [seek for seek in range(2, 4) if _seek_exists(players, seek)] == []


def _seek_exists(server, number: int) -> bool:
    with server.sessions() as session:
        return session.get(Seek, number) is not None


def test_closed_accounts_cannot_seek_or_join_and_their_seeks_are_off(players):
    players.one(ALICE, "superwari seek alice alice-pw")
    players.one(CAROL, "survive seek carol carol-pw 4")
    players.send(DAVE, "survive join 2 dave dave-pw")
    players.send(DAVE, "signoff dave dave-pw")
    assert first_lines(players.one(DAVE, "superwari join 1 dave dave-pw"), 1) == "The account dave is closed."
    assert first_lines(players.one(DAVE, "superwari seek dave dave-pw"), 1) == "The account dave is closed."
    assert "2 of 4" not in body_of(players.one(BOB, "survive seeks"))  # dave counts no more
    players.send(ALICE, "signoff alice alice-pw")
    assert first_lines(players.one(BOB, "superwari join 1 bob bob-pw"), 1) == (
        "Seek 1 is off: the account alice is closed.")
    assert "none." in body_of(players.one(BOB, "superwari seeks"))


def test_help_lists_the_seek_commands(players):
    text = body_of(players.one(ALICE, "superwari help"))
    assert ("  superwari seek USERID PASSWORD [PLAYERS] [-NAME=VALUE ...]\n"
            "      post an open challenge that anyone may join\n"
            "  superwari seeks\n"
            "      the open challenges of this game, the oldest first\n"
            "  superwari join SEEK USERID PASSWORD\n"
            "      take a seat in an open challenge; a two-player game starts at once\n"
            "  superwari start SEEK USERID PASSWORD [ROBOT ...]\n"
            "      start your seek now; robots you name fill empty seats\n"
            "  superwari unseek SEEK USERID PASSWORD\n"
            "      withdraw your open challenge, or leave one you joined\n") in text
    topic = body_of(players.one(ALICE, "help superwari seek"))
    assert topic.startswith("superwari seek USERID PASSWORD [PLAYERS] [-NAME=VALUE ...]\n")


# --- over real SMTP into serve -----------------------------------------------------------------


def test_seek_and_join_through_serve(tmp_path, serve_url):
    """Over real SMTP into `serve`: a Survive seek fills and starts; a Super-Wari seek
    starts against a robot; the replies land in the Maildir."""
    from mailgen import mail
    from test_smtp import RunningServer

    running = RunningServer(tmp_path, url=serve_url)
    try:
        start = datetime(2026, 11, 1, 9, 0, tzinfo=timezone.utc)
        sent = [("alice", "signup alice alice-pw"), ("bob", "signup bob bob-pw"), ("carol", "signup carol carol-pw"),
                ("alice", "survive seek alice alice-pw 3"), ("bob", "survive join 1 bob bob-pw"),
                ("carol", "survive join 1 carol carol-pw"), ("bob", "superwari seek bob bob-pw"),
                ("carol", "superwari seeks"), ("bob", "superwari start 2 bob bob-pw robot1")]
        for number, (user, subject) in enumerate(sent, start=1):
            running.send(mail(f"{user}@example.org", subject, "", start + timedelta(minutes=number), number))
        replies = running.replies(12)
        with running.sessions() as session:
            seeks = [(seek.status, seek.board) for seek in session.scalars(select(Seek).order_by(Seek.id))]
    finally:
        running.stop()
    heads_ = [(r["To"], r["Subject"]) for r in replies]
    assert heads_[3:6] == [(ALICE, "Survive seek"), (BOB, "Survive join"), (ALICE, "Survive seek 1: bob joined")]
    assert sorted(heads_[6:9]) == [(ALICE, "New Survive Board 101 ALL"), (BOB, "New Survive Board 101 ALL"),
                                   (CAROL, "New Survive Board 101 ALL")]
    assert heads_[9:12] == [(BOB, "Super-Wari seek"), (CAROL, "Super-Wari seeks"),
                            (BOB, "New Super-Wari Board 101 bob")]
    assert "  Seek 2: bob (unrated), 1 of 2 players" in plain(replies[10])
    assert seeks == [("started", 101), ("started", 101)]
