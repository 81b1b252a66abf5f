"""Votes by mail (pbmserv/commands/votes.py): `propose` a draw and `undo`, sent as moves
and answered with `accept` or `reject`, in the games that allow them. Board mails and
errors are compared as whole text; after each error the record proves that nothing
changed. One game goes through `pbmserv replay`, one through a real `serve`."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from conftest import body_of, drawing, maildir_messages, mails, sent, plain
from mailgen import mail, write_mbox
from sqlalchemy import create_engine, select
from sqlalchemy.orm import Session
from test_smtp import RunningServer

from pbmserv.cli import main
from pbmserv.games import get_game
from pbmserv.play import replay
from pbmserv.store.models import GameRecord, Rating
from pbmserv.store.repo import find_game

ALICE = "alice@example.org"
BOB = "bob@example.org"
CAROL = "carol@example.org"
MASK = "********"
ADDRESS = {"alice": ALICE, "bob": BOB, "carol": CAROL}

FORFEIT_TIME = timedelta(days=21)  # the default -forfeittime
ANSWER = "To answer, send:\n  superwari move 101 USERID PASSWORD accept (or reject)"
VOTE_DRAW = "Vote: alice proposes a draw; waiting for bob to accept or reject."


def forfeits(userid: str, turn_began: int) -> str:
    return f"{userid} forfeits if no move by {sent(turn_began) + FORFEIT_TIME:%Y-%m-%d %H:%M} UTC."


def summary(status: str, board: str, moves: str = "", note: str = "", deadline: str = "", comments: str = "",
            next_move: int = 0) -> str:
    """A board mail: `next_move` is the #N a running board's next move takes."""
    text = f"Summary of Super-Wari Board 101\n\n{status}\n"
    for line in (note, f"Next move: #{next_move}" if next_move else "", deadline):
        text += line + "\n" if line else ""
    text += ("\n" + moves if moves else "") + "\n" + board
    return text + ("\n" + comments if comments else "")


def error(problem: str, instead: str, quoted: str, board: str) -> str:
    return f"{problem}\n{instead}\n\n{board}\nYour message:\n{quoted}\n"


START = [3] * 8
AFTER_C_C = ([3, 3, 4, 4, 4, 0, 3, 3], [3, 3, 0, 4, 4, 4, 3, 3])  # after alice c, bob c: bob's h..a, alice's a..h
AFTER_D = ([3, 3, 4, 4, 4, 0, 3, 3], [3, 3, 0, 0, 5, 5, 4, 4])  # then alice d


def sides(rows: tuple[list[int], list[int]]) -> dict[str, str]:
    """The drawing of a position (as alice reads it) from each player's side."""
    bobs, alices = rows
    return {"alice": drawing("bob", bobs, "alice", alices),
            "bob": drawing("alice", list(reversed(alices)), "bob", list(reversed(bobs)))}


BOARDS = {"": sides((START, START)), "c c": sides(AFTER_C_C), "c c d": sides(AFTER_D)}
TWO_MOVES = "  alice  bob\n  #1 c   #2 c\n"
THREE_MOVES = TWO_MOVES + "  #3 d\n"
TURN_BEGAN = 6  # the `game` fixture: 3 signups, the challenge, c, c; then alice is to move


@pytest.fixture
def game(server):
    """alice (South) against bob on Super-Wari board 101, after alice c and bob c."""
    server.signup("alice", "bob", "carol")
    server.send(ALICE, "superwari challenge alice alice-pw bob")
    server.send(ALICE, "superwari move 101 alice alice-pw c")
    server.send(BOB, "superwari move 101 bob bob-pw c")
    assert server.clock == sent(TURN_BEGAN)
    return server


def vote(server, userid: str, word: str, comment: str = "", game_name: str = "superwari"):
    return server.send(ADDRESS[userid], f"{game_name} move 101 {userid} {userid}-pw {word}", comment)


