"""Records by mail (issue 9): `GAME history [USERID]`, `GAME standings` (Elo), and the
complete game record in the final board mail; through the worker, `pbmserv replay` and a
real `serve`. Every reply text is compared as a whole."""

from __future__ import annotations

import math
import re
from datetime import datetime, timedelta, timezone

import pytest
from sqlalchemy import select

from conftest import FOOTER, body_of, maildir_messages, plain
from mailgen import game_mails, mail, write_mbox
from pbmserv.cli import main
from pbmserv.commands import records
from pbmserv.games import get_game
from pbmserv.play import outcome_line
from pbmserv.render import render_board
from pbmserv.store.models import Rating

ALICE = "alice@example.org"
BOB = "bob@example.org"
CAROL = "carol@example.org"
MASK = "********"
LEGEND = "? provisional: fewer than 20 rated games.\n"
SHOW_HINT = 'Send "superwari show BOARD" for the whole game: every move and the final\nboard.\n'


def elo(first: float, second: float, score: float) -> tuple[float, float]:
    """Both ratings after a game that `first` scored `score` (1, 0.5, 0) in."""
    change = 32 * (score - 1 / (1 + 10 ** ((second - first) / 400)))
    return first + change, second - change


def whole(rating: float) -> int:
    return math.floor(rating + 0.5)


def finish(server, game: str, winner: str, loser: str, board: int, first: str | None = None) -> None:
    """A quick finished game: a challenge (by `first`, the winner by default), then the loser resigns."""
    first = first or winner
    second = loser if first == winner else winner
    assert len(server.send(f"{first}@example.org", f"{game} challenge {first} {first}-pw {second}")) == 2
    assert len(server.send(f"{loser}@example.org", f"{game} resign {board} {loser} {loser}-pw")) == 2


def history(server, args: str = "", sender: str = CAROL) -> str:
    reply = server.one(sender, f"superwari history {args}".strip())
    assert (reply.subject, reply.to) == ("Super-Wari history", [sender])
    return body_of(reply)


def standings(server, game: str = "superwari", sender: str = CAROL) -> str:
    reply = server.one(sender, f"{game} standings")
    assert (reply.subject, reply.to) == (f"{get_game(game).title} standings", [sender])
    return body_of(reply)


def error(problem: str, instead: str, subject: str) -> str:
    return f"{problem}\n{instead}\n\nYour message:\n> Subject: {subject}\n"


@pytest.fixture
def players(server):
    server.signup("alice", "bob", "carol")
    return server


@pytest.fixture
def admin_server(make_server):
    server = make_server(server={"admins": ["carol"]})
    server.signup("alice", "bob")
    server.add_user("carol")
    return server


# --- history ------------------------------------------------------------------------------


def test_history_lists_finished_boards_newest_first_with_results(players):
    finish(players, "superwari", "alice", "bob", 101)
    finish(players, "superwari", "carol", "alice", 102, first="alice")  # alice challenges, alice resigns
    players.send(ALICE, "superwari challenge alice alice-pw bob")  # 103 runs: not history
    finish(players, "wari", "bob", "carol", 101)  # another game type
    players.clock += timedelta(days=1)
    finish(players, "superwari", "bob", "carol", 104)
    assert history(players) == (
        "Finished Super-Wari boards, the newest first:\n\n"
        "  104  2026-11-02  bob, carol: Game won by bob.\n"
        "  102  2026-11-01  alice, carol: Game won by carol.\n"
        "  101  2026-11-01  alice, bob: Game won by alice.\n\n" + SHOW_HINT)
    assert history(players, "ALICE") == (
        "Finished Super-Wari boards of alice, the newest first:\n\n"
        "  102  2026-11-01  alice, carol: Game won by carol.\n"
        "  101  2026-11-01  alice, bob: Game won by alice.\n\n" + SHOW_HINT)


def test_history_with_no_finished_board(players):
    players.send(ALICE, "superwari challenge alice alice-pw bob")
    assert history(players) == "Finished Super-Wari boards, the newest first:\n\n  none yet.\n"
    assert history(players, "bob") == "Finished Super-Wari boards of bob, the newest first:\n\n  none yet.\n"


