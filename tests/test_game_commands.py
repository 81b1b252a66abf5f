"""Game commands by mail on Super-Wari and Wari (DESIGN.md §2, §3): help, challenge,
move (with the #N guard), show, showas, resign, games, and one whole game played by mail.
Every board mail and error is compared as whole text; after each error a `show` proves
that nothing changed."""

from __future__ import annotations

import random
import shutil
import sqlite3
import tempfile
from datetime import datetime, timedelta

import pytest
from conftest import CLOCK_START, FAST_DIR, Server, body_of, drawing, sent
from sqlalchemy import func, select

from pbmserv.games import get_game
from pbmserv.play import replay
from pbmserv.store.models import GameRecord
from pbmserv.store.repo import find_game

ALICE = "alice@example.org"
BOB = "bob@example.org"
CAROL = "carol@example.org"
MASK = "********"

FORFEIT_TIME = timedelta(days=21)  # the default -forfeittime


def forfeits(userid: str, turn_began: datetime, after: timedelta = FORFEIT_TIME) -> str:
    """A running board's line for a player the server waits for."""
    return f"{userid} forfeits if no move by {turn_began + after:%Y-%m-%d %H:%M} UTC."


def summary(status: str, board: str, moves: str = "", note: str = "", comments: str = "",
            title: str = "Super-Wari", number: int = 101, deadline: str = "", next_move: int = 0) -> str:
    """A board mail's text: summary line, status, [note], [next move], [deadline], [recent
    moves], board, [comments]."""
    text = f"Summary of {title} Board {number}\n\n{status}\n"
    if note:
        text += note + "\n"
    if next_move:
        text += f"Next move: #{next_move}\n"
    if deadline:
        text += deadline + "\n"
    if moves:
        text += "\n" + moves
    text += "\n" + board
    if comments:
        text += "\n" + comments
    return text


def challenged(challenger: str, userid: str, title: str = "Super-Wari", game: str = "superwari") -> str:
    """The note of a new board's mail to a challenged player who is not to move."""
    return (f"{challenger} challenged you to {title}. Move, or decline:\n"
            f"  {game} decline 101 {userid} PASSWORD\n"
            "Once it is your turn, a reply to this mail with just your move plays it.")


def wrong_password(userid: str) -> str:
    """What to do after a first wrong password (4 more before the hour's lock)."""
    return ("Send the command again with your password (passwords are case-sensitive).\n"
            "4 tries left: after 5 wrong passwords in an hour, commands with a password are\n"
            f"refused for an hour.\nIf you forgot your password, send: forgot {userid}")


def error(problem: str, instead: str, quoted: str, board: str = "") -> str:
    text = f"{problem}\n{instead}\n"
    if board:
        text += "\n" + board
    return text + f"\nYour message:\n{quoted}\n"


# The boards of a game between two fresh signups: the challenge is their server's 3rd
# mail, alice's first move the 4th; each player's forfeit clock starts with their turn.
START_ALICE = f"""\
Summary of Super-Wari Board 101

It is alice's turn.
Next move: #1
{forfeits("alice", sent(3))}

   h    g    f    e    d    c    b    a
+----+----+----+----+----+----+----+----+
|  3 |  3 |  3 |  3 |  3 |  3 |  3 |  3 |   bob
+----+----+----+----+----+----+----+----+
|  3 |  3 |  3 |  3 |  3 |  3 |  3 |  3 |   alice
+----+----+----+----+----+----+----+----+
   a    b    c    d    e    f    g    h
Captured: alice 0, bob 0

alice writes:
Good luck!
"""

START_BOB = f"""\
Summary of Super-Wari Board 101

It is alice's turn.
alice challenged you to Super-Wari. Move, or decline:
  superwari decline 101 bob PASSWORD
Once it is your turn, a reply to this mail with just your move plays it.
Next move: #1
{forfeits("alice", sent(3))}

   h    g    f    e    d    c    b    a
+----+----+----+----+----+----+----+----+
|  3 |  3 |  3 |  3 |  3 |  3 |  3 |  3 |   alice
+----+----+----+----+----+----+----+----+
|  3 |  3 |  3 |  3 |  3 |  3 |  3 |  3 |   bob
+----+----+----+----+----+----+----+----+
   a    b    c    d    e    f    g    h
Captured: alice 0, bob 0

alice writes:
Good luck!
"""

AFTER_C_ALICE = f"""\
Summary of Super-Wari Board 101

It is bob's turn.
Next move: #2
{forfeits("bob", sent(4))}

  alice  bob
  #1 c

   h    g    f    e    d    c    b    a
+----+----+----+----+----+----+----+----+
|  3 |  3 |  3 |  3 |  3 |  3 |  3 |  3 |   bob
+----+----+----+----+----+----+----+----+
|  3 |  3 |  0 |  4 |  4 |  4 |  3 |  3 |   alice
+----+----+----+----+----+----+----+----+
   a    b    c    d    e    f    g    h
Captured: alice 0, bob 0

alice writes:
Take that.
"""

AFTER_C_BOB = f"""\
Summary of Super-Wari Board 101

It is bob's turn.
Next move: #2
{forfeits("bob", sent(4))}

  alice  bob
  #1 c

   h    g    f    e    d    c    b    a
+----+----+----+----+----+----+----+----+
|  3 |  3 |  4 |  4 |  4 |  0 |  3 |  3 |   alice
+----+----+----+----+----+----+----+----+
|  3 |  3 |  3 |  3 |  3 |  3 |  3 |  3 |   bob
+----+----+----+----+----+----+----+----+
   a    b    c    d    e    f    g    h
Captured: alice 0, bob 0

alice writes:
Take that.
"""