def record_row(server, game_type: str = "superwari") -> tuple:
    """What votes may change: the vote, the log, the status and result."""
    with server.sessions() as session:
        record = find_game(session, game_type, 101)
        return (record.vote, [(m.number, m.seat, m.kind, m.move) for m in record.moves], record.status, record.result)


def replays_to_the_stored_state(server, game_type: str = "superwari") -> bool:
    with server.sessions() as session:
        record = find_game(session, game_type, 101)
        return record.state == get_game(game_type).serialise(replay(record))


LOG_2 = [(1, 0, "move", "c"), (2, 1, "move", "c")]


# --- propose a draw ---------------------------------------------------------------------------


def test_propose_mails_every_player_the_pending_vote(game):
    replies = vote(game, "alice", "propose", "A draw?")
    deadline = forfeits("alice", TURN_BEGAN) + "\n" + VOTE_DRAW
    note = f"alice proposes a draw. {ANSWER}"
    assert mails(replies) == [
        ("Super-Wari Board 101 alice **", [ALICE], summary("It is alice's turn.", BOARDS["c c"]["alice"], TWO_MOVES,
                                                           note, deadline, "alice writes:\nA draw?\n", 3)),
        ("Super-Wari Board 101 alice **", [BOB], summary("It is alice's turn.", BOARDS["c c"]["bob"], TWO_MOVES,
                                                         note, deadline, "alice writes:\nA draw?\n", 3)),
    ]
    assert record_row(game) == ({"kind": "draw", "by": 0, "accepted": []}, LOG_2, "active", "")


def test_a_player_may_propose_when_it_is_not_their_turn(game):
    replies = vote(game, "bob", "Propose")
    assert [r.subject for r in replies] == ["Super-Wari Board 101 alice"] * 2
    lines = body_of(replies[1]).split("\n")
    assert lines[2:8] == ["It is alice's turn.", *f"bob proposes a draw. {ANSWER}".split("\n"), "Next move: #3",
                          forfeits("alice", TURN_BEGAN),
                          "Vote: bob proposes a draw; waiting for alice to accept or reject."]
    assert record_row(game)[0] == {"kind": "draw", "by": 1, "accepted": []}


def test_accept_agrees_the_draw_and_rates_it_as_a_tie(game):
    vote(game, "alice", "propose")
    replies = vote(game, "bob", "accept", "Fair enough.")
    note = "bob accepted: the draw was agreed."
    comments = "bob writes:\nFair enough.\n"
    assert mails(replies) == [
        ("Super-Wari Board 101 **", [ALICE], summary("Draw agreed: the game is a tie.", BOARDS["c c"]["alice"],
                                                     TWO_MOVES, note, comments=comments)),
        ("Super-Wari Board 101 **", [BOB], summary("Draw agreed: the game is a tie.", BOARDS["c c"]["bob"],
                                                   TWO_MOVES, note, comments=comments)),
    ]
    assert record_row(game) == (None, LOG_2 + [(3, 0, "draw", "draw")], "finished", "Draw agreed: the game is a tie.")
    with game.sessions() as session:
        ratings = session.scalars(select(Rating).order_by(Rating.id)).all()
        assert [(r.user.userid, r.game_type, r.rating, r.games) for r in ratings] == [
            ("alice", "superwari", 1600.0, 1), ("bob", "superwari", 1600.0, 1)]
    assert "  alice, bob: Draw agreed: the game is a tie.\n" in body_of(game.one(CAROL, "superwari history"))
    reply = game.one(ALICE, "superwari move 101 alice alice-pw undo")
    assert body_of(reply).split("\n")[:2] == ["Super-Wari board 101 is over: Draw agreed: the game is a tie.",
                                              "Start a new game with: superwari challenge USERID PASSWORD OPPONENT"]


