"""The server's own deadlines (README "Nag and forfeit"): the nag and forfeit clocks of
games without deadlines of their own, their `[games]` defaults and `-nagtime` /
`-forfeittime`, the reminder, the forfeit, `vacation`, downtime given back by
`scheduler.keep_alive`, and the same clocks under `pbmserv replay` and `pbmserv tick`.

Times come from the fixture clock (2026-11-01 12:00, one minute more per mail): after
`bobs_turn` the challenge was sent at 12:04 and alice's move, which starts bob's clock,
at 12:05. Board mails are compared as whole text."""

from __future__ import annotations

import os
import threading
from datetime import datetime, timedelta, timezone

import pytest
from sqlalchemy import func, select

from conftest import body_of, drawing, maildir_messages, mails, plain
from mailgen import mail, write_mbox
from pbmserv.cli import main
from pbmserv.config import ConfigError, load_config
from pbmserv.games import get_game
from pbmserv.play import replay, set_due
from pbmserv.scheduler import keep_alive, run_due
from pbmserv.store.models import GameRecord, Vacation
from pbmserv.store.repo import find_game

ALICE = "alice@example.org"
BOB = "bob@example.org"
CAROL = "carol@example.org"
MASK = "********"
MINUTE, HOUR, DAY = timedelta(minutes=1), timedelta(hours=1), timedelta(days=1)
CLOCKS = "-nagtime=2d -forfeittime=5d"
CHALLENGE_USAGE = "Send: superwari challenge USERID PASSWORD OPPONENT ... [-NAME=VALUE ...]"


# --- helpers ---------------------------------------------------------------------------


def when(moment: datetime) -> str:
    return f"{moment:%Y-%m-%d %H:%M} UTC"


def forfeits(userid: str, moment: datetime) -> str:
    return f"{userid} forfeits if no move by {when(moment)}."


FULL = [3] * 8
AFTER_C = [3, 3, 0, 4, 4, 4, 3, 3]  # alice's row after her `c`, from her a to h
START_ALICE = drawing("bob", FULL, "alice", FULL)  # also the public view
START_BOB = drawing("alice", FULL, "bob", FULL)
AFTER_C_ALICE = drawing("bob", FULL, "alice", AFTER_C)  # also the public view
AFTER_C_BOB = drawing("alice", AFTER_C[::-1], "bob", FULL)
ONE_MOVE = "  alice  bob\n  #1 c\n"
C_THEN_FORFEIT = "  alice       bob\n  #1 c        #2 forfeit\n"


def board(status: str, lines: list[str], picture: str, moves: str = "", title: str = "Super-Wari",
          number: int = 101) -> str:
    """A board mail: summary line, status, note and deadline lines, moves, drawing."""
    text = f"Summary of {title} Board {number}\n\n{status}\n" + "".join(line + "\n" for line in lines)
    if moves:
        text += "\n" + moves
    return text + "\n" + picture


def error(problem: str, instead: str, quoted: str) -> str:
    return f"{problem}\n{instead}\n\nYour message:\n> Subject: {quoted}\n"


def start(server, params: str = CLOCKS, game: str = "superwari") -> datetime:
    """alice, bob and carol sign up and alice challenges bob; the time of the challenge
    (when alice's clock starts)."""
    server.signup("alice", "bob", "carol")
    replies = server.send(ALICE, f"{game} challenge alice alice-pw bob {params}".strip())
    assert [r.to for r in replies] == [[ALICE], [BOB]], mails(replies)
    return server.clock


def bobs_turn(server, params: str = CLOCKS) -> datetime:
    """A game in which alice has played `c`; the time of that move (when bob's clock
    started)."""
    start(server, params)
    assert len(server.send(ALICE, "superwari move 101 alice alice-pw c")) == 2
    return server.clock


def wait_until(server, moment: datetime):
    """Let time pass up to `moment`; the mails the deadlines on the way caused."""
    assert moment >= server.clock
    return server.wait(moment - server.clock)


def shown(server, board_number: int = 101, game: str = "superwari") -> str:
    """The board as carol, who does not play, gets it from `show`."""
    return body_of(server.one(CAROL, f"{game} show {board_number}"))


def deadline_part(text: str) -> list[str]:
    """The lines of a board mail between the status line and the moves or drawing, but
    the "Next move: #N" line of a running board (tests/test_guidance.py)."""
    return [line for line in text.split("\n\n")[1].split("\n")[1:] if not line.startswith("Next move: #")]