# after alice c, bob c: the board from each side, and the public view (alice at the bottom)
ROWS_ALICE = ([3, 3, 4, 4, 4, 0, 3, 3], [3, 3, 0, 4, 4, 4, 3, 3])  # bob's row h..a, alice's row a..h
TWO_MOVES = "  alice  bob\n  #1 c   #2 c\n"
BOARD_2_ALICE = drawing("bob", ROWS_ALICE[0], "alice", ROWS_ALICE[1])
BOARD_2_BOB = drawing("alice", ROWS_ALICE[0], "bob", ROWS_ALICE[1])
GAME_TURN = sent(6)  # the `game` fixture: 3 signups, the challenge, c, and bob's c, after which alice is to move
SHOW_2 = summary("It is alice's turn.", BOARD_2_ALICE, TWO_MOVES, deadline=forfeits("alice", GAME_TURN), next_move=3)
SHOW_2_BOB = summary("It is alice's turn.", BOARD_2_BOB, TWO_MOVES, deadline=forfeits("alice", GAME_TURN),
                     next_move=3)


def opening(server) -> None:
    server.signup("alice", "bob", "carol")
    server.send(ALICE, "superwari challenge alice alice-pw bob")
    server.send(ALICE, "superwari move 101 alice alice-pw c")
    server.send(BOB, "superwari move 101 bob bob-pw c")


@pytest.fixture
def game(server, backend, game_template):
    """alice (South) against bob on Super-Wari board 101, after alice c and bob c
    (on SQLite played once per module, then copied into each test's fresh database)."""
    if backend != "sqlite":
        opening(server)
        return server
    path, count, clock = game_template
    source, target = sqlite3.connect(path), sqlite3.connect(database_path(server))
    try:
        source.backup(target)
    finally:
        source.close()
        target.close()
    server.count, server.clock = count, clock  # so Message-IDs and dates go on, not repeat
    return server


@pytest.fixture(scope="module")
def game_template(tmp_path_factory):
    directory = tempfile.mkdtemp(prefix="pbmserv-template-", dir=FAST_DIR)
    try:
        server = Server(tmp_path_factory.mktemp("template"), database={"url": f"sqlite:///{directory}/test.db"})
        opening(server)
        yield database_path(server), server.count, server.clock
        server.sessions.kw["bind"].dispose()
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def database_path(server) -> str:
    url = server.config.database.url
    assert url.startswith("sqlite:///")
    return url[len("sqlite:///"):]


def shown(server, command: str = "superwari show 101") -> str:
    reply = server.one(CAROL, command)
    return body_of(reply)


def move_count(server, game_type: str = "superwari", board: int = 101) -> int:
    with server.sessions() as session:
        return len(find_game(session, game_type, board).moves)


def game_count(server) -> int:
    with server.sessions() as session:
        return session.scalar(select(func.count(GameRecord.id)))


def assert_unchanged(server) -> None:
    assert move_count(server) == 2
    assert shown(server) == SHOW_2


def test_the_fake_clock_of_the_expectations(server, game_template):
    """The times above are those of conftest's clock and of the `game` template."""
    assert server.clock == CLOCK_START
    server.send(ALICE, "help")
    assert server.clock == sent(1)
    assert game_template[1:] == (6, GAME_TURN)


# --- help ---------------------------------------------------------------------------


def test_superwari_help(server):
    reply = server.one(ALICE, "superwari help")
    assert (reply.subject, reply.to) == ("Super-Wari help", [ALICE])
    text = body_of(reply)
    assert text.startswith("Help for Super-Wari\n\nSuper-Wari is Bill Taylor's Wari on a larger board")
    assert ("\n\nMoves: the letter of one of your own pits: c\nVotes, sent as moves and answered with accept or "
        "reject:\n  propose  a draw\n  undo     take back your last move\n\n") in text
    assert text.endswith(
        "Parameters, given to challenge as -name=value:\n"
        "  -pits=8 (4 to 10): pits on each side\n"
        "  -stones=3 (1 to 6): stones in each pit at the start\n"
        "  -nagtime=7d (1h to 365d): a reminder to a player who has not moved for this\n"
        "    long (off: none)\n"
        "  -forfeittime=21d (1h to 365d): a player who has not moved for this long\n"
        "    loses the game (off: never)\n"
        "\n"
        "Commands:\n"
        "  superwari help\n"
        "      the rules of the game and how to write a move\n"
        "  superwari challenge USERID PASSWORD OPPONENT ... [-NAME=VALUE ...]\n"
        "      start a game at once; you take the first seat\n"
        "  superwari move BOARD USERID PASSWORD MOVE [#N]\n"
        "      make your move, or vote (#N: only if it is the N-th move on the board)\n"
        "  superwari show BOARD[#N] [legal]\n"
        "      the board as all see it (#N: after N moves; legal: the legal moves)\n"
        "  superwari showas BOARD USERID PASSWORD\n"
        "      the board as you see it, with what only you may see\n"
        "  superwari resign BOARD USERID PASSWORD\n"
        "      give up the game\n"
        "  superwari games [USERID]\n"
        "      the running boards of this game (or of a player) and whose turn it is\n"
        "  superwari decline BOARD USERID PASSWORD\n"
        "      call off a game you were challenged to, before your first move\n"
        "  superwari rematch BOARD USERID PASSWORD\n"
        "      after a board's end: a new one with the same players, seats rotated\n"
        "  superwari refuse USERID PASSWORD\n"
        "      refuse every challenge of this game from now on\n"
        "  superwari welcome USERID PASSWORD\n"
        "      accept challenges of this game again after 'refuse'\n"
        "  superwari limit USERID PASSWORD N|none\n"
        "      accept challenges only while you play fewer than N boards others started\n"
        "  superwari match USERID PASSWORD PLAYER PLAYER ... [-NAME=VALUE ...]\n"
        "      start a board between robots to watch (admins: between anyone)\n"
        "  superwari subscribe BOARD USERID PASSWORD\n"
        "      watch a board: its board mails, as everyone sees them, come to you too\n"
        "  superwari unsubscribe BOARD USERID PASSWORD\n"
        "      stop watching a board\n"
        "  superwari chat BOARD USERID PASSWORD\n"
        "      send the text below the command to the players and observers of a board\n"
        "  superwari queue BOARD USERID PASSWORD MOVE|cancel\n"
        "      a move played for you when your turn comes, if it is legal then\n"
        "  superwari preview BOARD USERID PASSWORD MOVE[; MOVE ...]\n"
        "      the board as it would be after these moves; nothing is played\n"
        "  superwari submit BOARD USERID PASSWORD MOVE\n"
        "      check a move and see the board after it; confirm plays it\n"
        "  superwari confirm BOARD USERID PASSWORD\n"
        "      play the move you submitted\n"
        "  superwari history [USERID]\n"
        "      the finished boards of this game (or of a player), with their results\n"
        "  superwari standings\n"
        "      the players' Elo ratings in this game (two-player games only)\n"
        "  superwari seek USERID PASSWORD [PLAYERS] [-NAME=VALUE ...]\n"
        "      post an open challenge that anyone may join\n"
        "  superwari seeks\n"
        "      the open challenges of this game, the oldest first\n"
        "  superwari join SEEK USERID PASSWORD\n"
        "      take a seat in an open challenge; a two-player game starts at once\n"
        "  superwari start SEEK USERID PASSWORD [ROBOT ...]\n"
        "      start your seek now; robots you name fill empty seats\n"
        "  superwari unseek SEEK USERID PASSWORD\n"
        "      withdraw your open challenge, or leave one you joined\n"
        "\n"
        "Send \"help superwari COMMAND\" for more on a command.\n")


