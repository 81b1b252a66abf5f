"""`GAME rematch BOARD USERID PASSWORD` (commands/challenges.py): once a board is
over, a new one with the same players and parameters, seats rotated one on; the
others get a new-board mail saying who asked and may decline it (the one who asked,
wherever they sit, started it and may not); refuse and limit apply as to challenges."""

from __future__ import annotations

from sqlalchemy import select

from conftest import body_of
from pbmserv.store.models import GameRecord

ALICE, BOB, CAROL = "alice@example.org", "bob@example.org", "carol@example.org"


def board(server, number: int, game: str = "superwari") -> tuple[list[str], dict, str, int, int]:
    with server.sessions() as session:
        record = session.scalar(select(GameRecord).where(GameRecord.game_type == game, GameRecord.board == number))
        return ([seat.user.userid for seat in record.seats], record.params, record.status, record.nag_after,
                record.forfeit_after)


def finished(server, params: str = "-pits=5 -stones=2 -nagtime=2d -forfeittime=9d"):
    server.signup("alice", "bob", "carol")
    server.send(ALICE, f"superwari challenge alice alice-pw bob {params}")
    server.send(BOB, "superwari resign 101 bob bob-pw")
    return server


def test_a_rematch_rotates_the_seats_and_keeps_the_parameters(server):
    finished(server)
    replies = server.send(BOB, "superwari rematch 101 bob bob-pw", "Again!")
    assert sorted((r.to[0], r.subject) for r in replies) == [
        (ALICE, "New Super-Wari Board 102 bob **"), (BOB, "New Super-Wari Board 102 bob **")]
    assert board(server, 102) == (["bob", "alice"], board(server, 101)[1], "active", 2 * 86400, 9 * 86400)
    alice = body_of(next(r for r in replies if r.to == [ALICE]))
    assert ("bob asked for a rematch of Super-Wari board 101. Move, or decline:\n"
            "  superwari decline 102 alice PASSWORD\n") in alice
    assert "\nbob writes:\nAgain!\n" in alice


def test_who_asked_started_the_board_and_the_other_may_decline(server):
    finished(server)
    server.send(ALICE, "superwari rematch 101 alice alice-pw")  # alice moves to the second seat
    assert board(server, 102)[0] == ["bob", "alice"]
    refused = server.one(ALICE, "superwari decline 102 alice alice-pw")
    assert body_of(refused).startswith("alice started Super-Wari board 102, so cannot decline it.\n")
    server.send(BOB, "superwari decline 102 bob bob-pw")
    assert board(server, 102)[2] == "finished"


def test_a_running_board_has_no_rematch_and_strangers_none_at_all(server):
    server.signup("alice", "bob", "carol")
    server.send(ALICE, "superwari challenge alice alice-pw bob")
    reply = server.one(ALICE, "superwari rematch 101 alice alice-pw")
    assert body_of(reply).startswith(
        "Super-Wari board 101 is still running: a rematch comes after its end.\n"
        "To end it now, send: superwari resign 101 alice PASSWORD\n")
    server.send(BOB, "superwari resign 101 bob bob-pw")
    stranger = server.one(CAROL, "superwari rematch 101 carol carol-pw")
    assert body_of(stranger).startswith("carol does not play on Super-Wari board 101; its players are alice, bob.\n")
    with server.sessions() as session:
        assert session.scalar(select(GameRecord).where(GameRecord.board == 102)) is None


def test_refuse_applies_to_a_rematch(server):
    finished(server)
    server.one(BOB, "superwari refuse bob bob-pw")
    reply = server.one(ALICE, "superwari rematch 101 alice alice-pw")
    assert body_of(reply).startswith("bob does not accept challenges of Super-Wari.\n")


def test_a_three_player_rematch_moves_everyone_one_seat_on(server):
    server.signup("alice", "bob", "carol")
    server.send(ALICE, "survive challenge alice alice-pw bob carol")
    for sender, userid in ((ALICE, "alice"), (BOB, "bob"), (CAROL, "carol")):
        server.send(sender, f"survive resign 101 {userid} {userid}-pw")
    assert board(server, 101, "survive")[2] == "finished"
    replies = server.send(CAROL, "survive rematch 101 carol carol-pw")
    assert sorted(r.to[0] for r in replies) == [ALICE, BOB, CAROL]
    assert board(server, 102, "survive")[0] == ["bob", "carol", "alice"]