def record_of(server, game: str = "superwari", number: int = 101) -> dict:
    with server.sessions() as session:
        record = find_game(session, game, number)
        return {"status": record.status, "result": record.result, "due_at": record.due_at,
                "nag_after": record.nag_after, "forfeit_after": record.forfeit_after, "clocks": record.clocks,
                "moves": [(m.number, m.seat, m.kind, m.move, m.created_at) for m in record.moves]}


def count(server, model) -> int:
    with server.sessions() as session:
        return session.scalar(select(func.count()).select_from(model))


def nag_mail(userid: str, since: datetime, lines: list[str], picture: str, moves: str = "",
             next_move: int = 2) -> tuple:
    return (f"Nag: Super-Wari Board 101 {userid}", [f"{userid}@example.org"],
            board(f"It is {userid}'s turn.", [f"Reminder: it has been {userid}'s turn since {when(since)}.",
                                               f"Next move: #{next_move}"] + lines, picture, moves))


def bob_forfeited(to: str, picture: str) -> tuple:
    """The board mail that ends a game after alice's `c` when bob does not move for 5 days."""
    return ("Super-Wari Board 101", [to],
            board("Game won by alice.", ["bob forfeited: no move for 5 days."], picture, C_THEN_FORFEIT))


BOB_FORFEITED = [bob_forfeited(ALICE, AFTER_C_ALICE), bob_forfeited(BOB, AFTER_C_BOB)]


# --- the clocks a challenge sets ----------------------------------------------------------


def test_defaults_come_from_the_games_section(server):
    began = start(server, "")
    record = record_of(server)
    assert (record["nag_after"], record["forfeit_after"]) == (7 * 86400, 21 * 86400)
    assert deadline_part(shown(server)) == [forfeits("alice", began + 21 * DAY)]
    assert wait_until(server, began + 7 * DAY - MINUTE) == []
    assert [(r.subject, r.to) for r in server.wait(MINUTE)] == [("Nag: Super-Wari Board 101 alice", [ALICE])]
    assert wait_until(server, began + 21 * DAY - MINUTE) == []
    ended = server.wait(MINUTE)
    assert [(r.subject, r.to) for r in ended] == [("Super-Wari Board 101", [ALICE]), ("Super-Wari Board 101", [BOB])]
    assert deadline_part(body_of(ended[0])) == ["alice forfeited: no move for 21 days."]


def test_the_configuration_sets_other_defaults(make_server):
    server = make_server(games={"nag_time": "1d", "forfeit_time": "off"})
    began = start(server, "")
    help_text = body_of(server.one(ALICE, "superwari help"))
    assert ("  -nagtime=1d (1h to 365d): a reminder to a player who has not moved for this\n"
            "    long (off: none)\n"
            "  -forfeittime=off (1h to 365d): a player who has not moved for this long\n"
            "    loses the game (off: never)\n"
            in help_text)
    assert deadline_part(shown(server)) == []
    assert [(r.subject, r.to) for r in wait_until(server, began + DAY)] == [("Nag: Super-Wari Board 101 alice",
                                                                             [ALICE])]
    assert server.wait(400 * DAY) == []
    assert record_of(server)["status"] == "active"


def test_a_challenge_sets_the_clocks_of_its_board(server):
    server.signup("alice", "bob", "carol")
    replies = server.send(ALICE, f"superwari challenge alice alice-pw bob {CLOCKS}")
    line = ["Next move: #1", forfeits("alice", server.clock + 5 * DAY)]
    challenged = ["alice challenged you to Super-Wari. Move, or decline:", "  superwari decline 101 bob PASSWORD",
                  "Once it is your turn, a reply to this mail with just your move plays it."]
    assert mails(replies) == [
        ("New Super-Wari Board 101 alice", [ALICE], board("It is alice's turn.", line, START_ALICE)),
        ("New Super-Wari Board 101 alice", [BOB], board("It is alice's turn.", challenged + line, START_BOB)),
    ]
    record = record_of(server)
    assert (record["nag_after"], record["forfeit_after"], record["clocks"], record["due_at"]) == (
        2 * 86400, 5 * 86400, {"0": {"since": server.clock.isoformat(), "nagged": False}}, server.clock + 2 * DAY)


