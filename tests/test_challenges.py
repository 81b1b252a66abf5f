"""Challenges a player turns down (issue 9): `GAME decline` before one's first move,
and `GAME refuse`, `GAME welcome`, `GAME limit` for what challenges a player accepts.
Replies and errors are compared as whole text; after each error the database shows
that nothing changed. One mailbox goes through `pbmserv replay`, one game through a
real `serve`."""

from __future__ import annotations

import mailbox
from datetime import datetime, timedelta, timezone

import pytest
from conftest import body_of, maildir_messages, sent, plain
from mailgen import mail, write_mbox
from sqlalchemy import func, select
from test_smtp import RunningServer

from pbmserv.cli import main
from pbmserv.store.models import GameRecord, Preference, Rating, User
from pbmserv.store.repo import find_game

ALICE = "alice@example.org"
BOB = "bob@example.org"
CAROL = "carol@example.org"
MASK = "********"


def error(problem: str, instead: str, quoted: str, board: str = "") -> str:
    text = f"{problem}\n{instead}\n"
    if board:
        text += "\n" + board
    return text + f"\nYour message:\n{quoted}\n"


def drawing(top: str, bottom: str, top_row=(3,) * 8, bottom_row=(3,) * 8) -> str:
    """A Super-Wari board: `top_row` as the top player reads it from the left (h..a)."""
    border = "+" + "----+" * 8
    return ("   h    g    f    e    d    c    b    a\n" + border + "\n"
            + "|" + "".join(f" {s:2d} |" for s in top_row) + f"   {top}\n" + border + "\n"
            + "|" + "".join(f" {s:2d} |" for s in bottom_row) + f"   {bottom}\n" + border + "\n"
            + "   a    b    c    d    e    f    g    h\nCaptured: alice 0, bob 0\n")


AFTER_C = [3, 3, 0, 4, 4, 4, 3, 3]  # alice's row a..h after her c
ONE_MOVE = "  alice  bob\n  #1 c\n"
WRONG_BOB = ("Send the command again with your password (passwords are case-sensitive).\n"
             "4 tries left: after 5 wrong passwords in an hour, commands with a password are\n"
             "refused for an hour.\nIf you forgot your password, send: forgot bob")


def board(status: str, top: str, bottom: str, top_row=(3,) * 8, bottom_row=(3,) * 8, moves: str = "",
          extra: str = "", comments: str = "") -> str:
    text = f"Summary of Super-Wari Board 101\n\n{status}\n{extra}"
    if moves:
        text += "\n" + moves
    text += "\n" + drawing(top, bottom, top_row, bottom_row)
    return text + (f"\n{comments}" if comments else "")


def record_of(server, game_type: str = "superwari", number: int = 101) -> tuple:
    """(status, result, moves as (seat, kind), due_at) of a board."""
    with server.sessions() as session:
        record = find_game(session, game_type, number)
        return record.status, record.result, [(m.seat, m.kind) for m in record.moves], record.due_at


def preferences(server) -> list[tuple[str, str, bool, int | None]]:
    with server.sessions() as session:
        rows = session.scalars(select(Preference).order_by(Preference.id)).all()
        return [(session.get(User, r.user_id).userid, r.game_type, r.refuse, r.limit)
                for r in rows]


def game_count(server) -> int:
    with server.sessions() as session:
        return session.scalar(select(func.count(GameRecord.id)))


@pytest.fixture
def played(server):
    """alice challenged bob on Super-Wari board 101 (mail 4) and played c (mail 5)."""
    server.signup("alice", "bob", "carol")
    server.send(ALICE, "superwari challenge alice alice-pw bob")
    server.send(ALICE, "superwari move 101 alice alice-pw c")
    return server


# --- decline ---------------------------------------------------------------------------