def test_reject_cancels_the_vote(game):
    vote(game, "alice", "propose")
    replies = vote(game, "bob", "REJECT")
    note = "bob rejected alice's proposal of a draw."
    deadline = forfeits("alice", TURN_BEGAN)
    assert mails(replies) == [
        ("Super-Wari Board 101 alice", [ALICE], summary("It is alice's turn.", BOARDS["c c"]["alice"], TWO_MOVES,
                                                        note, deadline, next_move=3)),
        ("Super-Wari Board 101 alice", [BOB], summary("It is alice's turn.", BOARDS["c c"]["bob"], TWO_MOVES,
                                                      note, deadline, next_move=3)),
    ]
    assert record_row(game) == (None, LOG_2, "active", "")
    # the next vote may come at once, from either side
    assert len(vote(game, "bob", "propose")) == 2
    assert record_row(game)[0] == {"kind": "draw", "by": 1, "accepted": []}


def test_a_move_cancels_a_pending_vote(game):
    vote(game, "bob", "propose")
    replies = vote(game, "alice", "d #3")
    deadline = forfeits("bob", TURN_BEGAN + 2)
    note = "alice's move cancelled bob's proposal of a draw."
    assert mails(replies) == [
        ("Super-Wari Board 101 bob", [ALICE], summary("It is bob's turn.", BOARDS["c c d"]["alice"], THREE_MOVES,
                                                      note, deadline, next_move=4)),
        ("Super-Wari Board 101 bob", [BOB], summary("It is bob's turn.", BOARDS["c c d"]["bob"], THREE_MOVES,
                                                    note, deadline, next_move=4)),
    ]
    assert record_row(game) == (None, LOG_2 + [(3, 0, "move", "d")], "active", "")


def test_a_vote_takes_the_guard_of_the_next_move(game):
    reply = game.one(ALICE, "superwari move 101 alice alice-pw propose #4")
    assert body_of(reply).split("\n")[:3] == [
        "Move propose received as move #4, but the next move on board 101 is #3.",
        "Look at the board below. If propose is still your move, send:",
        "  superwari move 101 alice PASSWORD propose #3"]
    assert record_row(game) == (None, LOG_2, "active", "")
    assert len(vote(game, "alice", "propose #3")) == 2
    assert len(vote(game, "bob", "Accept#3")) == 2
    assert record_row(game)[1][-1] == (3, 0, "draw", "draw")


# --- undo ---------------------------------------------------------------------------------------


def test_undo_takes_back_the_proposers_last_move(game):
    vote(game, "alice", "d")
    replies = vote(game, "alice", "undo")
    note = f"alice proposes to take back the moves from move 3 on. {ANSWER}"
    deadline = (forfeits("bob", TURN_BEGAN + 1) + "\n"
                + "Vote: alice proposes to take back the moves from move 3 on; waiting for bob to\naccept or reject.")
    assert mails(replies) == [
        ("Super-Wari Board 101 bob", [ALICE], summary("It is bob's turn.", BOARDS["c c d"]["alice"], THREE_MOVES,
                                                      note, deadline, next_move=4)),
        ("Super-Wari Board 101 bob", [BOB], summary("It is bob's turn.", BOARDS["c c d"]["bob"], THREE_MOVES,
                                                    note, deadline, next_move=4)),
    ]
    assert record_row(game)[0] == {"kind": "undo", "by": 0, "accepted": [], "move": 3}
    replies = vote(game, "bob", "accept")
    note = "bob accepted: the moves from move 3 on were taken back."
    deadline = forfeits("alice", TURN_BEGAN + 3)  # alice's turn again, from now
    assert mails(replies) == [  # the logged undo is move #4
        ("Super-Wari Board 101 alice", [ALICE], summary("It is alice's turn.", BOARDS["c c"]["alice"], TWO_MOVES,
                                                        note, deadline, next_move=5)),
        ("Super-Wari Board 101 alice", [BOB], summary("It is alice's turn.", BOARDS["c c"]["bob"], TWO_MOVES,
                                                      note, deadline, next_move=5)),
    ]
    assert record_row(game) == (None, LOG_2 + [(3, 0, "move", "d"), (4, 0, "undo", "3")], "active", "")
    assert replays_to_the_stored_state(game)