@pytest.mark.parametrize("game, title", [("wari", "Wari"), ("survival", "Survival"), ("serpent", "Serpent")])
def test_every_game_without_deadlines_of_its_own_has_the_clocks(server, game, title):
    began = start(server, CLOCKS, game)
    text = shown(server, game=game)
    assert text.split("\n")[:5] == [f"Summary of {title} Board 101", "", "It is alice's turn.", "Next move: #1",
                                    forfeits("alice", began + 5 * DAY)]
    nagged = wait_until(server, began + 2 * DAY)
    assert [(r.subject, r.to) for r in nagged] == [(f"Nag: {title} Board 101 alice", [ALICE])]
    ended = wait_until(server, began + 5 * DAY)
    assert [(r.subject, r.to) for r in ended] == [(f"{title} Board 101", [ALICE]), (f"{title} Board 101", [BOB])]
    assert "\nGame won by bob.\nalice forfeited: no move for 5 days.\n" in body_of(ended[1])


PARAMS_HINT = ("Parameters of Super-Wari: -pits=N, -stones=N, -nagtime=DURATION|off,\n"
               "-forfeittime=DURATION|off. Send 'superwari help' for their meaning.")
SHORTER = "-nagtime must be shorter than -forfeittime: the reminder comes before the\nforfeit."
SHORTER_HINT = "Send e.g.:\n  superwari challenge USERID PASSWORD OPPONENT -nagtime=7d -forfeittime=21d"


@pytest.mark.parametrize("params, problem, instead", [
    ("-nagtime=5d -forfeittime=5d", SHORTER, SHORTER_HINT),
    ("-nagtime=3d -forfeittime=2d", SHORTER, SHORTER_HINT),
    ("-nagtime=22d", SHORTER, SHORTER_HINT),  # against the default -forfeittime=21d
    ("-nagtime=soon", "-nagtime must be a duration such as 72h or 3d, not 'soon'.", CHALLENGE_USAGE),
    ("-forfeittime=-1d", "-forfeittime must be a duration such as 72h or 3d, not '-1d'.", CHALLENGE_USAGE),
    ("-forfeittime=30m", "-forfeittime must be from 1h to 365d, not 30m.", CHALLENGE_USAGE),
    ("-nagtime=366d", "-nagtime must be from 1h to 365d, not 366d.", CHALLENGE_USAGE),
    ("-nagtime", "Super-Wari has no parameter '-nagtime'.", PARAMS_HINT),
])
def test_bad_clock_parameters_are_refused_and_change_nothing(server, params, problem, instead):
    server.signup("alice", "bob")
    reply = server.one(ALICE, f"superwari challenge alice alice-pw bob {params}")
    assert (reply.subject, reply.to, body_of(reply)) == (
        "Super-Wari error", [ALICE], error(problem, instead, f"superwari challenge alice {MASK} bob {params}"))
    assert count(server, GameRecord) == 0
    assert server.send(ALICE, "superwari challenge alice alice-pw bob")[0].subject == "New Super-Wari Board 101 alice"


def test_a_short_forfeittime_alone_brings_the_reminder_forward(server):
    """-forfeittime=5d under the default 7-day reminder: the reminder comes at a third."""
    server.signup("alice", "bob")
    server.send(ALICE, "superwari challenge alice alice-pw bob -forfeittime=5d")
    record = record_of(server)
    assert (record["nag_after"], record["forfeit_after"]) == (40 * 3600, 5 * 86400)


def test_a_configuration_whose_reminder_is_not_before_the_forfeit_is_refused(tmp_path):
    path = tmp_path / "pbmserv.toml"
    path.write_text('[games]\nnag_time = "21d"\nforfeit_time = "7d"\n')
    with pytest.raises(ConfigError, match=r"^\[games\] nag_time must be shorter than forfeit_time"):
        load_config(path, environ={})


def test_survive_times_its_players_itself(server):
    server.signup("alice", "bob", "carol")
    reply = server.one(ALICE, "survive challenge alice alice-pw bob carol -nagtime=2d")
    assert (reply.subject, body_of(reply)) == ("Survive error", error(
        "Survive has no parameter '-nagtime=2d'.",
        "Parameters of Survive: -deadline=DURATION, -window=DURATION, -first=USERID.\n"
        "Send 'survive help' for their meaning.",
        f"survive challenge alice {MASK} bob carol -nagtime=2d"))
    server.send(ALICE, "survive challenge alice alice-pw bob carol")
    record = record_of(server, "survive")
    assert (record["nag_after"], record["forfeit_after"], record["clocks"]) == (0, 0, {})
    assert "forfeits if no move" not in shown(server, game="survive")


# --- the reminder -------------------------------------------------------------------------