def test_wari_help_lists_only_the_server_deadline_parameters(server):
    reply = server.one(ALICE, "WARI Help")
    text = body_of(reply)
    assert reply.subject == "Wari help"
    assert text.startswith("Help for Wari\n\nWari is the classic mancala game, also known as Oware.\n\n"
                           "Each player owns a row of 6 pits, named a–f")
    assert (
        "\n\nMoves: the letter of one of your own pits: c\nVotes, sent as moves and answered with accept or "
        "reject:\n  propose  a draw\n  undo     take back your last move\n\n"
        "Parameters, given to challenge as -name=value:\n"
        "  -nagtime=7d (1h to 365d): a reminder to a player who has not moved for this\n"
        "    long (off: none)\n"
        "  -forfeittime=21d (1h to 365d): a player who has not moved for this long\n"
        "    loses the game (off: never)\n"
        "\n"
        "Commands:\n  wari help\n") in text
    assert "\n  wari help\n      the rules of the game and how to write a move\n" in text
    assert text.count("\n  -") == 2


# --- challenge -------------------------------------------------------------------------


def test_challenge_sends_each_player_their_own_side(server):
    server.signup("alice", "bob")
    replies = server.send(ALICE, "superwari challenge alice alice-pw bob", "Good luck!\n-- \nAlice")
    assert [(r.subject, r.to, body_of(r)) for r in replies] == [
        ("New Super-Wari Board 101 alice **", [ALICE], START_ALICE),
        ("New Super-Wari Board 101 alice **", [BOB], START_BOB),
    ]
    with server.sessions() as session:
        record = find_game(session, "superwari", 101)
        assert ([s.user.userid for s in record.seats], record.status, record.params) == (
            ["alice", "bob"], "active", {"pits": 8, "stones": 3})


def test_challenge_with_parameters(server):
    server.signup("alice", "bob")
    replies = server.send(ALICE, "superwari challenge alice alice-pw Bob -pits=6 -STONES=4")
    deadline = forfeits("alice", sent(3))
    assert [(r.subject, r.to, body_of(r)) for r in replies] == [
        ("New Super-Wari Board 101 alice", [ALICE],
         summary("It is alice's turn.", drawing("bob", [4] * 6, "alice", [4] * 6), deadline=deadline, next_move=1)),
        ("New Super-Wari Board 101 alice", [BOB],
         summary("It is alice's turn.", drawing("alice", [4] * 6, "bob", [4] * 6), note=challenged("alice", "bob"),
                 deadline=deadline, next_move=1)),
    ]
    assert body_of(replies[0]).split("\n")[6:11] == [
        "   f    e    d    c    b    a",
        "+----+----+----+----+----+----+",
        "|  4 |  4 |  4 |  4 |  4 |  4 |   bob",
        "+----+----+----+----+----+----+",
        "|  4 |  4 |  4 |  4 |  4 |  4 |   alice",
    ]


def test_the_opponent_may_be_seat_one(server):
    server.signup("alice", "bob")
    replies = server.send(BOB, "superwari challenge bob bob-pw alice")
    assert [(r.subject, r.to) for r in replies] == [("New Super-Wari Board 101 bob", [BOB]),
                                                    ("New Super-Wari Board 101 bob", [ALICE])]
    assert body_of(replies[1]).split("\n")[2] == "It is bob's turn."


def test_board_numbers_count_from_101_per_game_type(server):
    server.signup("alice", "bob", "carol")
    assert [r.subject for r in server.send(ALICE, "superwari challenge alice alice-pw bob")] == [
        "New Super-Wari Board 101 alice"] * 2
    assert [r.subject for r in server.send(CAROL, "superwari challenge carol carol-pw alice")] == [
        "New Super-Wari Board 102 carol"] * 2
    replies = server.send(BOB, "wari challenge bob bob-pw carol", "Classic!")
    deadline = forfeits("bob", sent(6))  # 3 signups, 2 challenges, then this one
    assert [(r.subject, r.to, body_of(r)) for r in replies] == [
        ("New Wari Board 101 bob **", [BOB], summary("It is bob's turn.", drawing(
            "carol", [4] * 6, "bob", [4] * 6, "bob 0, carol 0"), comments="bob writes:\nClassic!\n", title="Wari",
            deadline=deadline, next_move=1)),
        ("New Wari Board 101 bob **", [CAROL], summary("It is bob's turn.", drawing(
            "bob", [4] * 6, "carol", [4] * 6, "bob 0, carol 0"), note=challenged("bob", "carol", "Wari", "wari"),
            comments="bob writes:\nClassic!\n", title="Wari", deadline=deadline, next_move=1)),
    ]


CHALLENGE_USAGE = "Send: superwari challenge USERID PASSWORD OPPONENT ... [-NAME=VALUE ...]"
PARAMS_HINT = ("Parameters of Super-Wari: -pits=N, -stones=N, -nagtime=DURATION|off,\n"
               "-forfeittime=DURATION|off. Send 'superwari help' for their meaning.")


