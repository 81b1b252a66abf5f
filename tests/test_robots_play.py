"""Robot players by mail (pbmserv/robots/turns.py): challenged like anyone, they move
at once after the mail that gives them the turn, through the path a player's move
takes (logged, board mails to the people), and a replay plays the same moves; their
names are reserved, they have no password and get no mail."""

from __future__ import annotations


from sqlalchemy import select

from conftest import body_of
from pbmserv.games import get_game
from pbmserv.play import replay, seeded_rng
from pbmserv.robots import choose
from pbmserv.store.models import GameRecord, Outbound, User

ALICE, BOB = "alice@example.org", "bob@example.org"


def record_of(server, number: int = 101, game: str = "wari") -> GameRecord:
    with server.sessions() as session:
        record = session.scalar(select(GameRecord).where(GameRecord.game_type == game, GameRecord.board == number))
        record.moves  # loaded while the session is open
        return record


def test_a_robot_moves_at_once_after_the_mail_that_gives_it_the_turn(server):
    server.signup("alice")
    started = server.send(ALICE, "wari challenge alice alice-pw robot3")
    assert [(r.to, r.subject) for r in started] == [([ALICE], "New Wari Board 101 alice")]
    replies = server.send(ALICE, "wari move 101 alice alice-pw c")
    assert [(r.to, r.subject) for r in replies] == [([ALICE], "Wari Board 101 robot3"),
                                                    ([ALICE], "Wari Board 101 alice")]
    record = record_of(server)
    assert [(m.seat, m.kind) for m in record.moves] == [(0, "move"), (1, "move")]
    robot_move = record.moves[1]
    assert robot_move.inbound_id is None and robot_move.created_at == record.moves[0].created_at
    # the move the strong robot chooses from the position, with the board's seeded RNG
    game = get_game("wari")
    expected = choose(game, replay(record, 1), 1, 3, seeded_rng(record.seed, "robot", 2))
    assert robot_move.move == expected
    assert f"#2 {expected}" in body_of(replies[1]) and "It is alice's turn." in body_of(replies[1])


def test_no_mail_is_written_for_a_robot(server):
    server.signup("alice")
    server.send(ALICE, "superwari challenge alice alice-pw robot1")
    server.send(ALICE, "superwari move 101 alice alice-pw c")
    with server.sessions() as session:
        recipients = {address for row in session.scalars(select(Outbound)) for address in row.recipients}
        robots = session.scalars(select(User).where(User.robot.is_not(None))).all()
    assert recipients == {ALICE}
    assert [(u.userid, u.robot, u.addresses) for u in robots] == [("robot1", 1, []), ("robot2", 2, []),
                                                                    ("robot3", 3, [])]


def test_robot_names_are_reserved_and_have_no_password(server):
    server.signup("alice")
    taken = server.one("eve@example.org", "signup Robot7 secret")
    assert body_of(taken).startswith(
        "'Robot7' cannot be a userid: robot1, robot2, ... are robot players.\n"
        "Choose another userid and send: signup USERID PASSWORD [ADDRESS ...]\n")
    server.send(ALICE, "wari challenge alice alice-pw robot2")
    posing = server.one("eve@example.org", "wari resign 101 robot2 !")
    assert body_of(posing).startswith(
        "robot2 is a robot player: it has no password, and it moves by itself.\n"
        "To play it, send: GAME challenge USERID PASSWORD robot2\n")
    assert record_of(server).status == "active"


def test_a_player_may_have_ten_boards_with_robots(server):
    server.signup("alice")
    for n in range(10):
        server.send(ALICE, f"wari challenge alice alice-pw robot{1 + n % 3}")
    refused = server.one(ALICE, "serpent challenge alice alice-pw robot1")
    assert body_of(refused).startswith(
        "alice plays 10 running boards with robots, the most one player may.\n"
        "Finish one first, or challenge a person: send 'players' for a list.\n")
    server.send(ALICE, "wari resign 101 alice alice-pw")
    assert server.send(ALICE, "serpent challenge alice alice-pw robot1")[0].subject == "New Serpent Board 101 alice"


def test_a_robot_move_cancels_a_pending_vote(server):
    server.signup("alice")
    server.send(ALICE, "wari challenge alice alice-pw robot1")
    server.send(ALICE, "wari move 101 alice alice-pw c")  # the robot answers
    replies = server.send(ALICE, "wari move 101 alice alice-pw undo")
    # the undo is proposed while it is alice's turn: the robot does not answer votes,
    # and alice's own move would cancel it; nothing waits for the robot meanwhile
    assert "Vote: alice proposes" in body_of(replies[0])
    assert record_of(server).robot_turn is False