def test_show_of_old_positions_after_an_undo(game):
    vote(game, "alice", "d")
    vote(game, "alice", "undo")
    vote(game, "bob", "accept")
    assert body_of(game.one(CAROL, "superwari show 101#3")) == summary(
        "It is bob's turn.", BOARDS["c c d"]["alice"], THREE_MOVES, "Position after move 3 of 4.")
    assert body_of(game.one(CAROL, "superwari show 101#4")) == summary(
        "It is alice's turn.", BOARDS["c c"]["alice"], TWO_MOVES, "Position after move 4 of 4.")
    assert body_of(game.one(CAROL, "superwari show 101")) == summary(
        "It is alice's turn.", BOARDS["c c"]["alice"], TWO_MOVES, deadline=forfeits("alice", TURN_BEGAN + 3),
        next_move=5)
    # the logged undo is a numbered action: the next move is #5, and play goes on
    reply = game.one(ALICE, "superwari move 101 alice alice-pw e #4")
    assert body_of(reply).split("\n")[0] == "Move e received as move #4, but the next move on board 101 is #5."
    assert len(vote(game, "alice", "e #5")) == 2
    assert record_row(game)[1][-1] == (5, 0, "move", "e")
    assert replays_to_the_stored_state(game)


def test_undo_takes_back_the_moves_after_the_proposers_own(game):
    """alice's last move is move 1: bob's reply to it goes too."""
    vote(game, "alice", "undo")
    assert record_row(game)[0] == {"kind": "undo", "by": 0, "accepted": [], "move": 1}
    replies = vote(game, "bob", "accept")
    assert body_of(replies[0]) == summary("It is alice's turn.", BOARDS[""]["alice"],
                                          note="bob accepted: the moves from move 1 on were taken back.",
                                          deadline=forfeits("alice", TURN_BEGAN + 2), next_move=4)
    assert record_row(game)[1] == LOG_2 + [(3, 0, "undo", "1")]
    assert replays_to_the_stored_state(game)
    # an undone move is no longer the proposer's to take back
    reply = game.one(ALICE, "superwari move 101 alice alice-pw undo")
    assert body_of(reply).split("\n")[:3] == [
        "alice has made no move on board 101, so there is none to take back.",
        "undo takes back your own last move and every move after it: send it once you", "have moved."]


# --- errors ---------------------------------------------------------------------------------------

PENDING = "alice proposes"


@pytest.mark.parametrize("before, userid, word, problem, instead", [
    ([], "bob", "accept", "There is no vote on board 101 to accept.",
     "accept and reject answer a draw (propose) or an undo another player proposed;\n"
     "a board mail shows the vote while it is pending."),
    ([], "alice", "Reject", "There is no vote on board 101 to reject.",
     "accept and reject answer a draw (propose) or an undo another player proposed;\n"
     "a board mail shows the vote while it is pending."),
    ([PENDING], "alice", "accept", "alice proposed this vote, so only bob can accept or reject it.",
     "Wait for the answer; a move by any player, yours too, cancels the vote."),
    ([PENDING], "alice", "reject", "alice proposed this vote, so only bob can accept or reject it.",
     "Wait for the answer; a move by any player, yours too, cancels the vote."),
    ([PENDING], "alice", "propose", "A vote is already pending on board 101: alice's proposal of a draw.",
     "Wait for the answer to it: one vote at a time."),
    ([PENDING], "bob", "undo", "A vote is already pending on board 101: alice's proposal of a draw.",
     "Answer it first: superwari move 101 bob PASSWORD accept (or reject)"),
])
def test_vote_errors_change_nothing(game, before, userid, word, problem, instead):
    for _ in before:
        vote(game, "alice", "propose")
    state = record_row(game)
    reply = game.one(ADDRESS[userid], f"superwari move 101 {userid} {userid}-pw {word}")
    deadline = forfeits("alice", TURN_BEGAN) + ("\n" + VOTE_DRAW if before else "")
    board = summary("It is alice's turn.", BOARDS["c c"][userid], TWO_MOVES, deadline=deadline, next_move=3)
    assert (reply.subject, reply.to, body_of(reply)) == ("Super-Wari Board 101 Error", [ADDRESS[userid]], error(
        problem, instead, f"> Subject: superwari move 101 {userid} {MASK} {word}", board))
    assert record_row(game) == state