def test_history_of_an_unknown_user_is_an_error(players):
    reply = players.one(CAROL, "superwari history zed")
    assert (reply.subject, reply.to, body_of(reply)) == ("Super-Wari error", [CAROL], error(
        "There is no user zed.", "Check the spelling of the userid, or send: superwari history",
        "superwari history zed"))


def test_history_has_at_most_one_word(players):
    reply = players.one(CAROL, "superwari history alice bob")
    assert body_of(reply) == error("superwari history: too many words for this command.",
                                   "Send: superwari history [USERID]", "superwari history alice bob")


def test_history_lists_only_the_newest_boards(players, monkeypatch):
    monkeypatch.setattr(records, "HISTORY_LIMIT", 2)
    for board in (101, 102, 103):
        finish(players, "superwari", "alice", "bob", board)
    assert history(players) == (
        "Finished Super-Wari boards, the newest first (the last 2 of 3):\n\n"
        "  103  2026-11-01  alice, bob: Game won by alice.\n"
        "  102  2026-11-01  alice, bob: Game won by alice.\n\n" + SHOW_HINT)


# --- standings ----------------------------------------------------------------------------


def test_standings_after_one_game_and_a_second_by_the_formula(players):
    assert standings(players) == (
        "Super-Wari standings (Elo ratings; everyone starts at 1600):\n\n"
        "  nobody yet: players are rated when their first Super-Wari game ends.\n")
    finish(players, "superwari", "alice", "bob", 101)
    assert standings(players) == (
        "Super-Wari standings (Elo ratings; everyone starts at 1600):\n\n"
        "  1. alice  1616?  1 game\n"
        "  2. bob    1584?  1 game\n\n" + LEGEND)
    # carol (1600) challenges alice (1616) and resigns: a win for the favourite counts less
    finish(players, "superwari", "alice", "carol", 102, first="carol")
    carol, alice = elo(1600, 1616, 0)
    assert (whole(alice), whole(carol)) == (1631, 1585)
    assert standings(players) == (
        "Super-Wari standings (Elo ratings; everyone starts at 1600):\n\n"
        f"  1. alice  {whole(alice)}?  2 games\n"
        f"  2. carol  {whole(carol)}?  1 game\n"
        "  3. bob    1584?  1 game\n\n" + LEGEND)
    with players.sessions() as session:
        stored = {(r.user.userid, r.game_type): (r.rating, r.games) for r in session.scalars(select(Rating))}
    assert stored == {("alice", "superwari"): (pytest.approx(alice), 2), ("bob", "superwari"): (1584, 1),
                      ("carol", "superwari"): (pytest.approx(carol), 1)}
    assert standings(players, "wari") == (  # each game type has its own ratings
        "Wari standings (Elo ratings; everyone starts at 1600):\n\n"
        "  nobody yet: players are rated when their first Wari game ends.\n")


def test_equal_ratings_share_a_rank(players):
    players.signup("dave")
    finish(players, "wari", "carol", "dave", 101)
    finish(players, "wari", "alice", "bob", 102)
    assert standings(players, "wari") == (
        "Wari standings (Elo ratings; everyone starts at 1600):\n\n"
        "  1. alice  1616?  1 game\n"
        "  1. carol  1616?  1 game\n"
        "  3. bob    1584?  1 game\n"
        "  3. dave   1584?  1 game\n\n" + LEGEND)


def test_an_aborted_board_is_unrated(admin_server):
    server = admin_server
    server.send(ALICE, "superwari challenge alice alice-pw bob")
    assert len(server.send(CAROL, "abort superwari 101 carol carol-pw")) == 3  # the board to both, the reply
    assert standings(server) == (
        "Super-Wari standings (Elo ratings; everyone starts at 1600):\n\n"
        "  nobody yet: players are rated when their first Super-Wari game ends.\n")
    finish(server, "superwari", "bob", "alice", 102)
    assert history(server) == (
        "Finished Super-Wari boards, the newest first:\n\n"
        "  102  2026-11-01  bob, alice: Game won by bob.\n"
        "  101  2026-11-01  alice, bob: Game aborted by carol: no result.\n\n" + SHOW_HINT)
    assert standings(server) == (
        "Super-Wari standings (Elo ratings; everyone starts at 1600):\n\n"
        "  1. bob    1616?  1 game\n"
        "  2. alice  1584?  1 game\n\n" + LEGEND)