def test_a_robots_process_of_its_own_plays_beside_the_others_over_smtp(tmp_path, serve_url):
    """`serve --role robots` apart from a process with every other role: the robot's
    move reaches the player by mail, as a person's would."""
    import email

    from conftest import make_mail, plain, sent
    from test_smtp import RunningServer

    main = RunningServer(tmp_path, url=serve_url, roles=("smtp", "worker", "sender", "scheduler"))
    robots = RunningServer(tmp_path / "robots", url=serve_url, roles=("robots",))
    try:
        for n, subject in enumerate(["signup alice alice-pw", "wari challenge alice alice-pw robot2",
                                     "wari move 101 alice alice-pw c"]):
            main.send(email.message_from_bytes(make_mail(ALICE, subject, date=sent(n), message_id=f"<r{n}@x>")))
        replies = main.replies(4)
    finally:
        robots.stop()
        main.stop()
    assert [r["Subject"] for r in replies] == ["pbmserv signup", "New Wari Board 101 alice",
                                               "Wari Board 101 robot2", "Wari Board 101 alice"]
    assert "It is alice's turn." in plain(replies[3]) and "robot2" in plain(replies[3])
    assert read_robots_maildir(tmp_path / "robots") == []  # the robots process sends nothing itself


def read_robots_maildir(path):
    from test_smtp import read_maildir
    return read_maildir(path / "outbox") if (path / "outbox").exists() else []


def test_anyone_may_match_robots_to_watch_them_but_only_admins_match_people(make_server):
    server = make_server(server={"admins": ["root"]})
    server.signup("alice", "bob")
    server.add_user("root")
    started = server.send(ALICE, "wari match alice alice-pw robot1 robot2")
    assert [(r.to, r.subject) for r in started][0] == ([ALICE], "New Wari Board 101 robot1")
    assert body_of(started[0]).startswith(
        "You watch Wari board 101 now: every board mail of it comes to you too.\n"
        "To stop, send: wari unsubscribe 101 alice PASSWORD\n\n")
    # the robots played it through at once; alice got every board mail, the last one the end
    assert record_of(server).status == "finished" and len(started) == len(record_of(server).moves) + 1
    assert "Game won by" in body_of(started[-1]) or "tie" in body_of(started[-1])
    refused = server.one(ALICE, "wari match alice alice-pw bob robot1")
    assert body_of(refused).startswith(
        "Only admins may start a board between people, and alice is not one.\n"
        "To play bob, send: wari challenge alice PASSWORD bob\n")
    paired = server.send("root@example.org", "wari match root root-pw alice bob")
    assert sorted((r.to[0], r.subject) for r in paired) == [
        (ALICE, "New Wari Board 102 alice"), (BOB, "New Wari Board 102 alice"),
        ("root@example.org", "New Wari Board 102 alice")]
    bob = body_of(next(r for r in paired if r.to == [BOB]))
    assert "root, an admin, started this board for you. Move, or decline:\n  wari decline 102 bob PASSWORD\n" in bob
    assert "wari decline 102 alice PASSWORD" in body_of(next(r for r in paired if r.to == [ALICE]))


def test_boards_between_robots_end_at_once_and_are_capped_a_day_instead(server):
    server.signup("alice")
    for n in range(10):
        server.send(ALICE, "survival match alice alice-pw robot1 robot2")
    with server.sessions() as session:  # games end fast: count the ones still running
        running = session.scalar(select(GameRecord.id).where(GameRecord.status == "active").limit(1))
    assert running is None  # robots never wait: nothing holds the cap
    reply = server.send(ALICE, "wari challenge alice alice-pw robot3")
    assert reply[0].subject == "New Wari Board 101 alice"
    # but ten matches a day: one mail of many match lines cannot buy many robot games
    refused = server.one(ALICE, "survival match alice alice-pw robot1 robot2")
    assert body_of(refused).startswith("alice started 10 matches in the last 24 hours, the most a day.\n"
                                       "Wait a day, then send it again.\n")


def test_help_robots_names_them_and_says_how_to_play_them(server):
    reply = server.one(ALICE, "help robots")
    text = body_of(reply)
    assert text.startswith("Robots: computer opponents for every game, at any hour\n\n"
                           "  robot1   weak: a beginner's first opponent\n")
    assert "  wari challenge USERID PASSWORD robot1\n" in text
    assert "You may play at most 10 running boards with robots at a time.\n" in text
    assert max(len(line) for line in reply.text.splitlines()) <= 78