def test_decline_before_the_first_move_ends_the_board_with_no_result(played):
    replies = played.send(BOB, "superwari decline 101 bob bob-pw", "Sorry, no time this month.\n")
    over = "Game declined by bob: no result."
    moves = ONE_MOVE
    comment = "bob writes:\nSorry, no time this month.\n"
    assert [(r.subject, r.to, body_of(r)) for r in replies] == [
        ("Super-Wari Board 101 **", [ALICE], board(over, "bob", "alice", bottom_row=AFTER_C, moves=moves,
                                                   comments=comment)),
        ("Super-Wari Board 101 **", [BOB], board(over, "alice", "bob", top_row=AFTER_C[::-1], moves=moves,
                                                 comments=comment)),
    ]
    assert record_of(played) == ("finished", over, [(0, "move")], None)
    with played.sessions() as session:  # a decline is not rated
        assert session.scalar(select(func.count(Rating.id))) == 0
    # the board stays over, for everyone to see
    show = played.one(CAROL, "superwari show 101")
    assert (show.subject, body_of(show)) == ("Super-Wari Board 101",
                                             board(over, "bob", "alice", bottom_row=AFTER_C, moves=moves))


def test_decline_before_anyone_moved(server):
    server.signup("alice", "bob")
    server.send(BOB, "superwari challenge bob bob-pw alice")
    replies = server.send(ALICE, "Superwari DECLINE 101 alice alice-pw")
    assert [(r.subject, r.to) for r in replies] == [("Super-Wari Board 101", [BOB]), ("Super-Wari Board 101", [ALICE])]
    assert body_of(replies[1]).split("\n")[:3] == ["Summary of Super-Wari Board 101", "",
                                                   "Game declined by alice: no result."]
    assert record_of(server) == ("finished", "Game declined by alice: no result.", [], None)


DECLINE_ERRORS = [
    # (sender, command, problem, instead, whether the error shows the board)
    (BOB, "superwari decline 101 bob alice-pw", "Wrong password for bob.", WRONG_BOB, True),
    (CAROL, "superwari decline 101 carol carol-pw",
     "carol does not play on Super-Wari board 101; its players are alice, bob.",
     "Check the board number and the userid.", True),
    (ALICE, "superwari decline 101 alice alice-pw", "alice started Super-Wari board 101, so cannot decline it.",
     "To give the game up, send: superwari resign 101 alice PASSWORD", True),
    (BOB, "superwari decline 102 bob bob-pw", "There is no Super-Wari board 102.",
     "Send 'superwari games' for the boards.", False),
    (BOB, "superwari decline x bob bob-pw", "'x' is not a board number.",
     "Board numbers are whole numbers such as 101; send 'superwari games' for the\nboards.", False),
    (BOB, "superwari decline 101 bob", "superwari decline: too few words for this command.",
     "Send: superwari decline BOARD USERID PASSWORD", False),
]
# the board as alice and the public see it (alice at the bottom), bob to move
BOB_TO_MOVE = board("It is bob's turn.", "bob", "alice", bottom_row=AFTER_C, moves=ONE_MOVE,
                    extra=f"Next move: #2\nbob forfeits if no move by {sent(5) + timedelta(days=21):%Y-%m-%d %H:%M} UTC.\n")


@pytest.mark.parametrize("sender, command, problem, instead, shown", DECLINE_ERRORS)
def test_decline_errors_change_nothing(played, sender, command, problem, instead, shown):
    reply = played.one(sender, command)
    words = command.split()
    quoted = " ".join(words[:4] + [MASK] * (len(words) > 4))
    subject = "Super-Wari Board 101 Error" if shown else "Super-Wari error"
    assert (reply.subject, reply.to, body_of(reply)) == (
        subject, [sender], error(problem, instead, f"> Subject: {quoted}", BOB_TO_MOVE if shown else ""))
    assert record_of(played)[:3] == ("active", "", [(0, "move")])


def test_decline_after_ones_first_move_is_too_late(played):
    played.send(BOB, "superwari move 101 bob bob-pw c")
    reply = played.one(BOB, "superwari decline 101 bob bob-pw")
    assert reply.subject == "Super-Wari Board 101 Error"
    assert body_of(reply).split("\n")[:4] == [
        "bob has moved on Super-Wari board 101, so it is too late to decline it.",
        "To give the game up, send: superwari resign 101 bob PASSWORD", "", "Summary of Super-Wari Board 101"]
    assert record_of(played)[:3] == ("active", "", [(0, "move"), (1, "move")])