def test_the_player_to_move_is_reminded_once(server):
    turn = bobs_turn(server)
    assert wait_until(server, turn + 2 * DAY - MINUTE) == []
    assert mails(server.wait(MINUTE)) == [
        nag_mail("bob", turn, [forfeits("bob", turn + 5 * DAY)], AFTER_C_BOB, ONE_MOVE)]
    assert wait_until(server, turn + 5 * DAY - MINUTE) == []  # never twice for the same turn
    assert record_of(server)["clocks"] == {"1": {"since": turn.isoformat(), "nagged": True}}


def test_a_move_starts_the_next_players_clock_and_a_new_turn_is_reminded_again(server):
    began = start(server)
    assert [r.to for r in wait_until(server, began + 2 * DAY)] == [[ALICE]]
    server.send(ALICE, "superwari move 101 alice alice-pw c")
    wait_until(server, server.clock + DAY)  # bob thinks for a day
    replies = server.send(BOB, "superwari move 101 bob bob-pw c")
    moved = server.clock
    assert [deadline_part(body_of(r)) for r in replies] == [[forfeits("alice", moved + 5 * DAY)]] * 2
    assert record_of(server)["clocks"] == {"0": {"since": moved.isoformat(), "nagged": False}}
    assert wait_until(server, moved + 2 * DAY - MINUTE) == []
    nagged = server.wait(MINUTE)
    assert [(r.subject, r.to) for r in nagged] == [("Nag: Super-Wari Board 101 alice", [ALICE])]
    assert deadline_part(body_of(nagged[0])) == [f"Reminder: it has been alice's turn since {when(moved)}.",
                                                 forfeits("alice", moved + 5 * DAY)]


def test_nagtime_off_forfeits_without_a_reminder(server):
    turn = bobs_turn(server, "-nagtime=off -forfeittime=5d")
    assert deadline_part(shown(server)) == [forfeits("bob", turn + 5 * DAY)]
    assert wait_until(server, turn + 5 * DAY - MINUTE) == []
    assert mails(server.wait(MINUTE)) == BOB_FORFEITED


def test_forfeittime_off_reminds_but_never_forfeits(server):
    turn = bobs_turn(server, "-nagtime=2d -forfeittime=off")
    assert deadline_part(shown(server)) == []
    assert mails(wait_until(server, turn + 2 * DAY)) == [nag_mail("bob", turn, [], AFTER_C_BOB, ONE_MOVE)]
    assert server.wait(400 * DAY) == []
    record = record_of(server)
    assert (record["status"], record["due_at"]) == ("active", None)


def test_both_off_means_no_deadline_at_all(server):
    turn = bobs_turn(server, "-nagtime=off -forfeittime=off")
    record = record_of(server)
    assert (record["nag_after"], record["forfeit_after"], record["clocks"], record["due_at"]) == (0, 0, {}, None)
    assert server.wait(400 * DAY) == []
    assert server.clock == turn + 400 * DAY and record_of(server)["status"] == "active"


# --- the forfeit --------------------------------------------------------------------------


def test_the_forfeit_ends_the_game_and_every_player_and_observer_gets_the_board(server):
    turn = bobs_turn(server)
    server.one(CAROL, "superwari subscribe 101 carol carol-pw")
    assert [r.subject for r in wait_until(server, turn + 5 * DAY - MINUTE)] == ["Nag: Super-Wari Board 101 bob"]
    assert mails(server.wait(MINUTE)) == BOB_FORFEITED + [bob_forfeited(CAROL, AFTER_C_ALICE)]
    record = record_of(server)
    assert (record["status"], record["result"], record["clocks"], record["due_at"]) == (
        "finished", "Game won by alice.", {}, None)
    assert server.wait(30 * DAY) == []


def test_the_forfeit_is_a_logged_move_the_log_replays(server):
    turn = bobs_turn(server)
    wait_until(server, turn + 5 * DAY)
    assert record_of(server)["moves"] == [(1, 0, "move", "c", turn), (2, 1, "forfeit", "forfeit", turn + 5 * DAY)]
    with server.sessions() as session:
        record = find_game(session, "superwari", 101)
        assert get_game("superwari").serialise(replay(record)) == record.state
        assert get_game("superwari").serialise(replay(record, 1)) != record.state