def test_undo_before_the_proposers_first_move(server):
    server.signup("alice", "bob")
    server.send(ALICE, "superwari challenge alice alice-pw bob")
    server.send(ALICE, "superwari move 101 alice alice-pw c")
    reply = server.one(BOB, "superwari move 101 bob bob-pw undo")
    assert (reply.subject, body_of(reply).split("\n")[:3]) == ("Super-Wari Board 101 Error", [
        "bob has made no move on board 101, so there is none to take back.",
        "undo takes back your own last move and every move after it: send it once you", "have moved."])
    assert record_row(server) == (None, [(1, 0, "move", "c")], "active", "")


def test_a_non_player_cannot_vote(game):
    vote(game, "alice", "propose")
    reply = game.one(CAROL, "superwari move 101 carol carol-pw accept")
    assert body_of(reply).split("\n")[0] == "carol does not play on Super-Wari board 101; its players are alice, bob."
    assert record_row(game)[0] == {"kind": "draw", "by": 0, "accepted": []}


def test_survive_has_no_votes(server):
    """Survive cannot end in a tie and has chance and hidden information; its own
    `accept N` answers offers, so a bare accept is the engine's to judge."""
    server.signup("alice", "bob")
    server.send(ALICE, "survive challenge alice alice-pw bob")
    for word, problem, instead in [
        ("propose", "Survive cannot end in a tie, so no draw can be proposed on board 101.",
         "Play on, or give up with: survive resign 101 alice PASSWORD"),
        ("undo", "Survive has chance and hidden information, so moves cannot be taken back on\nboard 101.",
         "Send your next move instead: survive move 101 alice PASSWORD MOVE"),
    ]:
        reply = server.one(ALICE, f"survive move 101 alice alice-pw {word}")
        text = body_of(reply)
        assert (reply.subject, text.split("\n\n")[0]) == ("Survive Board 101 Error", f"{problem}\n{instead}")
        assert text.endswith(f"\nYour message:\n> Subject: survive move 101 alice {MASK} {word}\n")
    reply = server.one(ALICE, "survive move 101 alice alice-pw accept")
    assert reply.subject == "Survive Board 101 Error"
    assert body_of(reply).startswith("Move accept is not legal on board 101: ")
    assert record_row(server, "survive") == (None, [], "active", "")


@pytest.mark.parametrize("game_type, title, params", [("survival", "Survival", ""), ("serpent", "Serpent", " -size=4")])
def test_survival_and_serpent_cannot_draw_but_can_undo(server, game_type, title, params):
    server.signup("alice", "bob")
    server.send(ALICE, f"{game_type} challenge alice alice-pw bob{params}")
    reply = server.one(BOB, f"{game_type} move 101 bob bob-pw propose")
    assert (reply.subject, body_of(reply).split("\n")[:2]) == (f"{title} Board 101 Error", [
        f"{title} cannot end in a tie, so no draw can be proposed on board 101.",
        f"Play on, or give up with: {game_type} resign 101 bob PASSWORD"])
    engine = get_game(game_type)
    with server.sessions() as session:
        state = engine.restore(find_game(session, game_type, 101).state)
    first = engine.legal_moves(state, 0)[0]
    vote(server, "alice", first, game_name=game_type)
    assert len(vote(server, "alice", "undo", game_name=game_type)) == 2
    replies = vote(server, "bob", "accept", game_name=game_type)
    assert [r.subject for r in replies] == [f"{title} Board 101 alice"] * 2
    assert "bob accepted: the moves from move 1 on were taken back.\n" in body_of(replies[0])
    assert record_row(server, game_type) == (None, [(1, 0, "move", first), (2, 0, "undo", "1")], "active", "")
    assert replays_to_the_stored_state(server, game_type)