def test_a_multi_player_game_is_unrated(players):
    players.send(ALICE, "survive challenge alice alice-pw bob carol")
    players.send(BOB, "survive resign 101 bob bob-pw")
    assert len(players.send(CAROL, "survive resign 101 carol carol-pw")) == 3  # over: the board to each
    reply = players.one(CAROL, "survive history")
    assert (reply.subject, body_of(reply)) == ("Survive history", (
        "Finished Survive boards, the newest first:\n\n"
        "  101  2026-11-01  alice, bob, carol: Game won by alice.\n\n"
        'Send "survive show BOARD" for the whole game: every move and the final board.\n'))
    reply = players.one(CAROL, "survive standings")
    assert (reply.subject, body_of(reply)) == ("Survive error", error(
        "Survive may be played by more than two, so it is not rated.",
        "Standings are kept for the two-player games: serpent, superwari, survival,\nwari.",
        "survive standings"))
    with players.sessions() as session:
        assert session.scalars(select(Rating)).all() == []


def test_the_provisional_mark_goes_after_20_games(players):
    players.signup("dave")
    finish(players, "superwari", "carol", "dave", 101)
    alice = bob = 1600.0
    for board in range(102, 122):
        finish(players, "superwari", "alice", "bob", board)
        alice, bob = elo(alice, bob, 1)
        if board == 120:  # 19 games
            assert standings(players).splitlines()[2:4] == [
                f"  1. alice  {whole(alice)}?  19 games", "  2. carol  1616?  1 game"]
    assert (whole(alice), whole(bob)) == (1765, 1435)  # the favourite gains less each time
    assert standings(players) == (
        "Super-Wari standings (Elo ratings; everyone starts at 1600):\n\n"
        "  1. alice  1765   20 games\n"
        "  2. carol  1616?  1 game\n"
        "  3. dave   1584?  1 game\n"
        "  4. bob    1435   20 games\n\n" + LEGEND)


def test_no_legend_without_a_provisional_rating(players, monkeypatch):
    monkeypatch.setattr(records, "PROVISIONAL_GAMES", 1)
    finish(players, "superwari", "alice", "bob", 101)
    assert standings(players) == (
        "Super-Wari standings (Elo ratings; everyone starts at 1600):\n\n"
        "  1. alice  1616   1 game\n"
        "  2. bob    1584   1 game\n")


def test_help_on_the_record_commands(players):
    reply = players.one(CAROL, "help history")
    assert body_of(reply) == (
        "GAME history [USERID]\n"
        "    the finished boards of this game (or of a player), with their results\n\n"
        "The newest first, at most 50: each board's number, the date it ended\n"
        "(UTC), its players and its result. 'GAME show BOARD' sends a whole game:\n"
        "every move and the final board.\n")
    reply = players.one(CAROL, "help standings")
    assert body_of(reply) == (
        "GAME standings\n"
        "    the players' Elo ratings in this game (two-player games only)\n\n"
        "Everyone starts at 1600; each game that ends with a result moves both\n"
        "players' ratings (K = 32). Aborted boards are not rated. A rating marked ?\n"
        "is provisional: its player has finished fewer than 20 rated games.\n")


# --- the complete game record ---------------------------------------------------------------


def test_the_final_board_mail_is_the_complete_game_record(server):
    mails = game_mails("superwari", seed=1)
    moves = [re.search(r"superwari move 101 \w+ \S+ (\w+) #", m["Subject"] + plain(m))[1]
             for m in mails if "move 101" in m["Subject"] + plain(m)]
    assert len(moves) == 54  # 27 rows: far more than the 10 a running board shows
    game = get_game("superwari")
    state = game.setup(2, {p.name: p.default for p in game.params}, None)
    for number, move in enumerate(moves):
        game.apply(state, number % 2, move, None)
    # each cell carries its move's number, as the #N guard counts it
    table = ["  alice  bob"] + [f"  {f'#{2 * row + 1} {moves[2 * row]}':<7}#{2 * row + 2} {moves[2 * row + 1]}"
                                for row in range(27)]
    replies = []
    for message in mails[:-1]:  # all but the closing `show`
        replies = server.send_raw(message.as_bytes())
        if message is mails[40]:  # move 38 of 54, row 19: while the game runs, the last 10 rows only
            assert "\n".join(table[:1] + table[10:20]) + "\n\n" in body_of(replies[0])
            assert table[9] not in body_of(replies[0])
    assert [(r.to, r.subject) for r in replies] == [([ALICE], "Super-Wari Board 101 **"),
                                                    ([BOB], "Super-Wari Board 101 **")]
    result = outcome_line(game.result(state), ["alice", "bob"])
    assert result == "Game won by bob."
    for seat, reply in enumerate(replies):
        drawing = render_board(game, game.view(state, seat), ["alice", "bob"]).rstrip("\n")
        assert body_of(reply) == (f"Summary of Super-Wari Board 101\n\n{result}\n\n" + "\n".join(table)
                                  + f"\n\n{drawing}\n\nbob writes:\nYour turn.\n")