def test_decline_on_a_finished_board(played):
    played.send(BOB, "superwari decline 101 bob bob-pw")
    reply = played.one(BOB, "superwari decline 101 bob bob-pw")
    over = "Game declined by bob: no result."
    assert (reply.subject, body_of(reply)) == ("Super-Wari Board 101 Error", error(
        f"Super-Wari board 101 is over: {over}",
        "Start a new game with: superwari challenge USERID PASSWORD OPPONENT",
        f"> Subject: superwari decline 101 bob {MASK}",
        board(over, "alice", "bob", top_row=AFTER_C[::-1], moves=ONE_MOVE)))
    # nor can a resigned game be declined afterwards
    played.send(ALICE, "superwari challenge alice alice-pw bob")
    played.send(ALICE, "superwari resign 102 alice alice-pw")
    reply = played.one(BOB, "superwari decline 102 bob bob-pw")
    assert body_of(reply).split("\n")[0] == "Super-Wari board 102 is over: Game won by bob."


# --- decline in Survive: the game goes on without the player ------------------------------


@pytest.fixture
def survive(server):
    """alice challenged bob and carol to Survive board 101 (mail 4)."""
    server.signup("alice", "bob", "carol")
    server.send(ALICE, "survive challenge alice alice-pw bob carol")
    return server


SURVIVE_AFTER_BOB = f"""\
Summary of Survive Board 101

Waiting for: alice, carol.
bob declined and left the game.
Next move: #2
Next deadline: {sent(4) + timedelta(days=3):%Y-%m-%d %H:%M} UTC (round 1 search).

Survive, round 1: search phase (deadline 3d from its start).
Send your sealed order: search [stock CARDS] [discard CARDS].

Player  Lives  Hand  Beasts  Order  Stockpile
alice   3      5     0       -      -
bob     resigned
carol   3      5     0       -      -

Deck: 85 cards. Trash pile: 5 cards (1 F, 1 W, 1 S, 2 B).
Search order: carol, alice.

Round 1:
  bob resigned; 5 cards went to the trash.

bob writes:
Count me out.
"""


def test_survive_goes_on_without_a_player_who_declines(survive):
    replies = survive.send(BOB, "survive decline 101 bob bob-pw", "Count me out.")
    assert [(r.subject, r.to) for r in replies] == [("Survive Board 101 ALL **", [ALICE]),
                                                    ("Survive Board 101 ALL **", [BOB]),
                                                    ("Survive Board 101 ALL **", [CAROL])]
    hand_line = "\nYour hand (alice): W S S B B  (W Water, S Shelter, B Beast)\n"
    assert body_of(replies[0]) == SURVIVE_AFTER_BOB.replace("\nbob writes:", hand_line + "\nbob writes:")
    assert "\nYour hand (bob): empty\n" in body_of(replies[1])
    status, result, moves, due = record_of(survive, "survive")
    assert (status, result, moves, due) == ("active", "", [(1, "resign")], sent(4) + timedelta(days=3))
    # bob is gone: he cannot decline twice
    reply = survive.one(BOB, "survive decline 101 bob bob-pw")
    assert (reply.subject, body_of(reply).split("\n")[:2]) == ("Survive Board 101 Error", [
        "bob has left Survive board 101 already.", "Send 'survive games bob' for your boards."])
    # with two players left, a decline ends the board with no result, unrated
    replies = survive.send(CAROL, "survive decline 101 carol carol-pw")
    assert [(r.subject, r.to) for r in replies] == [("Survive Board 101", [ALICE]), ("Survive Board 101", [BOB]),
                                                    ("Survive Board 101", [CAROL])]
    assert body_of(replies[2]).split("\n")[:4] == ["Summary of Survive Board 101", "",
                                                   "Game declined by carol: no result.", ""]
    assert record_of(survive, "survive") == ("finished", "Game declined by carol: no result.", [(1, "resign")], None)


def test_survive_decline_after_a_search_order_is_too_late(survive):
    survive.send(CAROL, "survive move 101 carol carol-pw search")
    reply = survive.one(CAROL, "survive decline 101 carol carol-pw")
    assert body_of(reply).split("\n")[:2] == [
        "carol has moved on Survive board 101, so it is too late to decline it.",
        "To give the game up, send: survive resign 101 carol PASSWORD"]
    assert record_of(survive, "survive")[:3] == ("active", "", [(2, "move")])