# --- what everyone sees ---------------------------------------------------------------------------


def test_the_vote_line_is_on_every_board_mail_while_pending(game):
    game.one(CAROL, "superwari subscribe 101 carol carol-pw")
    replies = vote(game, "alice", "undo")
    assert [r.to for r in replies] == [[ALICE], [BOB], [CAROL]]
    line = "Vote: alice proposes to take back the moves from move 1 on; waiting for bob to\naccept or reject."
    assert all(f"\n{line}\n" in body_of(r) for r in replies)
    assert f"\n{line}\n" in body_of(game.one(CAROL, "superwari show 101"))
    assert f"\n{line}\n" in body_of(game.one(BOB, "superwari showas 101 bob bob-pw"))
    assert line not in body_of(game.one(CAROL, "superwari show 101#2"))  # an old position has no vote
    replies = vote(game, "bob", "reject")
    assert [r.to for r in replies] == [[ALICE], [BOB], [CAROL]]
    assert not any("Vote:" in body_of(r) for r in replies)
    assert "Vote:" not in body_of(game.one(CAROL, "superwari show 101"))


def test_a_vote_pending_when_the_game_ends_is_shown_no_more(game):
    vote(game, "alice", "propose")
    replies = game.send(BOB, "superwari resign 101 bob bob-pw")
    assert not any("Vote:" in body_of(r) for r in replies)
    reply = game.one(BOB, "superwari move 101 bob bob-pw accept")
    assert body_of(reply).split("\n")[0] == "Super-Wari board 101 is over: Game won by alice."


def test_help_documents_the_votes(server):
    reply = server.one(ALICE, "help move")
    assert (reply.subject, body_of(reply)) == ("pbmserv help", (
        "GAME move BOARD USERID PASSWORD MOVE [#N]\n"
        "    make your move, or vote (#N: only if it is the N-th move on the board)\n\n"
        "The #N guard keeps a re-sent or stale mail from playing twice; every board\nmail says the number its next move takes (Next move: #N).\n\n"
        "In the games that allow votes, MOVE may also be:\n"
        "  propose  propose a draw (games that can end in a tie)\n"
        "  undo     propose to take back your last move and every move after it\n"
        "           (games without chance or hidden information)\n"
        "  accept   agree to the vote another player proposed\n"
        "  reject   refuse it: the vote is cancelled\n"
        "A vote passes once every other player accepts; a reject, or a move by\n"
        "anyone, cancels it. One vote at a time; the board mails show it.\n"))
    assert "  superwari move BOARD USERID PASSWORD MOVE [#N]\n      make your move, or vote (" in body_of(
        server.one(ALICE, "superwari help"))


# --- through replay and serve -----------------------------------------------------------------------


def vote_mails() -> list:
    """Sign-ups, a Super-Wari challenge, two moves, a rejected draw, an accepted undo
    (sent as a reply whose body holds the command), then an agreed draw."""
    clock = datetime(2026, 11, 1, 9, 0, tzinfo=timezone.utc)
    lines = [("alice", "signup alice alice-secret", ""), ("bob", "signup bob bob-secret", ""),
             ("alice", "superwari challenge alice alice-secret bob", ""),
             ("alice", "superwari move 101 alice alice-secret c #1", ""),
             ("bob", "superwari move 101 bob bob-secret c #2", ""),
             ("bob", "superwari move 101 bob bob-secret propose", "Tired already?\n"),
             ("alice", "superwari move 101 alice alice-secret reject", ""),
             ("alice", "superwari move 101 alice alice-secret d #3", ""),
             ("alice", "superwari move 101 alice alice-secret undo", "Oops.\n"),
             ("bob", "Re: Super-Wari Board 101 bob", "superwari move 101 bob bob-secret accept\n\nFine.\n"),
             ("alice", "superwari move 101 alice alice-secret propose #5", ""),
             ("bob", "superwari move 101 bob bob-secret accept", "")]
    return [mail(f"{who}@example.org", subject, body, clock + timedelta(minutes=10 * n), n + 1)
            for n, (who, subject, body) in enumerate(lines)]