# --- through replay and serve ---------------------------------------------------------------


def record_mails(start: datetime) -> list:
    """Sign-ups, two quick games (bob resigns, then alice), the records asked for by carol."""
    subjects = [("alice", "signup alice alice-pw"), ("bob", "signup bob bob-pw"), ("carol", "signup carol carol-pw"),
                ("alice", "superwari challenge alice alice-pw bob"), ("bob", "superwari resign 101 bob bob-pw"),
                ("carol", "superwari challenge carol carol-pw alice"), ("alice", "superwari resign 102 alice alice-pw"),
                ("carol", "superwari history"), ("carol", "superwari history bob"), ("carol", "superwari standings")]
    return [mail(f"{who}@example.org", subject, "", start + timedelta(minutes=5 * n), n + 1)
            for n, (who, subject) in enumerate(subjects)]


def records_texts(date: str) -> list[str]:
    """What carol's three record mails say."""
    carol, alice = elo(1600, 1616, 1)
    assert (whole(carol), whole(alice)) == (1617, 1599)  # the lower-rated winner gains more than 16
    return [
        "Finished Super-Wari boards, the newest first:\n\n"
        f"  102  {date}  carol, alice: Game won by carol.\n"
        f"  101  {date}  alice, bob: Game won by alice.\n\n" + SHOW_HINT,
        "Finished Super-Wari boards of bob, the newest first:\n\n"
        f"  101  {date}  alice, bob: Game won by alice.\n\n" + SHOW_HINT,
        "Super-Wari standings (Elo ratings; everyone starts at 1600):\n\n"
        "  1. carol  1617?  1 game\n"
        "  2. alice  1599?  2 games\n"
        "  3. bob    1584?  1 game\n\n" + LEGEND,
    ]


def without_footer(body: str) -> str:
    assert body.endswith(FOOTER), body
    return body[: -len(FOOTER)] + "\n"


def test_records_through_replay(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    for name in ("PBMSERV_SERVER_SEED", "PBMSERV_DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    box = write_mbox(tmp_path / "records.mbox", record_mails(datetime(2026, 12, 31, 23, 0, tzinfo=timezone.utc)))
    assert main(["replay", str(box), "--outbox", "out"]) == 0
    assert "Replayed 10 mails: 10 answered" in capsys.readouterr().out
    sent = maildir_messages(tmp_path / "out")
    last = [(m["To"], m["Subject"], without_footer(plain(m))) for m in sent[-3:]]
    texts = records_texts("2026-12-31")
    assert last == [(CAROL, "Super-Wari history", texts[0]), (CAROL, "Super-Wari history", texts[1]),
                    (CAROL, "Super-Wari standings", texts[2])]


def test_records_through_serve(tmp_path, serve_url):
    from test_smtp import RunningServer

    running = RunningServer(tmp_path, url=serve_url)
    try:
        for message in record_mails(datetime(2026, 11, 1, 9, 0, tzinfo=timezone.utc)):
            running.send(message)
        replies = running.replies(3 + 4 * 2 + 3)
    finally:
        running.stop()
    last = [(m["To"], m["Subject"], without_footer(plain(m))) for m in replies[-3:]]
    date = re.search(r"  101  (\d{4}-\d{2}-\d{2})  ", last[0][2])[1]  # the server's own clock: today
    texts = records_texts(date)
    assert last == [(CAROL, "Super-Wari history", texts[0]), (CAROL, "Super-Wari history", texts[1]),
                    (CAROL, "Super-Wari standings", texts[2])]