# --- refuse and welcome ------------------------------------------------------------------------

REFUSED = """\
bob refuses all challenges of Super-Wari from now on.
Limit: none.

To accept challenges again, send: superwari welcome bob PASSWORD
To change the limit, send: superwari limit bob PASSWORD N (or none)
"""

WELCOME = """\
bob accepts challenges of Super-Wari from now on.
Limit: none.

To refuse all challenges, send: superwari refuse bob PASSWORD
To change the limit, send: superwari limit bob PASSWORD N (or none)
"""


def test_refuse_and_welcome_round_trip(server):
    server.signup("alice", "bob", "carol")
    reply = server.one(BOB, "superwari refuse bob bob-pw")
    assert (reply.subject, reply.to, body_of(reply)) == ("Super-Wari refuse", [BOB], REFUSED)
    assert preferences(server) == [("bob", "superwari", True, None)]
    reply = server.one(ALICE, "superwari challenge alice alice-pw bob")
    assert (reply.subject, reply.to, body_of(reply)) == ("Super-Wari error", [ALICE], error(
        "bob does not accept challenges of Super-Wari.",
        "Challenge someone else, or ask bob (message USERID PASSWORD bob) to send:\n"
        "  superwari welcome bob PASSWORD",
        f"> Subject: superwari challenge alice {MASK} bob"))
    assert game_count(server) == 0
    # bob's own challenges go on, and other games are not refused
    assert [r.subject for r in server.send(BOB, "superwari challenge bob bob-pw alice")] == [
        "New Super-Wari Board 101 bob"] * 2
    assert [r.subject for r in server.send(ALICE, "wari challenge alice alice-pw bob")] == [
        "New Wari Board 101 alice"] * 2
    reply = server.one(BOB, "SuperWari Welcome bob bob-pw")
    assert (reply.subject, reply.to, body_of(reply)) == ("Super-Wari welcome", [BOB], WELCOME)
    assert preferences(server) == []  # back to the defaults: no row
    assert [r.subject for r in server.send(ALICE, "superwari challenge alice alice-pw bob")] == [
        "New Super-Wari Board 102 alice"] * 2


def test_a_refusal_names_the_refusing_one_of_several_opponents(server):
    server.signup("alice", "bob", "carol")
    server.send(CAROL, "survive refuse carol carol-pw")
    reply = server.one(ALICE, "survive challenge alice alice-pw bob carol")
    assert body_of(reply).split("\n")[0] == "carol does not accept challenges of Survive."
    assert game_count(server) == 0


@pytest.mark.parametrize("setup, command, problem, instead", [
    ("superwari refuse bob bob-pw", "superwari refuse bob bob-pw", "bob refuses challenges of Super-Wari already.",
     "To accept them again, send: superwari welcome bob PASSWORD"),
    ("", "superwari welcome bob bob-pw", "bob accepts challenges of Super-Wari already.",
     "To refuse them all, send: superwari refuse bob PASSWORD"),
    ("superwari limit bob bob-pw 2", "superwari welcome bob bob-pw", "bob accepts challenges of Super-Wari already.",
     "To refuse them all, send: superwari refuse bob PASSWORD"),
    ("", "superwari refuse bob alice-pw", "Wrong password for bob.", WRONG_BOB),
    ("", "superwari refuse bob bob-pw now", "superwari refuse: too many words for this command.",
     "Send: superwari refuse USERID PASSWORD"),
])
def test_refuse_and_welcome_errors_change_nothing(server, setup, command, problem, instead):
    server.signup("alice", "bob")
    if setup:
        server.send(BOB, setup)
    before = preferences(server)
    reply = server.one(BOB, command)
    words = command.split()
    quoted = " ".join(words[:3] + [MASK] + words[4:])
    assert (reply.subject, reply.to, body_of(reply)) == (
        "Super-Wari error", [BOB], error(problem, instead, f"> Subject: {quoted}"))
    assert preferences(server) == before


# --- limit ---------------------------------------------------------------------------------------