@pytest.mark.parametrize("args, problem, instead", [
    ("alice alice-pw zed", "There is no user zed.", "Check the spelling of your opponents' userids."),
    ("alice alice-pw alice", "You cannot challenge yourself.", "Name your opponents' userids after your password."),
    ("alice alice-pw ALICE", "You cannot challenge yourself.", "Name your opponents' userids after your password."),
    ("alice alice-pw bob Bob", "bob is named twice.", "Name each player once."),
    ("alice alice-pw bob carol", "Super-Wari is played by 2 players, not 3.", CHALLENGE_USAGE),
    ("alice alice-pw -pits=6", "Super-Wari is played by 2 players, not 1.", CHALLENGE_USAGE),
    ("alice alice-pw bob -size=4", "Super-Wari has no parameter '-size=4'.", PARAMS_HINT),
    ("alice alice-pw bob -pits", "Super-Wari has no parameter '-pits'.", PARAMS_HINT),
    ("alice alice-pw bob -pits=11", "-pits must be from 4 to 10, not 11.", CHALLENGE_USAGE),
    ("alice alice-pw bob -stones=0", "-stones must be from 1 to 6, not 0.", CHALLENGE_USAGE),
    ("alice alice-pw bob -pits=x", "-pits must be a whole number from 4 to 10, not 'x'.", CHALLENGE_USAGE),
    ("alice bob-pw bob", "Wrong password for alice.", wrong_password("alice")),
    ("zed zed-pw bob", "There is no user zed.",
     "Check the spelling of the userid, or sign up first: signup USERID PASSWORD"),
])
def test_challenge_errors(server, args, problem, instead):
    server.signup("alice", "bob", "carol")
    reply = server.one(ALICE, f"superwari challenge {args}")
    words = args.split()
    quoted = " ".join([words[0], MASK, *words[2:]])
    assert (reply.subject, reply.to, body_of(reply)) == (
        "Super-Wari error", [ALICE], error(problem, instead, f"> Subject: superwari challenge {quoted}"))
    assert game_count(server) == 0
    # the next game is still board 101
    assert server.send(ALICE, "superwari challenge alice alice-pw bob")[0].subject == "New Super-Wari Board 101 alice"


def test_wari_refuses_a_game_parameter_and_lists_its_deadline_parameters(server):
    server.signup("alice", "bob")
    reply = server.one(ALICE, "wari challenge alice alice-pw bob -pits=6")
    assert (reply.subject, reply.to, body_of(reply)) == ("Wari error", [ALICE], error(
        "Wari has no parameter '-pits=6'.",
        "Parameters of Wari: -nagtime=DURATION|off, -forfeittime=DURATION|off. Send\n"
        "'wari help' for their meaning.",
        f"> Subject: wari challenge alice {MASK} bob -pits=6"))
    assert game_count(server) == 0


def test_wari_takes_the_deadline_parameters(server):
    server.signup("alice", "bob")
    reply = server.one(ALICE, "wari challenge alice alice-pw bob -forfeittime=x")
    assert (reply.subject, body_of(reply)) == ("Wari error", error(
        "-forfeittime must be a duration such as 72h or 3d, not 'x'.",
        "Send: wari challenge USERID PASSWORD OPPONENT ... [-NAME=VALUE ...]",
        f"> Subject: wari challenge alice {MASK} bob -forfeittime=x"))
    assert game_count(server) == 0
    replies = server.send(ALICE, "wari challenge alice alice-pw bob -forfeittime=2d -NAGTIME=off")
    assert [(r.subject, r.to, body_of(r)) for r in replies] == [
        ("New Wari Board 101 alice", [ALICE], summary("It is alice's turn.", drawing("bob", [4] * 6, "alice", [4] * 6),
                                                      title="Wari", deadline=forfeits("alice", sent(4), timedelta(days=2)),
                                                      next_move=1)),
        ("New Wari Board 101 alice", [BOB], summary("It is alice's turn.", drawing("alice", [4] * 6, "bob", [4] * 6),
                                                    note=challenged("alice", "bob", "Wari", "wari"), title="Wari",
                                                    deadline=forfeits("alice", sent(4), timedelta(days=2)), next_move=1)),
    ]
    with server.sessions() as session:
        record = find_game(session, "wari", 101)
        assert (record.nag_after, record.forfeit_after) == (0, 2 * 86400)


@pytest.mark.parametrize("subject, problem", [
    ("superwari challenge alice alice-pw", "superwari challenge: too few words for this command."),
    ("superwari move 101 alice alice-pw", "superwari move: too few words for this command."),
    ("superwari showas 101 alice alice-pw x", "superwari showas: too many words for this command."),
])
def test_word_count_error_names_the_game_command(server, subject, problem):
    server.signup("alice")
    assert body_of(server.one(ALICE, subject)).split("\n")[0] == problem


@pytest.mark.parametrize("subject, usage", [
    ("superwari challenge alice alice-pw", "superwari challenge USERID PASSWORD OPPONENT ... [-NAME=VALUE ...]"),
    ("superwari move 101 alice alice-pw", "superwari move BOARD USERID PASSWORD MOVE [#N]"),
    ("superwari show", "superwari show BOARD[#N] [legal]"),
    ("superwari show 101 #1 legal x", "superwari show BOARD[#N] [legal]"),
    ("superwari showas 101 alice", "superwari showas BOARD USERID PASSWORD"),
    ("superwari resign 101 alice alice-pw now", "superwari resign BOARD USERID PASSWORD"),
    ("superwari games alice bob", "superwari games [USERID]"),
])
def test_game_command_word_counts(game, subject, usage):
    reply = game.one(ALICE, subject)
    quoted = subject.replace("alice-pw", MASK)
    assert reply.subject == "Super-Wari error"
    assert body_of(reply).split("\n")[1:] == [f"Send: {usage}", "", "Your message:", f"> Subject: {quoted}", ""]
    assert " words for this command." in body_of(reply).split("\n")[0]
    assert_unchanged(game)


# --- move --------------------------------------------------------------------------------