@pytest.mark.parametrize("sender, userid", [(ALICE, "alice"), (BOB, "bob")])
def test_no_move_after_a_forfeit(server, sender, userid):
    turn = bobs_turn(server)
    wait_until(server, turn + 5 * DAY)
    reply = server.one(sender, f"superwari move 101 {userid} {userid}-pw d")
    assert reply.subject == "Super-Wari Board 101 Error"
    assert body_of(reply).split("\n")[:2] == [
        "Super-Wari board 101 is over: Game won by alice.",
        "Start a new game with: superwari challenge USERID PASSWORD OPPONENT"]
    assert len(record_of(server)["moves"]) == 2


def test_the_forfeit_counts_as_a_move_for_the_number_guard(server):
    turn = bobs_turn(server)
    wait_until(server, turn + 5 * DAY)
    assert body_of(server.one(CAROL, "superwari show 101#2")) == board(
        "Game won by alice.", ["Position after move 2 of 2."], AFTER_C_ALICE, C_THEN_FORFEIT)
    refused = server.one(CAROL, "superwari show 101#3")
    assert body_of(refused).split("\n")[:2] == ["Board 101 has had 2 moves, so there is no position after move 3.",
                                                "Send: superwari show 101#N with N from 0 to 2."]


def test_a_forfeit_in_hours_is_written_in_hours(server):
    turn = bobs_turn(server, "-nagtime=12h -forfeittime=36h")
    ended = wait_until(server, turn + 36 * HOUR)
    assert [deadline_part(body_of(r)) for r in ended[1:]] == [["bob forfeited: no move for 36 hours."]] * 2


# --- vacation -----------------------------------------------------------------------------


def vacation(server, sender: str, userid: str, what: str) -> tuple[str, list[str], str]:
    reply = server.one(sender, f"vacation {userid} {userid}-pw {what}")
    return reply.subject, reply.to, body_of(reply)


def away_text(until: datetime, left: str, on: bool = False) -> str:
    """bob's reply to `vacation`, filled to 78 columns (the breaks are those of a
    three-letter userid)."""
    if on:
        away = (f"bob is on vacation until you send 'off', at the latest until {until:%Y-%m-%d %H:%M}\n"
                "UTC: no reminders or forfeits meanwhile, and your opponents see it on the\nboard mails.\n")
    else:
        away = (f"bob is on vacation until {when(until)}: no reminders or forfeits\n"
                "meanwhile, and your opponents see it on the board mails.\n")
    return away + f"Vacation left: {left} in 365 days.\n"


def test_vacation_for_days(server):
    server.signup("alice", "bob")
    assert vacation(server, BOB, "bob", "4") == (
        "pbmserv vacation", [BOB], away_text(server.clock + 4 * DAY, "26 of 30 days"))
    with server.sessions() as session:
        assert [(v.start, v.end) for v in session.scalars(select(Vacation))] == [
            (server.clock, server.clock + 4 * DAY)]


def test_a_vacation_moves_the_forfeit_back_by_the_time_away(server):
    turn = bobs_turn(server)
    assert [r.subject for r in wait_until(server, turn + 3 * DAY - MINUTE)] == ["Nag: Super-Wari Board 101 bob"]
    vacation(server, BOB, "bob", "4")  # from turn + 3 days to turn + 7 days
    assert deadline_part(shown(server)) == [forfeits("bob", turn + 9 * DAY),
                                            f"On vacation: bob until {when(turn + 7 * DAY)}."]
    assert wait_until(server, turn + 9 * DAY - MINUTE) == []
    assert mails(server.wait(MINUTE)) == BOB_FORFEITED


def test_no_reminder_while_away(server):
    turn = bobs_turn(server)
    wait_until(server, turn + DAY - MINUTE)
    vacation(server, BOB, "bob", "4")  # the reminder was due at turn + 2 days
    assert wait_until(server, turn + 6 * DAY - MINUTE) == []
    assert mails(server.wait(MINUTE)) == [nag_mail(
        "bob", turn, [forfeits("bob", turn + 9 * DAY)], AFTER_C_BOB, ONE_MOVE)]


def test_a_turn_that_begins_during_a_vacation_counts_from_its_end(server):
    start(server)
    server.send(ALICE, "superwari move 101 alice alice-pw c")
    vacation(server, ALICE, "alice", "3")
    back = server.clock + 3 * DAY
    replies = server.send(BOB, "superwari move 101 bob bob-pw c")
    moved = server.clock
    assert [deadline_part(body_of(r)) for r in replies] == [
        [forfeits("alice", back + 5 * DAY), f"On vacation: alice until {when(back)}."]] * 2
    assert moved < back
    assert wait_until(server, back + 2 * DAY - MINUTE) == []
    assert [r.subject for r in server.wait(MINUTE)] == ["Nag: Super-Wari Board 101 alice"]