def limited(n: int, now: int, refused: bool = False) -> str:
    first = ("bob refuses all challenges of Super-Wari from now on.\n" if refused
             else "bob accepts challenges of Super-Wari from now on.\n")
    to = ("To accept challenges again, send: superwari welcome bob PASSWORD\n" if refused
          else "To refuse all challenges, send: superwari refuse bob PASSWORD\n")
    boards = f"{n} running Super-Wari board{'' if n == 1 else 's'}"
    # filled to 78 columns: the line breaks before 'now' (n and now are single digits here)
    return (f"{first}Limit: at most {boards} that others started (bob plays {now}\nnow).\n\n"
            f"{to}To change the limit, send: superwari limit bob PASSWORD N (or none)\n")


def test_limit_round_trip(server):
    server.signup("alice", "bob", "carol")
    reply = server.one(BOB, "superwari limit bob bob-pw 1")
    assert (reply.subject, reply.to, body_of(reply)) == ("Super-Wari limit", [BOB], limited(1, 0))
    assert preferences(server) == [("bob", "superwari", False, 1)]
    assert [r.subject for r in server.send(ALICE, "superwari challenge alice alice-pw bob")] == [
        "New Super-Wari Board 101 alice"] * 2
    reply = server.one(CAROL, "superwari challenge carol carol-pw bob")
    assert (reply.subject, reply.to, body_of(reply)) == ("Super-Wari error", [CAROL], error(
        "bob plays 1 running Super-Wari board that others started (limit: 1).",
        "Wait until one of them ends ('superwari games bob' lists them), or challenge\nsomeone else.",
        f"> Subject: superwari challenge carol {MASK} bob"))
    assert game_count(server) == 1
    # bob's own challenges are never limited, and do not count
    assert [r.subject for r in server.send(BOB, "superwari challenge bob bob-pw carol")] == [
        "New Super-Wari Board 102 bob"] * 2
    reply = server.one(BOB, "superwari limit bob bob-pw 3")
    assert body_of(reply) == limited(3, 1)
    # once a board others started is over, there is room again
    server.send(BOB, "superwari limit bob bob-pw 1")
    server.send(BOB, "superwari decline 101 bob bob-pw")
    assert [r.subject for r in server.send(CAROL, "superwari challenge carol carol-pw bob")] == [
        "New Super-Wari Board 103 carol"] * 2
    reply = server.one(BOB, "superwari limit bob bob-pw NONE")
    assert (reply.subject, body_of(reply)) == ("Super-Wari limit", WELCOME)
    assert preferences(server) == []


def test_refuse_and_welcome_keep_the_limit(server):
    server.signup("alice", "bob")
    server.send(BOB, "superwari limit bob bob-pw 2")
    assert body_of(server.one(BOB, "superwari refuse bob bob-pw")) == limited(2, 0, refused=True)
    assert preferences(server) == [("bob", "superwari", True, 2)]
    assert body_of(server.one(BOB, "superwari limit bob bob-pw 5")) == limited(5, 0, refused=True)
    assert preferences(server) == [("bob", "superwari", True, 5)]
    assert body_of(server.one(BOB, "superwari welcome bob bob-pw")) == limited(5, 0)
    assert preferences(server) == [("bob", "superwari", False, 5)]
    server.send(BOB, "wari refuse bob bob-pw")  # one row per game type
    assert preferences(server) == [("bob", "superwari", False, 5), ("bob", "wari", True, None)]


USAGE = "Send: superwari limit bob PASSWORD N, with N from 1 to 999, or none"


@pytest.mark.parametrize("setup, word, problem, instead", [
    ("", "0", "A limit of 0 would refuse every challenge.", "To refuse them all, send: superwari refuse bob PASSWORD"),
    ("", "1000", "The limit must be from 1 to 999, not 1000.", USAGE),
    ("", "-1", "'-1' is not a limit.", USAGE),
    ("", "many", "'many' is not a limit.", USAGE),
    ("", "none", "bob has no limit on challenges of Super-Wari already.", "Nothing was changed."),
    ("superwari limit bob bob-pw 4", "4", "bob has a limit of 4 on challenges of Super-Wari already.",
     "Nothing was changed."),
])
def test_limit_errors_change_nothing(server, setup, word, problem, instead):
    server.signup("bob")
    if setup:
        server.send(BOB, setup)
    before = preferences(server)
    reply = server.one(BOB, f"superwari limit bob bob-pw {word}")
    assert (reply.subject, reply.to, body_of(reply)) == (
        "Super-Wari error", [BOB], error(problem, instead, f"> Subject: superwari limit bob {MASK} {word}"))
    assert preferences(server) == before