def test_move_sends_the_new_board_to_both_players(server):
    server.signup("alice", "bob")
    server.send(ALICE, "superwari challenge alice alice-pw bob", "Good luck!")
    replies = server.send(ALICE, "superwari move 101 alice alice-pw C", "Take that.\n")
    assert [(r.subject, r.to, body_of(r)) for r in replies] == [
        ("Super-Wari Board 101 bob **", [ALICE], AFTER_C_ALICE),
        ("Super-Wari Board 101 bob **", [BOB], AFTER_C_BOB),
    ]
    replies = server.send(BOB, "superwari move 101 bob bob-pw c")
    deadline = forfeits("alice", sent(5))
    assert [(r.subject, r.to, body_of(r)) for r in replies] == [
        ("Super-Wari Board 101 alice", [ALICE], summary("It is alice's turn.", BOARD_2_ALICE, TWO_MOVES,
                                                        deadline=deadline, next_move=3)),
        ("Super-Wari Board 101 alice", [BOB], summary("It is alice's turn.", BOARD_2_BOB, TWO_MOVES,
                                                      deadline=deadline, next_move=3)),
    ]


def test_recent_moves_table_keeps_the_last_ten_rows(server):
    server.signup("alice", "bob")
    server.send(ALICE, "superwari challenge alice alice-pw bob")
    engine = get_game("superwari")
    state = engine.setup(2, {}, None)
    played = []
    for number in range(1, 24):
        seat = state.to_move
        move = engine.legal_moves(state, seat)[0]
        engine.apply(state, seat, move, None)
        played.append(move)
        replies = server.send([ALICE, BOB][seat], f"superwari move 101 {['alice', 'bob'][seat]} "
                                                  f"{['alice', 'bob'][seat]}-pw {move} #{number}")
        assert len(replies) == 2
    assert engine.result(state) is None
    lines = body_of(replies[0]).split("\n")
    table = lines[lines.index("  alice  bob"):lines.index("  alice  bob") + 12]
    # each cell carries the move's number, as the #N guard counts it: "#23 a"
    cells = [f"#{number} {move}".ljust(7) for number, move in enumerate(played, start=1)]
    expected = [("  " + "".join(cells[i:i + 2])).rstrip() for i in range(0, 23, 2)]
    assert table == ["  alice  bob", *expected[-10:], ""]
    assert lines[3] == "Next move: #24"


@pytest.mark.parametrize("move", ["d #3", "d#3", "D  #3"])
def test_move_guard_accepted(game, move):
    replies = game.send(ALICE, f"superwari move 101 alice alice-pw {move}")
    assert [r.subject for r in replies] == ["Super-Wari Board 101 bob"] * 2
    assert move_count(game) == 3
    with game.sessions() as session:
        assert find_game(session, "superwari", 101).moves[-1].move == "d"


@pytest.mark.parametrize("sender, userid, sent, number", [
    (ALICE, "alice", "c#1", 1),
    (ALICE, "alice", "c #02", 2),
    (ALICE, "alice", "c #4", 4),
    (BOB, "bob", "c #2", 2),  # bob's own mail for move 2, delivered again
])
def test_move_guard_wrong_number(game, sender, userid, sent, number):
    reply = game.one(sender, f"superwari move 101 {userid} {userid}-pw {sent}")
    assert (reply.subject, reply.to, body_of(reply)) == ("Super-Wari Board 101 Error", [sender], error(
        f"Move c received as move #{number}, but the next move on board 101 is #3.",
        f"Look at the board below. If c is still your move, send:\n  superwari move 101 {userid} PASSWORD c #3",
        f"> Subject: superwari move 101 {userid} {MASK} {sent}", SHOW_2 if userid == "alice" else SHOW_2_BOB))
    assert_unchanged(game)


def test_move_guard_error_text_of_the_design(server):
    server.signup("alice", "bob")
    server.send(ALICE, "superwari challenge alice alice-pw bob", "Good luck!")
    server.send(ALICE, "superwari move 101 alice alice-pw c #1", "Take that.\n")
    board = AFTER_C_BOB[:AFTER_C_BOB.index("\nalice writes:")]  # without the comment
    for guard in ("c #3", "c#3"):
        reply = server.one(BOB, f"superwari move 101 bob bob-pw {guard}")
        assert (reply.subject, reply.to, body_of(reply)) == ("Super-Wari Board 101 Error", [BOB], error(
            "Move c received as move #3, but the next move on board 101 is #2.",
            "Look at the board below. If c is still your move, send:\n  superwari move 101 bob PASSWORD c #2",
            f"> Subject: superwari move 101 bob {MASK} {guard}", board))
    assert move_count(server) == 1
    assert [r.subject for r in server.send(BOB, "superwari move 101 bob bob-pw c#2")] == [
        "Super-Wari Board 101 alice"] * 2


def test_no_such_board(game):
    reply = game.one(ALICE, "superwari move 102 alice alice-pw c")
    assert (reply.subject, reply.to, body_of(reply)) == ("Super-Wari error", [ALICE], error(
        "There is no Super-Wari board 102.", "Send 'superwari games' for the boards.",
        f"> Subject: superwari move 102 alice {MASK} c"))
    # a board of another game type is another board
    reply = game.one(ALICE, "wari move 101 alice alice-pw c")
    assert (reply.subject, body_of(reply).split("\n")[0]) == ("Wari error", "There is no Wari board 101.")
    assert_unchanged(game)


@pytest.mark.parametrize("board", ["x1", "-101", "1234567890", "101.0"])
def test_not_a_board_number(game, board):
    reply = game.one(ALICE, f"superwari move {board} alice alice-pw c")
    assert (reply.subject, reply.to, body_of(reply)) == ("Super-Wari error", [ALICE], error(
        f"'{board}' is not a board number.",
        "Board numbers are whole numbers such as 101; send 'superwari games' for the\nboards.",
        f"> Subject: superwari move {board} alice {MASK} c"))
    assert_unchanged(game)


def test_move_wrong_password_shows_the_public_board(game):
    reply = game.one(BOB, "superwari move 101 bob alice-pw a")
    assert (reply.subject, reply.to, body_of(reply)) == ("Super-Wari Board 101 Error", [BOB], error(
        "Wrong password for bob.", wrong_password("bob"), f"> Subject: superwari move 101 bob {MASK} a", SHOW_2))
    assert_unchanged(game)