EXPECTED_NOTES = [  # the note of each board mail pair after the challenge and two moves
    f"bob proposes a draw. {ANSWER}",
    "alice rejected bob's proposal of a draw.",
    "",  # alice's d
    f"alice proposes to take back the moves from move 3 on. {ANSWER}",
    "bob accepted: the moves from move 3 on were taken back.",
    f"alice proposes a draw. {ANSWER}",
    "bob accepted: the draw was agreed.",
]


def note_of(body: str) -> str:
    """The note of a board mail: its lines after the status line, up to the next move's
    number or the blank line."""
    lines = body.split("\n")[3:]
    end = next(n for n, line in enumerate(lines) if line == "" or line.startswith("Next move: #"))
    return "\n".join(lines[:end])


def test_votes_through_pbmserv_replay(tmp_path, capsys, monkeypatch, serve_url):
    monkeypatch.chdir(tmp_path)
    for name in ("PBMSERV_SERVER_SEED", "PBMSERV_DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PBMSERV_SECURITY_PASSWORD_COST", "fast")
    mails_in = vote_mails()
    box = write_mbox(tmp_path / "votes.mbox", mails_in)
    url = serve_url
    assert main(["replay", str(box), "--db", url, "--outbox", "out"]) == 0
    assert "Replayed 12 mails: 12 answered, 0 ignored (loop rules), 0 duplicates, 0 failed." in capsys.readouterr().out
    sent_back = [(m["To"], m["Subject"], plain(m))
                 for m in maildir_messages(tmp_path / "out")]
    assert not [subject for _to, subject, _body in sent_back if "rror" in subject]
    boards = sent_back[2 + 2 * 3:]  # after the sign-ups, the challenge and two moves
    assert [to for to, _subject, _body in boards] == ["alice@example.org", "bob@example.org"] * 7
    assert [note_of(body) for _to, _subject, body in boards[::2]] == EXPECTED_NOTES
    assert "\nbob writes:\nFine.\n" in boards[9][2]
    assert boards[-1][1] == "Super-Wari Board 101"
    assert boards[-1][2].split("\n")[2] == "Draw agreed: the game is a tie."
    with Session(create_engine(url)) as session:
        record = session.scalar(select(GameRecord))
        assert [(m.number, m.seat, m.kind, m.move) for m in record.moves] == [
            (1, 0, "move", "c"), (2, 1, "move", "c"), (3, 0, "move", "d"), (4, 0, "undo", "3"), (5, 0, "draw", "draw")]
        assert (record.status, record.vote) == ("finished", None)
        assert record.state == get_game("superwari").serialise(replay(record))


def test_votes_through_a_real_serve(tmp_path, serve_url):
    running = RunningServer(tmp_path, url=serve_url)
    try:
        mails_in = vote_mails()
        for message in mails_in:
            running.send(message)
        expected = 2 + 2 * (len(mails_in) - 2)  # a reply to each sign-up, a board mail pair for the rest
        replies = running.replies(expected)
        assert len(replies) == expected
        assert not [r["Subject"] for r in replies if "rror" in r["Subject"]]
        last = replies[-2:]  # the agreed draw, to both players
        assert sorted((r["Subject"], r["To"]) for r in last) == [("Super-Wari Board 101", ALICE),
                                                                 ("Super-Wari Board 101", BOB)]
        for reply in last:
            assert plain(reply).split("\n")[2:4] == [
                "Draw agreed: the game is a tie.", "bob accepted: the draw was agreed."]
        with running.sessions() as session:
            record = session.scalar(select(GameRecord))
            assert [m.kind for m in record.moves] == ["move", "move", "move", "undo", "draw"]
            ratings = session.scalars(select(Rating).order_by(Rating.id)).all()
            assert [(r.rating, r.games) for r in ratings] == [(1600.0, 1), (1600.0, 1)]
    finally:
        running.stop()