def test_help_on_the_new_commands(server):
    reply = server.one(ALICE, "help decline")
    assert body_of(reply) == (
        "GAME decline BOARD USERID PASSWORD\n"
        "    call off a game you were challenged to, before your first move\n\n"
        "A two-player board ends with no result and is not rated; where the game goes\n"
        "on without you (Survive with three or more players left), you leave it.\n"
        "The challenger, and a player who has moved, resign instead.\n")
    reply = server.one(ALICE, "help limit")
    assert body_of(reply).split("\n")[:2] == [
        "GAME limit USERID PASSWORD N|none",
        "    accept challenges only while you play fewer than N boards others started"]


# --- by mail, end to end -------------------------------------------------------------------------


def mails_of(lines: list[tuple[str, str, str]]) -> list:
    clock = datetime(2026, 11, 1, 9, 0, tzinfo=timezone.utc)
    return [mail(f"{userid}@example.org", subject, body, clock + timedelta(minutes=10 * i), i + 1)
            for i, (userid, subject, body) in enumerate(lines)]


SESSION = [
    ("alice", "signup alice alice-secret", ""),
    ("bob", "signup bob bob-secret", ""),
    ("bob", "superwari refuse bob bob-secret", ""),
    ("alice", "superwari challenge alice alice-secret bob", ""),
    ("bob", "superwari welcome bob bob-secret", ""),
    ("alice", "superwari challenge alice alice-secret bob", "Good luck!\n"),
    ("bob", "Re: New Super-Wari Board 101 alice", "superwari decline 101 bob bob-secret\n\nMaybe next month.\n"),
]
SESSION_SUBJECTS = ["pbmserv signup", "pbmserv signup", "Super-Wari refuse", "Super-Wari error", "Super-Wari welcome",
                    "New Super-Wari Board 101 alice **", "New Super-Wari Board 101 alice **",
                    "Super-Wari Board 101 **", "Super-Wari Board 101 **"]


def test_refuse_welcome_and_decline_through_replay(tmp_path, monkeypatch, capsys, serve_url):
    monkeypatch.chdir(tmp_path)
    for name in ("PBMSERV_SERVER_SEED", "PBMSERV_DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    box = write_mbox(tmp_path / "challenges.mbox", mails_of(SESSION))
    url = serve_url
    assert main(["replay", str(box), "--db", url, "--outbox", "out"]) == 0
    assert "Replayed 7 mails: 7 answered, 0 ignored (loop rules), 0 duplicates, 0 failed." in capsys.readouterr().out
    out = maildir_messages(tmp_path / "out")
    assert [m["Subject"] for m in out] == SESSION_SUBJECTS
    text = [plain(m) for m in out]
    assert text[3].startswith("bob does not accept challenges of Super-Wari.\n")
    assert out[8]["To"] == "bob@example.org"
    assert "\nGame declined by bob: no result.\n" in text[8] and "bob writes:\nMaybe next month.\n" in text[8]
    assert len(mailbox.mbox(str(box))) == 7


def test_decline_through_a_running_server(tmp_path, serve_url):
    running = RunningServer(tmp_path, url=serve_url)
    try:
        for message in mails_of(SESSION):
            running.send(message)
        replies = running.replies(len(SESSION_SUBJECTS))
        assert [r["Subject"] for r in replies] == SESSION_SUBJECTS
        assert [r["To"] for r in replies[-2:]] == [ALICE, BOB]
        with running.sessions() as session:
            record = find_game(session, "superwari", 101)
            assert (record.status, record.result, record.moves) == ("finished", "Game declined by bob: no result.", [])
            assert session.scalar(select(func.count(Preference.id))) == 0
    finally:
        running.stop()