def test_move_by_an_unknown_user(game):
    reply = game.one(ALICE, "superwari move 101 zed zed-pw a")
    assert (reply.subject, reply.to, body_of(reply)) == ("Super-Wari Board 101 Error", [ALICE], error(
        "There is no user zed.", "Check the spelling of the userid, or sign up first: signup USERID PASSWORD",
        f"> Subject: superwari move 101 zed {MASK} a", SHOW_2))
    assert_unchanged(game)


def test_move_by_a_non_player(game):
    reply = game.one(CAROL, "superwari move 101 carol carol-pw a")
    assert (reply.subject, reply.to, body_of(reply)) == ("Super-Wari Board 101 Error", [CAROL], error(
        "carol does not play on Super-Wari board 101; its players are alice, bob.",
        "Check the board number and the userid.",
        f"> Subject: superwari move 101 carol {MASK} a", SHOW_2))
    assert_unchanged(game)


def test_move_out_of_turn_shows_the_senders_side(game):
    reply = game.one(BOB, "superwari move 101 bob bob-pw a")
    assert (reply.subject, reply.to, body_of(reply)) == ("Super-Wari Board 101 Error", [BOB], error(
        "It is not bob's turn on board 101. It is alice's turn.",
        "Wait for the board mail that says it is your turn.",
        f"> Subject: superwari move 101 bob {MASK} a", SHOW_2_BOB))
    assert_unchanged(game)


@pytest.mark.parametrize("move, why", [
    ("c", "pit c is empty."),
    ("C", "pit c is empty."),
    ("k", "there is no pit k (your pits are a–h)."),
    ("zz", '"zz" is not a pit; send the letter of one\nof your pits, a–h.'),  # within 78 columns
    ("c d", '"c d" is not a pit; send the letter of one\nof your pits, a–h.'),
])
def test_illegal_move(game, move, why):
    reply = game.one(ALICE, f"superwari move 101 alice alice-pw {move}")
    assert (reply.subject, reply.to, body_of(reply)) == ("Super-Wari Board 101 Error", [ALICE], error(
        f"Move {move} is not legal on board 101: {why}",
        "Send instead: superwari move 101 alice PASSWORD MOVE\nwhere MOVE is one of: a, b, d, e, f, g, h.",
        f"> Subject: superwari move 101 alice {MASK} {move}", SHOW_2))
    assert_unchanged(game)


def test_illegal_move_problem_is_a_sentence(game):
    reply = game.one(ALICE, "superwari move 101 alice alice-pw c")
    assert body_of(reply).split("\n")[0] == "Move c is not legal on board 101: pit c is empty."


STARVING_BOARD = summary("It is alice's turn.", drawing("bob", [0, 2, 2, 2], "alice", [3, 1, 3, 3]),
                         "  alice  bob\n  #1 b   #2 d\n", deadline=forfeits("alice", sent(5)), next_move=3)


@pytest.fixture
def starving(server):
    """A 4-pit board where alice's d would leave bob without stones."""
    server.signup("alice", "bob")
    server.send(ALICE, "superwari challenge alice alice-pw bob -pits=4 -stones=2")
    server.send(ALICE, "superwari move 101 alice alice-pw b")
    server.send(BOB, "superwari move 101 bob bob-pw d")
    return server


def test_starving_move_is_refused(starving):
    reply = starving.one(ALICE, "superwari move 101 alice alice-pw d")
    lines = body_of(reply).split("\n")
    assert reply.subject == "Super-Wari Board 101 Error"
    assert lines[0].startswith("Move d is not legal on board 101: that move would leave ")
    assert lines[1] == "you must play a, b or c."  # the problem is wrapped to 78 columns
    assert "\n".join(lines[2:]) == error(
        "", "Send instead: superwari move 101 alice PASSWORD MOVE\nwhere MOVE is one of: a, b, c.",
        f"> Subject: superwari move 101 alice {MASK} d", STARVING_BOARD)[1:]
    assert body_of(starving.one(CAROL, "superwari show 101")) == STARVING_BOARD


def test_starving_error_names_the_opponent(starving):
    reply = starving.one(ALICE, "superwari move 101 alice alice-pw d")
    assert body_of(reply).split("\n")[:2] == [
        "Move d is not legal on board 101: that move would leave bob with no stones;", "you must play a, b or c."]


def test_move_on_a_finished_game(game):
    game.send(BOB, "superwari resign 101 bob bob-pw")
    reply = game.one(ALICE, "superwari move 101 alice alice-pw a #4")
    over = summary("Game won by alice.", BOARD_2_ALICE, "  alice      bob\n  #1 c       #2 c\n             #3 resign\n")
    assert (reply.subject, reply.to, body_of(reply)) == ("Super-Wari Board 101 Error", [ALICE], error(
        "Super-Wari board 101 is over: Game won by alice.",
        "Start a new game with: superwari challenge USERID PASSWORD OPPONENT",
        f"> Subject: superwari move 101 alice {MASK} a #4", over))
    assert move_count(game) == 3


def test_move_from_an_unregistered_address_copies_the_board_there(game):
    replies = game.send("alice@work.example", "superwari move 101 alice alice-pw a")
    assert [(r.subject, r.to) for r in replies] == [
        ("Super-Wari Board 101 bob", [ALICE, "alice@work.example"]),
        ("Super-Wari Board 101 bob", [BOB]),
    ]
    assert move_count(game) == 3


def test_move_written_in_the_body_of_a_reply_to_the_board_mail(game):
    quoted = "\n".join("> " + line for line in SHOW_2_BOB.split("\n"))
    replies = game.send(ALICE, "Re: Super-Wari Board 101 alice",
                        f"superwari move 101 alice alice-pw a #3\nYour turn!\n\nOn Sunday, pbmserv wrote:\n{quoted}\n")
    assert [r.subject for r in replies] == ["Super-Wari Board 101 bob **"] * 2
    assert body_of(replies[1]).endswith("\nalice writes:\nYour turn!\n")
    assert MASK not in replies[1].body and "alice-pw" not in replies[1].body