def test_off_ends_the_vacation_early_and_the_deadline_comes_back(server):
    turn = bobs_turn(server)
    wait_until(server, turn + 3 * DAY - MINUTE)
    vacation(server, BOB, "bob", "4")
    wait_until(server, turn + 4 * DAY - MINUTE)
    assert vacation(server, BOB, "bob", "off") == (
        "pbmserv vacation", [BOB],
        f"Welcome back, bob: your vacation ended at {when(turn + 4 * DAY)}.\n"
        "Vacation left: 29 of 30 days in 365 days.\n")
    assert deadline_part(shown(server)) == [forfeits("bob", turn + 6 * DAY)]
    assert wait_until(server, turn + 6 * DAY - MINUTE) == []
    assert mails(server.wait(MINUTE)) == BOB_FORFEITED


def test_the_allowance_is_30_days_in_any_365(server):
    server.signup("alice", "bob")
    assert vacation(server, BOB, "bob", "31") == ("pbmserv error", [BOB], error(
        "bob has 30 days of vacation left: 0 days of 30 days were taken in the last 365\ndays.",
        "Send: vacation bob PASSWORD DAYS with at most the days left, or 'on'.", f"vacation bob {MASK} 31"))
    assert count(server, Vacation) == 0
    vacation(server, BOB, "bob", "10")
    server.wait(10 * DAY)
    assert vacation(server, BOB, "bob", "21")[2].split("\n")[:2] == [
        "bob has 20 days of vacation left: 10 days of 30 days were taken in the last", "365 days."]
    assert vacation(server, BOB, "bob", "20")[2] == away_text(server.clock + 20 * DAY, "0 of 30 days")
    server.wait(20 * DAY)
    assert vacation(server, BOB, "bob", "1")[2].split("\n")[:2] == [
        "bob has 0 days of vacation left: 30 days of 30 days were taken in the last 365", "days."]
    server.wait(365 * DAY)
    assert vacation(server, BOB, "bob", "1")[2] == away_text(server.clock + DAY, "29 of 30 days")


def test_the_allowance_comes_from_the_configuration_and_on_lasts_at_most_the_days_left(make_server):
    server = make_server(games={"vacation_days": 10})
    server.signup("alice", "bob")
    assert vacation(server, BOB, "bob", "11")[2].split("\n")[:2] == [
        "bob has 10 days of vacation left: 0 days of 10 days were taken in the last 365", "days."]
    assert vacation(server, BOB, "bob", "on") == (
        "pbmserv vacation", [BOB], away_text(server.clock + 10 * DAY, "0 of 10 days", on=True))
    with server.sessions() as session:
        assert [(v.start, v.end) for v in session.scalars(select(Vacation))] == [
            (server.clock, server.clock + 10 * DAY)]


@pytest.mark.parametrize("what, problem, instead", [
    ("maybe", "'maybe' is not on, off or a number of days (1 or more).",
     "Send: vacation bob PASSWORD on|off|DAYS, e.g. vacation bob PASSWORD 14"),
    ("0", "'0' is not on, off or a number of days (1 or more).",
     "Send: vacation bob PASSWORD on|off|DAYS, e.g. vacation bob PASSWORD 14"),
    ("off", "bob is not on vacation.", "To go away, send: vacation bob PASSWORD on|DAYS"),
])
def test_bad_vacation_commands_are_refused_and_change_nothing(server, what, problem, instead):
    turn = bobs_turn(server)
    assert vacation(server, BOB, "bob", what) == (
        "pbmserv error", [BOB], error(problem, instead, f"vacation bob {MASK} {what}"))
    assert count(server, Vacation) == 0
    assert record_of(server)["due_at"] == turn + 2 * DAY


# --- downtime -----------------------------------------------------------------------------


def alive(server, moment: datetime):
    return keep_alive(server.sessions, server.config, moment)


def test_a_short_silence_changes_nothing(server):
    turn = bobs_turn(server)
    before = record_of(server)
    assert alive(server, turn) is None  # the first sign of life
    assert alive(server, turn + 59 * MINUTE) is None
    assert alive(server, turn + 119 * MINUTE) is None  # exactly the grace after the last one
    assert record_of(server) == before


