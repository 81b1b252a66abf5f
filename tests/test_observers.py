"""Observers and talk on a board (pbmserv/commands/observe.py): subscribe, unsubscribe,
chat; observers' copies of every board mail as the public sees it (moves, resignations,
forfeits, an admin's abort, Survive's hidden hands and private comments); the ` **`
Subject mark of board mails with a real comment; and both over real SMTP (`serve`) and
in `pbmserv replay`. Replies are compared as whole texts; after each error the database
shows that nothing changed."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from sqlalchemy import select

from conftest import body_of, maildir_messages, mails, plain
from mailgen import mail, write_mbox
from pbmserv.cli import main
from pbmserv.store.models import GameRecord, Subscription
from test_smtp import RunningServer

ALICE = "alice@example.org"
BOB = "bob@example.org"
CAROL = "carol@example.org"
DAVE = "dave@example.org"
STRANGER = "someone@example.net"
MASK = "********"
CHAT_USAGE = "superwari chat BOARD USERID PASSWORD"


def heads(replies) -> list[tuple[str, list[str]]]:
    return [(r.subject, r.to) for r in replies]


def copy_for(replies, address: str):
    (found,) = [r for r in replies if r.to == [address]]
    return found


def shown(server, game: str = "superwari", board: int = 101) -> str:
    """The board as `GAME show` gives it to anyone: the public view."""
    return body_of(server.one(STRANGER, f"{game} show {board}"))


def watchers(server) -> list[tuple[str, int, str]]:
    with server.sessions() as session:
        rows = session.scalars(select(Subscription).order_by(Subscription.id)).all()
        games = {g.id: g for g in session.scalars(select(GameRecord))}
        return [(games[s.game_id].game_type, games[s.game_id].board, s.user.userid) for s in rows]


def chat_text(sender: str, text: str, board: int = 101) -> str:
    return (f"{sender} writes on Super-Wari board {board}:\n\n{text}\n\n"
            f"To answer everyone on the board, send: superwari chat {board} USERID PASSWORD\n"
            "with your text on the lines below it.\n")


def error(problem: str, instead: str, quoted: str, board: str = "") -> str:
    text = f"{problem}\n{instead}\n"
    if board:
        text += "\n" + board
    return text + f"\nYour message:\n{quoted}\n"


def watched(server, params: str = "", subscribe: bool = True):
    """alice against bob on Super-Wari board 101; carol watches it. Admins are made
    as the command line makes them (signup refuses their userids)."""
    admins = {admin.lower() for admin in server.config.server.admins}
    for userid in ("alice", "bob", "carol", "dave"):
        server.add_user(userid) if userid in admins else server.signup(userid)
    server.send(ALICE, f"superwari challenge alice alice-pw bob {params}".strip())
    if subscribe:
        server.one(CAROL, "superwari subscribe 101 carol carol-pw")
    return server


@pytest.fixture
def board(server):
    return watched(server)


def no_password_in(replies, *passwords: str) -> None:
    for reply in replies:
        for password in passwords:
            assert password not in reply.subject and password not in reply.body, (reply.to, reply.subject)


# --- subscribe ----------------------------------------------------------------------------------


def test_subscribe_answers_with_the_public_board(server):
    watched(server, subscribe=False)
    public = shown(server)
    reply = server.one(CAROL, "SuperWari Subscribe 101 CAROL carol-pw")
    assert mails([reply]) == [(
        "Super-Wari Board 101 alice", [CAROL],
        "You watch Super-Wari board 101 now: every board mail of it comes to you too.\n"
        "To stop, send: superwari unsubscribe 101 carol PASSWORD\n\n" + public)]
    assert watchers(server) == [("superwari", 101, "carol")]


def test_subscribe_from_another_address_answers_it_and_the_registered_one(server):
    watched(server, subscribe=False)
    reply = server.one(STRANGER, "superwari subscribe 101 carol carol-pw")
    assert (reply.subject, reply.to) == ("Super-Wari Board 101 alice", [STRANGER, CAROL])
    no_password_in([reply], "carol-pw")


@pytest.mark.parametrize("sender, args, problem, instead", [
    (ALICE, "101 alice alice-pw", "alice plays on Super-Wari board 101 and gets its board mails already.",
     "Send 'superwari games' for the boards you could watch."),
    (CAROL, "101 carol carol-pw", "carol watches Super-Wari board 101 already.",
     "To stop, send: superwari unsubscribe 101 carol PASSWORD"),
    (DAVE, "102 dave dave-pw", "Super-Wari board 102 is over: Game won by alice.",
     "Send 'superwari games' for the running boards you could watch."),
    (DAVE, "101 dave carol-pw", "Wrong password for dave.",
     "Send the command again with your password (passwords are case-sensitive).\n"
     "4 tries left: after 5 wrong passwords in an hour, commands with a password are\n"
     "refused for an hour.\nIf you forgot your password, send: forgot dave"),
    (DAVE, "999 dave dave-pw", "There is no Super-Wari board 999.", "Send 'superwari games' for the boards."),
])
def test_subscribe_errors_change_nothing(board, sender, args, problem, instead):
    server = board
    server.send(ALICE, "superwari challenge alice alice-pw bob")
    server.send(BOB, "superwari resign 102 bob bob-pw")
    number = args.split()[0]
    public = shown(server, board=int(number)) if number != "999" else ""
    before = watchers(server)
    reply = server.one(sender, f"superwari subscribe {args}")
    quoted = " ".join(args.split()[:2] + [MASK])
    subject = f"Super-Wari Board {number} Error" if public else "Super-Wari error"
    assert mails([reply]) == [(subject, [sender], error(problem, instead, f"> Subject: superwari subscribe {quoted}",
                                                        public))]
    assert watchers(server) == before == [("superwari", 101, "carol")]


# --- what an observer receives --------------------------------------------------------------------


def test_observer_gets_each_move_as_the_public_sees_it(board):
    server = board
    replies = server.send(ALICE, "superwari move 101 alice alice-pw c", "Take that.")
    assert heads(replies) == [("Super-Wari Board 101 bob **", [ALICE]), ("Super-Wari Board 101 bob **", [BOB]),
                              ("Super-Wari Board 101 bob **", [CAROL])]
    observer = body_of(replies[2])
    assert observer == body_of(replies[0])  # the public view: alice's side at the bottom
    assert observer != body_of(replies[1])
    assert observer == shown(server) + "\nalice writes:\nTake that.\n"
    replies = server.send(BOB, "superwari move 101 bob bob-pw c")
    assert heads(replies) == [("Super-Wari Board 101 alice", [ALICE]), ("Super-Wari Board 101 alice", [BOB]),
                              ("Super-Wari Board 101 alice", [CAROL])]
    assert body_of(replies[2]) == shown(server)


def test_observer_gets_the_resignation(board):
    server = board
    replies = server.send(BOB, "superwari resign 101 bob bob-pw", "Well played.")
    assert heads(replies) == [("Super-Wari Board 101 **", [ALICE]), ("Super-Wari Board 101 **", [BOB]),
                              ("Super-Wari Board 101 **", [CAROL])]
    observer = body_of(replies[2])
    assert observer.startswith("Summary of Super-Wari Board 101\n\nGame won by alice.\nbob resigned.\n\n")
    assert observer == body_of(replies[0])
    assert observer == shown(server).replace("Game won by alice.\n", "Game won by alice.\nbob resigned.\n") + (
        "\nbob writes:\nWell played.\n")


def test_observer_gets_the_forfeit_by_deadline(server):
    watched(server, "-nagtime=off -forfeittime=3d")
    server.send(ALICE, "superwari move 101 alice alice-pw c")
    assert server.wait(timedelta(days=2)) == []
    replies = server.wait(timedelta(days=2))
    assert heads(replies) == [("Super-Wari Board 101", [ALICE]), ("Super-Wari Board 101", [BOB]),
                              ("Super-Wari Board 101", [CAROL])]
    observer = body_of(replies[2])
    assert observer.startswith("Summary of Super-Wari Board 101\n\nGame won by alice.\n"
                               "bob forfeited: no move for 3 days.\n\n  alice       bob\n  #1 c        #2 forfeit\n")
    assert observer == body_of(replies[0])
    assert observer == shown(server).replace("alice.\n", "alice.\nbob forfeited: no move for 3 days.\n", 1)


def test_observer_gets_an_admin_abort(make_server):
    server = watched(make_server(server={"admins": ["dave"]}))
    replies = server.send(DAVE, "abort superwari 101 dave dave-pw", "Abandoned.")
    result = "Game aborted by dave: no result."
    assert heads(replies) == [("pbmserv abort", [DAVE]), ("Super-Wari Board 101 **", [ALICE]),
                              ("Super-Wari Board 101 **", [BOB]), ("Super-Wari Board 101 **", [CAROL])]
    assert body_of(replies[3]) == body_of(replies[1]) == shown(server) + "\ndave writes:\nAbandoned.\n"
    assert f"\n\n{result}\n\n" in body_of(replies[3])


# --- unsubscribe ----------------------------------------------------------------------------------


def test_unsubscribe_stops_the_board_mails(board):
    server = board
    reply = server.one(CAROL, "superwari unsubscribe 101 carol carol-pw")
    assert mails([reply]) == [("pbmserv unsubscribe", [CAROL], "You no longer watch Super-Wari board 101.\n")]
    assert watchers(server) == []
    assert heads(server.send(ALICE, "superwari move 101 alice alice-pw c")) == [
        ("Super-Wari Board 101 bob", [ALICE]), ("Super-Wari Board 101 bob", [BOB])]
    # and carol may watch again
    assert server.one(CAROL, "superwari subscribe 101 carol carol-pw").subject == "Super-Wari Board 101 bob"


def test_unsubscribe_without_watching_is_refused(board):
    server = board
    public = shown(server)
    reply = server.one(DAVE, "superwari unsubscribe 101 dave dave-pw")
    assert mails([reply]) == [("Super-Wari Board 101 Error", [DAVE], error(
        "dave does not watch Super-Wari board 101.", "To watch it, send: superwari subscribe 101 dave PASSWORD",
        f"> Subject: superwari unsubscribe 101 dave {MASK}", public))]
    assert watchers(server) == [("superwari", 101, "carol")]


# --- chat -----------------------------------------------------------------------------------------


def test_chat_of_an_observer_in_the_subject_reaches_the_players(board):
    server = board
    replies = server.send(CAROL, "superwari chat 101 carol carol-pw",
                          "Nice opening!\n\nWhat next?\n-- \ncarol\nThe Watcher")
    text = chat_text("carol", "Nice opening!\n\nWhat next?")
    assert mails(replies) == [
        ("pbmserv chat", [CAROL], "Your chat on Super-Wari board 101 was sent to alice, bob.\n"),
        ("Chat: Super-Wari Board 101 carol", [ALICE], text),
        ("Chat: Super-Wari Board 101 carol", [BOB], text),
    ]
    no_password_in(replies, "carol-pw")


def test_chat_of_a_player_in_the_body_reaches_the_other_player_and_the_observers(board):
    server = board
    server.one(DAVE, "superwari subscribe 101 dave dave-pw")
    replies = server.send(ALICE, "Re: Super-Wari Board 101 alice",
                          "superwari chat 101 alice alice-pw\nWelcome, watchers.\n  > a quote is not relayed\n"
                          "-- \nalice\nSent from my phone")
    text = chat_text("alice", "Welcome, watchers.")
    assert mails(replies) == [
        ("pbmserv chat", [ALICE], "Your chat on Super-Wari board 101 was sent to bob, carol, dave.\n"),
        ("Chat: Super-Wari Board 101 alice", [BOB], text),
        ("Chat: Super-Wari Board 101 alice", [CAROL], text),
        ("Chat: Super-Wari Board 101 alice", [DAVE], text),
    ]
    no_password_in(replies, "alice-pw")


def test_chat_of_someone_neither_player_nor_observer_is_refused(board):
    server = board
    public = shown(server)
    reply = server.one(DAVE, "superwari chat 101 dave dave-pw", "Let me in.")
    assert mails([reply]) == [("Super-Wari Board 101 Error", [DAVE], error(
        "Only the players and observers of Super-Wari board 101 may chat on it, and\ndave is neither.",
        "To watch it first, send: superwari subscribe 101 dave PASSWORD",
        f"> Subject: superwari chat 101 dave {MASK}\n>\n> Let me in.", public))]


@pytest.mark.parametrize("subject, body, quoted", [
    ("superwari chat 101 carol carol-pw", "-- \ncarol", f"> Subject: superwari chat 101 carol {MASK}\n>\n> --\n> carol"),
    ("Re: Chat", "superwari chat 101 carol carol-pw\n\n-- \ncarol",
     f"> Subject: Re: Chat\n>\n> superwari chat 101 carol {MASK}\n>\n> --\n> carol"),
])
def test_chat_without_text_is_refused(board, subject, body, quoted):
    server = board
    public = shown(server)
    reply = server.one(CAROL, subject, body)
    assert mails([reply]) == [("Super-Wari Board 101 Error", [CAROL], error(
        "There is no text to send.", f"Write the text on the lines below the command line:\n  {CHAT_USAGE}",
        quoted, public))]


def test_signed_off_users_get_no_chat_and_no_board_mails(board):
    server = board
    server.one(DAVE, "superwari subscribe 101 dave dave-pw")
    assert heads(server.send(DAVE, "signoff dave dave-pw")) == [("pbmserv signoff", [DAVE])]
    replies = server.send(ALICE, "superwari move 101 alice alice-pw c")
    assert [r.to for r in replies] == [[ALICE], [BOB], [CAROL]]
    replies = server.send(CAROL, "superwari chat 101 carol carol-pw", "Hello.")
    assert heads(replies) == [("pbmserv chat", [CAROL]), ("Chat: Super-Wari Board 101 carol", [ALICE]),
                              ("Chat: Super-Wari Board 101 carol", [BOB])]
    # a player who signs off resigns; the finished board may still be chatted on, without them
    assert [r.to for r in server.send(BOB, "signoff bob bob-pw")] == [[BOB], [ALICE], [BOB], [CAROL]]
    replies = server.send(CAROL, "superwari chat 101 carol carol-pw", "Pity.")
    assert mails(replies) == [
        ("pbmserv chat", [CAROL], "Your chat on Super-Wari board 101 was sent to alice.\n"),
        ("Chat: Super-Wari Board 101 carol", [ALICE], chat_text("carol", "Pity.")),
    ]


def test_the_password_of_a_chat_is_not_relayed_when_the_body_repeats_the_command(board):
    """Many players write the command in the Subject and again on the first body line."""
    server = board
    replies = server.send(CAROL, "superwari chat 101 carol carol-pw",
                          "superwari chat 101 carol carol-pw\nHello all.")
    assert [r.to for r in replies] == [[CAROL], [ALICE], [BOB]]
    no_password_in(replies, "carol-pw")


def test_the_password_of_a_move_does_not_reach_the_observer_through_its_comment(board):
    server = board
    replies = server.send(ALICE, "superwari move 101 alice alice-pw c",
                          "superwari move 101 alice alice-pw c\nTake that.")
    assert [r.to for r in replies] == [[ALICE], [BOB], [CAROL]]
    no_password_in(replies, "alice-pw")


# --- the ** mark ---------------------------------------------------------------------------------


MOVE_C = "superwari move 101 alice alice-pw c"
REPLY = "Re: Super-Wari Board 101 alice"


@pytest.mark.parametrize("subject, body, marked, comment", [
    (MOVE_C, "Take that.", True, "Take that."),
    (MOVE_C, "Good luck, bob!\n-- \nalice", True, "Good luck, bob!"),
    (REPLY, f"{MOVE_C}\nYour turn, watchers.", True, "Your turn, watchers."),
    (MOVE_C, "", False, None),
    (MOVE_C, "alice", False, "alice"),
    (MOVE_C, "ALICE", False, "ALICE"),
    (MOVE_C, "Sent from my iPhone", False, "Sent from my iPhone"),
    (MOVE_C, "Cheers,\nAlice", False, "Cheers,\nAlice"),
    (MOVE_C, "Regards", False, "Regards"),
    (MOVE_C, "Kind regards, Alice", False, "Kind regards, Alice"),
    (MOVE_C, "Von meinem iPhone gesendet", False, "Von meinem iPhone gesendet"),
    (MOVE_C, "alice wins this one", True, "alice wins this one"),
    (MOVE_C, "-- \nalice", False, None),
    (MOVE_C, "On Sun, 1 Nov 2026, pbmserv wrote:\n> Summary of Super-Wari Board 101\n> It is alice's turn.",
     False, None),
    (REPLY, f"{MOVE_C}\n\n-- \nalice\nSent from my iPhone", False, None),
])
def test_board_mails_with_a_real_comment_are_marked_in_every_copy(board, subject, body, marked, comment):
    replies = board.send(ALICE, subject, body)
    expected = "Super-Wari Board 101 bob" + (" **" if marked else "")
    assert heads(replies) == [(expected, [ALICE]), (expected, [BOB]), (expected, [CAROL])]
    public = shown(board)
    assert body_of(replies[2]) == public + (f"\nalice writes:\n{comment}\n" if comment else "")


# --- Survive: hidden hands and private comments ------------------------------------------------------


def test_survive_observer_sees_no_hand_and_no_private_comment(server):
    server.signup("alice", "bob", "carol")
    server.send(ALICE, "survive challenge alice alice-pw bob -deadline=1d -window=3h")
    reply = server.one(CAROL, "survive subscribe 101 carol carol-pw")
    assert reply.subject == "Survive Board 101 ALL"
    assert body_of(reply).split("\n\n", 1)[1] == shown(server, "survive")
    seen = [reply]
    # a sealed search order: its comment is alice's alone
    replies = server.send(ALICE, "survive move 101 alice alice-pw search", "My secret plan.")
    assert heads(replies) == [("Survive Board 101 ALL **", [ALICE]), ("Survive Board 101 ALL", [BOB]),
                              ("Survive Board 101 ALL", [CAROL])]
    assert "My secret plan." in replies[0].body and "My secret plan." not in replies[1].body
    assert body_of(replies[2]) == shown(server, "survive")
    seen.append(replies[2])
    server.send(BOB, "survive move 101 bob bob-pw search")
    # a tell: its text and its comment go to the two concerned
    replies = server.send(ALICE, "survive move 101 alice alice-pw tell bob meet me", "psst, a deal")
    assert heads(replies) == [("Survive Board 101 ALL **", [ALICE]), ("Survive Board 101 ALL **", [BOB]),
                              ("Survive Board 101 ALL", [CAROL])]
    assert "\n  alice told bob: meet me\n" in replies[1].body and "psst, a deal" in replies[1].body
    observer = body_of(replies[2])
    assert observer == shown(server, "survive")
    assert observer.endswith("  The negotiation phase begins.\n  alice sent a tell.\n")  # the round log's last
    seen.append(replies[2])
    # public talk reaches the observer with its mark
    replies = server.send(BOB, "survive move 101 bob bob-pw done", "Nothing to add.")
    assert heads(replies)[2] == ("Survive Board 101 ALL **", [CAROL])
    assert body_of(replies[2]) == shown(server, "survive") + "\nbob writes:\nNothing to add.\n"
    seen.append(replies[2])
    # the deadline's board
    replies = server.wait(timedelta(days=1))
    observer = copy_for(replies, CAROL)
    assert "Deadline passed: round 1 negotiation." in observer.body
    seen.append(observer)
    for mail_ in seen:
        for secret in ("Your hand", "My secret plan", "meet me", "psst", "Your search order", "told bob",
                       "tell bob"):
            assert secret not in mail_.body, (secret, mail_.subject)


# --- through serve and replay --------------------------------------------------------------------


def test_an_observer_gets_the_board_mail_over_smtp(tmp_path, serve_url):
    running = RunningServer(tmp_path, url=serve_url)
    try:
        start = datetime(2026, 11, 1, 9, 0, tzinfo=timezone.utc)
        sent = [("alice", "signup alice alice-pw", ""), ("bob", "signup bob bob-pw", ""),
                ("carol", "signup carol carol-pw", ""), ("alice", "superwari challenge alice alice-pw bob", ""),
                ("carol", "superwari subscribe 101 carol carol-pw", ""),
                ("alice", "superwari move 101 alice alice-pw c", "Watch this.\n")]
        for number, (user, subject, body) in enumerate(sent, start=1):
            running.send(mail(f"{user}@example.org", subject, body, start + timedelta(minutes=number), number))
        replies = running.replies(9)
    finally:
        running.stop()
    assert [(r["To"], r["Subject"]) for r in replies] == [
        (ALICE, "pbmserv signup"), (BOB, "pbmserv signup"), (CAROL, "pbmserv signup"),
        (ALICE, "New Super-Wari Board 101 alice"), (BOB, "New Super-Wari Board 101 alice"),
        (CAROL, "Super-Wari Board 101 alice"),
        (ALICE, "Super-Wari Board 101 bob **"), (BOB, "Super-Wari Board 101 bob **"),
        (CAROL, "Super-Wari Board 101 bob **")]
    alice, observer = (plain(r) for r in (replies[6], replies[8]))
    assert observer == alice and "\n  #1 c\n" in observer and "\nalice writes:\nWatch this.\n" in observer
    assert plain(replies[5]).startswith(
        "You watch Super-Wari board 101 now: every board mail of it comes to you too.\n")
    for reply in replies:  # no password; a random tag may hold "-pw" by chance, a password never
        assert not any(password in reply.as_bytes() for password in (b"alice-pw", b"bob-pw", b"carol-pw"))


def test_replay_of_a_mailbox_with_an_observer_and_a_chat(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    for name in ("PBMSERV_SERVER_SEED", "PBMSERV_DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PBMSERV_SECURITY_PASSWORD_COST", "fast")
    start = datetime(2026, 11, 1, 9, 0, tzinfo=timezone.utc)
    sent = [("alice", "signup alice alice-pw", ""), ("bob", "signup bob bob-pw", ""),
            ("carol", "signup carol carol-pw", ""), ("alice", "superwari challenge alice alice-pw bob", ""),
            ("carol", "Re: Super-Wari Board 101", "superwari subscribe 101 carol carol-pw\n"),
            ("carol", "Re: Chat", "superwari chat 101 carol carol-pw\nMay the best one win.\n-- \ncarol\n"),
            ("alice", "superwari move 101 alice alice-pw c", "Thanks, carol.\n")]
    box = write_mbox(tmp_path / "observed.mbox", [
        mail(f"{user}@example.org", subject, body, start + timedelta(minutes=10 * number), number)
        for number, (user, subject, body) in enumerate(sent, start=1)])
    assert main(["replay", str(box), "--outbox", "out"]) == 0
    assert "Replayed 7 mails: 7 answered, 0 ignored (loop rules), 0 duplicates, 0 failed." in capsys.readouterr().out
    out = maildir_messages(tmp_path / "out")
    assert [(m["To"], m["Subject"]) for m in out] == [
        (ALICE, "pbmserv signup"), (BOB, "pbmserv signup"), (CAROL, "pbmserv signup"),
        (ALICE, "New Super-Wari Board 101 alice"), (BOB, "New Super-Wari Board 101 alice"),
        (CAROL, "Super-Wari Board 101 alice"),
        (CAROL, "pbmserv chat"), (ALICE, "Chat: Super-Wari Board 101 carol"), (BOB, "Chat: Super-Wari Board 101 carol"),
        (ALICE, "Super-Wari Board 101 bob **"), (BOB, "Super-Wari Board 101 bob **"),
        (CAROL, "Super-Wari Board 101 bob **")]
    bodies = [plain(m) for m in out]
    assert bodies[6].startswith("Your chat on Super-Wari board 101 was sent to alice, bob.\n")
    assert bodies[7].startswith(chat_text("carol", "May the best one win."))
    assert bodies[11] == bodies[9] and "\nalice writes:\nThanks, carol.\n" in bodies[11]
    assert not [body for body in bodies if "-pw" in body]