@pytest.mark.parametrize("comment, mark", [
    ("Goodbye.\n", " **"),
    ("Your turn.\n", " **"),
    ("alice\n", ""),  # a signature: the author's userid
    ("Cheers,\nalice\n", ""),
    ("Sent from my iPhone\n", ""),
    ("Regards\n", ""),
])
def test_a_real_comment_marks_the_subject(game, comment, mark):
    replies = game.send(ALICE, "superwari move 101 alice alice-pw a", comment)
    assert [r.subject for r in replies] == [f"Super-Wari Board 101 bob{mark}"] * 2
    assert body_of(replies[0]).endswith("\nalice writes:\n" + comment)


def test_a_move_mail_delivered_twice_plays_once(game):
    assert len(game.send(ALICE, "superwari move 101 alice alice-pw a", message_id="<m1@example.org>")) == 2
    assert game.send(ALICE, "superwari move 101 alice alice-pw a", message_id="<m1@example.org>") == []
    assert move_count(game) == 3


# --- show and showas ------------------------------------------------------------------------


def test_show_is_the_public_view(game):
    reply = game.one("someone@example.net", "superwari show 101")
    assert (reply.subject, reply.to, body_of(reply)) == (
        "Super-Wari Board 101 alice", ["someone@example.net"], SHOW_2)
    assert body_of(game.one(BOB, "Superwari SHOW 101")) == SHOW_2  # even for the north player


def test_show_legal(game):
    reply = game.one(ALICE, "superwari show 101 LEGAL")
    assert (reply.subject, body_of(reply)) == (
        "Super-Wari Board 101 alice", SHOW_2 + "\nLegal moves for alice: a, b, d, e, f, g, h\n")


def test_show_after_n_moves(game):
    start = summary("It is alice's turn.", drawing("bob", [3] * 8, "alice", [3] * 8), note="Position after move 0 of 2.")
    reply = game.one(ALICE, "superwari show 101#0")
    assert (reply.subject, body_of(reply)) == ("Super-Wari Board 101 alice", start)
    one = summary("It is bob's turn.", drawing("bob", [3] * 8, "alice", [3, 3, 0, 4, 4, 4, 3, 3]),
                  "  alice  bob\n  #1 c\n", note="Position after move 1 of 2.")
    for command in ("superwari show 101 #1", "superwari show 101#1"):
        assert body_of(game.one(ALICE, command)) == one
    assert body_of(game.one(ALICE, "superwari show 101 #1 legal")) == one + "\nLegal moves for bob: a, b, c, d, e, f, g, h\n"
    # an old position, even the current one, has no deadline
    assert body_of(game.one(ALICE, "superwari show 101#2")) == summary(
        "It is alice's turn.", BOARD_2_ALICE, TWO_MOVES, note="Position after move 2 of 2.")


def test_show_of_an_old_position_keeps_the_boards_current_subject(game):
    assert game.one(ALICE, "superwari show 101#1").subject == "Super-Wari Board 101 alice"


def test_show_beyond_the_move_log(game):
    reply = game.one(ALICE, "superwari show 101#3")
    assert (reply.subject, reply.to, body_of(reply)) == ("Super-Wari Board 101 Error", [ALICE], error(
        "Board 101 has had 2 moves, so there is no position after move 3.",
        "Send: superwari show 101#N with N from 0 to 2.",
        "> Subject: superwari show 101#3", SHOW_2))


@pytest.mark.parametrize("args, problem, instead", [
    ("101 foo", "'101 foo' is not a board to show.",
     "Send: superwari show BOARD[#N] [legal], e.g. superwari show 101#3 legal"),
    ("abc", "'abc' is not a board number.",
     "Board numbers are whole numbers such as 101; send 'superwari games' for the\nboards."),
    ("102", "There is no Super-Wari board 102.", "Send 'superwari games' for the boards."),
])
def test_show_errors(game, args, problem, instead):
    reply = game.one(ALICE, f"superwari show {args}")
    assert (reply.subject, body_of(reply)) == ("Super-Wari error", error(
        problem, instead, f"> Subject: superwari show {args}"))


def test_showas_is_the_players_own_side(game):
    reply = game.one(ALICE, "superwari showas 101 bob bob-pw")
    assert (reply.subject, reply.to, body_of(reply)) == ("Super-Wari Board 101 alice", [ALICE], SHOW_2_BOB)
    reply = game.one(BOB, "superwari showas 101 bob bob-pw")
    assert (reply.subject, reply.to, body_of(reply)) == ("Super-Wari Board 101 alice", [BOB], SHOW_2_BOB)


@pytest.mark.parametrize("args, problem, instead", [
    ("101 bob alice-pw", "Wrong password for bob.", wrong_password("bob")),
    ("101 carol carol-pw", "carol does not play on Super-Wari board 101; its players are alice, bob.",
     "Check the board number and the userid."),
])
def test_showas_errors_show_the_public_board(game, args, problem, instead):
    reply = game.one(BOB, f"superwari showas {args}")
    quoted = " ".join(args.split()[:2] + [MASK])
    assert (reply.subject, body_of(reply)) == ("Super-Wari Board 101 Error", error(
        problem, instead, f"> Subject: superwari showas {quoted}", SHOW_2))


# --- resign -------------------------------------------------------------------------------


def test_resign_ends_the_game(game):
    replies = game.send(ALICE, "superwari resign 101 alice alice-pw", "Well played.")
    table = "  alice      bob\n  #1 c       #2 c\n  #3 resign\n"
    comments = "alice writes:\nWell played.\n"
    note = "alice resigned."
    assert [(r.subject, r.to, body_of(r)) for r in replies] == [
        ("Super-Wari Board 101 **", [ALICE], summary("Game won by bob.", BOARD_2_ALICE, table, note, comments)),
        ("Super-Wari Board 101 **", [BOB], summary("Game won by bob.", BOARD_2_BOB, table, note, comments)),
    ]
    with game.sessions() as session:
        record = find_game(session, "superwari", 101)
        assert (record.status, record.result, [m.kind for m in record.moves]) == (
            "finished", "Game won by bob.", ["move", "move", "resign"])
    assert game.one(CAROL, "superwari show 101").subject == "Super-Wari Board 101"
    reply = game.one(BOB, "superwari resign 101 bob bob-pw")
    assert (reply.subject, body_of(reply).split("\n")[:2]) == ("Super-Wari Board 101 Error", [
        "Super-Wari board 101 is over: Game won by bob.",
        "Start a new game with: superwari challenge USERID PASSWORD OPPONENT"])
    assert move_count(game) == 3