@pytest.mark.parametrize("down", [True, False])
def test_downtime_pushes_the_clocks_back(server, down):
    turn = bobs_turn(server)
    if down:
        assert alive(server, turn) is None
        assert alive(server, turn + 10 * DAY) == 10 * DAY
    server.clock = turn + 10 * DAY
    fired = run_due(server.sessions, server.config, server.clock)
    if down:
        assert fired == 0
        assert deadline_part(shown(server)) == [forfeits("bob", turn + 15 * DAY)]
        assert record_of(server)["clocks"] == {"1": {"since": turn.isoformat(), "nagged": False, "pause": 10 * 86400}}
    else:
        assert fired == 2  # the reminder, then the forfeit
        assert record_of(server)["moves"][-1] == (2, 1, "forfeit", "forfeit", turn + 5 * DAY)


def test_servers_back_from_one_outage_give_the_time_back_once(server):
    """Several servers on one database notice the same silence at once; the first gives
    the time back, the others see its note (on PostgreSQL they really race)."""
    turn = bobs_turn(server)
    alive(server, turn)
    start = threading.Barrier(4)
    gaps = []

    def back() -> None:
        start.wait()
        gaps.append(alive(server, turn + 10 * DAY))
    threads = [threading.Thread(target=back) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(gaps, key=str) == [10 * DAY, None, None, None]
    assert record_of(server)["clocks"]["1"]["pause"] == 10 * 86400


def test_the_grace_comes_from_the_configuration(make_server):
    server = make_server(games={"downtime_grace": "12h"})
    turn = bobs_turn(server)
    alive(server, turn)
    assert alive(server, turn + 12 * HOUR) is None
    assert alive(server, turn + 25 * HOUR) == 13 * HOUR
    assert deadline_part(shown(server)) == [forfeits("bob", turn + 5 * DAY + 13 * HOUR)]


def test_downtime_pushes_the_engines_timers_back(server):
    server.signup("alice", "bob", "carol")
    server.send(ALICE, "survive challenge alice alice-pw bob carol -deadline=1d")
    began = server.clock
    assert deadline_part(shown(server, game="survive"))[:1] == [
        f"Next deadline: {when(began + DAY)} (round 1 search)."]
    alive(server, began)
    assert alive(server, began + 10 * DAY) == 10 * DAY
    assert run_due(server.sessions, server.config, began + 10 * DAY) == 0
    assert deadline_part(shown(server, game="survive"))[:1] == [
        f"Next deadline: {when(began + 11 * DAY)} (round 1 search)."]


def test_a_reminder_after_downtime_names_when_the_turn_began(server):
    """The clock is pushed back, but bob's turn still began when alice moved."""
    turn = bobs_turn(server)
    alive(server, turn)
    alive(server, turn + 10 * DAY)
    nagged = wait_until(server, turn + 12 * DAY)
    assert [r.subject for r in nagged] == ["Nag: Super-Wari Board 101 bob"]
    assert deadline_part(body_of(nagged[0]))[0] == f"Reminder: it has been bob's turn since {when(turn)}."


def test_downtime_after_a_vacation_keeps_the_vacation(server):
    """bob was away one day of his turn; then the server is down two days: his forfeit,
    due 6 days after his turn began, is due 8 days after it."""
    turn = bobs_turn(server)
    wait_until(server, turn + DAY - MINUTE)
    vacation(server, BOB, "bob", "1")  # away from turn + 1 day to turn + 2 days
    assert deadline_part(shown(server)) == [forfeits("bob", turn + 6 * DAY),
                                            f"On vacation: bob until {when(turn + 2 * DAY)}."]
    assert alive(server, turn + 3 * DAY - HOUR) is None  # the server's first sign of life
    assert alive(server, turn + 5 * DAY - HOUR) == 2 * DAY
    server.clock = turn + 5 * DAY - HOUR
    assert deadline_part(shown(server)) == [forfeits("bob", turn + 8 * DAY)]


# --- replay and tick ----------------------------------------------------------------------


def test_replay_with_jumping_dates_nags_and_forfeits_the_same_every_time(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    for name in ("PBMSERV_SERVER_SEED", "PBMSERV_DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    began = datetime(2026, 11, 1, 9, 0, tzinfo=timezone.utc)
    challenged = began + 2 * MINUTE
    box = write_mbox(tmp_path / "late.mbox", [
        mail(ALICE, "signup alice alice-secret", "", began, 1),
        mail(BOB, "signup bob bob-secret", "", began + MINUTE, 2),
        mail(ALICE, f"superwari challenge alice alice-secret bob {CLOCKS}", "", challenged, 3),
        mail(BOB, "superwari show 101", "", began + 3 * DAY, 4),
        mail(BOB, "superwari show 101", "", began + 6 * DAY, 5),
    ])
    assert main(["replay", str(box), "--outbox", "first"]) == 0
    assert main(["replay", str(box), "--outbox", "second"]) == 0
    assert capsys.readouterr().out.count(
        "Replayed 5 mails: 5 answered, 0 ignored (loop rules), 0 duplicates, 0 failed.\n9 replies written to ") == 2
    sent = [(m["To"], m["Subject"], m["Date"], plain(m))
            for m in maildir_messages(tmp_path / "first")]
    naive = challenged.replace(tzinfo=None)
    assert [(to, subject, date) for to, subject, date, _body in sent] == [
        (ALICE, "pbmserv signup", "Sun, 01 Nov 2026 09:00:00 +0000"),
        (BOB, "pbmserv signup", "Sun, 01 Nov 2026 09:01:00 +0000"),
        (ALICE, "New Super-Wari Board 101 alice", "Sun, 01 Nov 2026 09:02:00 +0000"),
        (BOB, "New Super-Wari Board 101 alice", "Sun, 01 Nov 2026 09:02:00 +0000"),
        (ALICE, "Nag: Super-Wari Board 101 alice", "Tue, 03 Nov 2026 09:02:00 +0000"),
        (BOB, "Super-Wari Board 101 alice", "Wed, 04 Nov 2026 09:00:00 +0000"),
        (ALICE, "Super-Wari Board 101", "Fri, 06 Nov 2026 09:02:00 +0000"),
        (BOB, "Super-Wari Board 101", "Fri, 06 Nov 2026 09:02:00 +0000"),
        (BOB, "Super-Wari Board 101", "Sat, 07 Nov 2026 09:00:00 +0000"),
    ]
    assert sent[4][3].startswith(board("It is alice's turn.", [
        f"Reminder: it has been alice's turn since {when(naive)}.", "Next move: #1", forfeits("alice", naive + 5 * DAY)],
        START_ALICE))
    assert sent[7][3].startswith(board("Game won by bob.", ["alice forfeited: no move for 5 days."], START_BOB,
                                       "  alice       bob\n  #1 forfeit\n"))
    first, second = outbox(tmp_path / "first"), outbox(tmp_path / "second")
    assert len(first) == 9 and first == second


def outbox(path) -> dict[str, bytes]:
    """The files of a Maildir's new/ by name: byte for byte, since replay's fixed seed
    also fixes the instance token in every Message-ID (and so in the file names)."""
    return {file.name: file.read_bytes() for file in (path / "new").iterdir()}


def test_tick_fires_a_forfeit_that_is_due_now(server, tmp_path, monkeypatch, capsys):
    for name in [name for name in os.environ if name.startswith("PBMSERV_")]:
        monkeypatch.delenv(name)
    bobs_turn(server)
    now = datetime.now(timezone.utc).replace(tzinfo=None)
    since = now - 6 * DAY  # bob's turn began 6 days before this test: reminded and forfeited by now
    with server.sessions.begin() as session:
        record = find_game(session, "superwari", 101)
        record.clocks = {"1": {"since": since.isoformat(), "nagged": False}}
        set_due(record)
    config = tmp_path / "pbmserv.toml"
    config.write_text(f'[database]\nurl = "{server.config.database.url}"\n\n'
                      f'[outbound]\ntransport = "maildir"\nmaildir = "{tmp_path / "outbox"}"\n')
    assert main(["tick", "--config", str(config)]) == 0
    assert capsys.readouterr().out == "2 deadlines passed; 0 robot moves played; 3 replies delivered.\n"
    sent = maildir_messages(tmp_path / "outbox")
    assert [(m["To"], m["Subject"]) for m in sent] == [
        (BOB, "Nag: Super-Wari Board 101 bob"), (ALICE, "Super-Wari Board 101"), (BOB, "Super-Wari Board 101")]
    assert [plain(m).split("\n\n")[1] for m in sent[1:]] == [
        "Game won by alice.\nbob forfeited: no move for 5 days."] * 2
    assert record_of(server)["moves"][-1] == (2, 1, "forfeit", "forfeit", since + 5 * DAY)
    assert main(["tick", "--config", str(config)]) == 0
    assert capsys.readouterr().out == "0 deadlines passed; 0 robot moves played; 0 replies delivered.\n"