@pytest.mark.parametrize("sender, args, problem, instead", [
    (ALICE, "101 alice bob-pw", "Wrong password for alice.", wrong_password("alice")),
    (CAROL, "101 carol carol-pw", "carol does not play on Super-Wari board 101; its players are alice, bob.",
     "Check the board number and the userid."),
])
def test_resign_errors(game, sender, args, problem, instead):
    reply = game.one(sender, f"superwari resign {args}")
    quoted = " ".join(args.split()[:2] + [MASK])
    assert (reply.subject, reply.to, body_of(reply)) == ("Super-Wari Board 101 Error", [sender], error(
        problem, instead, f"> Subject: superwari resign {quoted}", SHOW_2))
    assert_unchanged(game)


# --- games --------------------------------------------------------------------------------


def test_games_lists_the_running_boards_players_and_status(game):
    game.send(CAROL, "superwari challenge carol carol-pw bob")
    game.send(ALICE, "superwari challenge alice alice-pw carol")
    game.send(ALICE, "superwari resign 101 alice alice-pw")  # over: in `history`, not here
    reply = game.one("someone@example.net", "superwari games")
    assert (reply.subject, reply.to, body_of(reply)) == ("Super-Wari games", ["someone@example.net"], (
        "Running Super-Wari boards:\n\n"
        "  102  carol, bob: It is carol's turn.\n"
        "  103  alice, carol: It is alice's turn.\n\n"
        "Finished boards: superwari history\n"))
    reply = game.one(ALICE, "superwari games CAROL")
    assert (reply.subject, body_of(reply)) == ("Super-Wari games", (
        "Running Super-Wari boards of carol:\n\n"
        "  102  carol, bob: It is carol's turn.\n"
        "  103  alice, carol: It is alice's turn.\n\n"
        "Finished boards: superwari history carol\n"))
    reply = game.one(ALICE, "wari games bob")
    assert (reply.subject, body_of(reply)) == ("Wari games", (
        "Running Wari boards of bob:\n\n"
        "  none. Start one with: wari challenge USERID PASSWORD OPPONENT\n\n"
        "Finished boards: wari history bob\n"))


def test_games_lists_at_most_the_first_hundred(game, monkeypatch):
    from pbmserv.commands import game as game_module
    monkeypatch.setattr(game_module, "GAMES_LISTED", 1)
    game.send(CAROL, "superwari challenge carol carol-pw bob")
    assert body_of(game.one(ALICE, "superwari games")) == (
        "Running Super-Wari boards (the first 1 of 2):\n\n"
        "  101  alice, bob: It is alice's turn.\n\n"
        "Finished boards: superwari history\n")


def test_games_of_an_unknown_user(game):
    reply = game.one(ALICE, "superwari games zed")
    assert (reply.subject, body_of(reply)) == ("Super-Wari error", error(
        "There is no user zed.", "Send: superwari games [USERID]", "> Subject: superwari games zed"))


# --- a whole game by mail -------------------------------------------------------------------


def legal_from_show(server, game_name: str, userid: str) -> list[str]:
    text = body_of(server.one(CAROL, f"{game_name} show 101 legal"))
    last = text.rstrip("\n").split("\n")[-1]
    prefix = f"Legal moves for {userid}: "
    assert last.startswith(prefix), text
    return last[len(prefix):].split(", ")


def test_a_whole_wari_game_by_mail(server):
    server.signup("alice", "bob", "carol")
    server.send(ALICE, "wari challenge alice alice-pw bob")
    engine = get_game("wari")
    state = engine.setup(2, {}, None)  # a shadow of the game, to know the legal moves
    rng = random.Random(2)
    users = ["alice", "bob"]
    number = 0
    while engine.result(state) is None:
        number += 1
        seat = state.to_move
        legal = engine.legal_moves(state, seat)
        if number % 10 == 1:  # now and then, ask the server too
            assert legal_from_show(server, "wari", users[seat]) == legal
        move = rng.choice(legal)
        engine.apply(state, seat, move, None)
        replies = server.send(f"{users[seat]}@example.org",
                              f"wari move 101 {users[seat]} {users[seat]}-pw {move} #{number}")
        assert [r.to for r in replies] == [[ALICE], [BOB]], number
        assert number < 400
    outcome = engine.result(state)
    final = "Game was a tie." if outcome.tie else f"Game won by {users[outcome.winners[0]]}."
    assert [r.subject for r in replies] == ["Wari Board 101", "Wari Board 101"]
    for reply in replies:
        assert body_of(reply).split("\n")[:3] == ["Summary of Wari Board 101", "", final]
    with server.sessions() as session:
        record = find_game(session, "wari", 101)
        assert (record.status, record.result, len(record.moves)) == ("finished", final, number)
        assert record.state == engine.serialise(replay(record))
        assert record.state == engine.serialise(state)
    reply = server.one(ALICE, "wari move 101 alice alice-pw a")
    assert (reply.subject, body_of(reply).split("\n")[0]) == (
        "Wari Board 101 Error", f"Wari board 101 is over: {final}")
    assert f"  alice, bob: {final}\n" in body_of(server.one(ALICE, "wari history"))


@pytest.mark.parametrize("game, votes", [
    ("survival", "Votes, sent as moves and answered with accept or reject:\n  undo     take back your last move\n"),
    ("serpent", "Votes, sent as moves and answered with accept or reject:\n  undo     take back your last move\n"),
    ("survive", None),  # chance and hidden hands: no undo; nobody ties: no draw
])
def test_game_help_names_the_votes_the_game_allows(server, game, votes):
    text = body_of(server.one(ALICE, f"{game} help"))
    if votes is None:
        assert "Votes" not in text
    else:
        assert votes in text
