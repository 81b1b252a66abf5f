"""Reply to play and the move helpers (issue 9).

Reply to play (pbmserv/replyto.py, play.board_mails, scheduler.nag, worker.run_reply,
commands/boards.play_by_reply): every player's board mail has a Reply-To of its own,
`pbmserv+<game id>-<seat>-<mac>@localhost`; a mail to it holding no command plays its
Subject (unless that is a board mail's own subject) or else the first line of its body,
and the rest of the body is the comment. Also over real SMTP and in `pbmserv replay`.

The move helpers (commands/pending.py, boards.play_queued): queue, preview,
submit/confirm.

Replies are compared as whole texts; after each error the move log and `show` prove
that nothing changed.
"""

from __future__ import annotations

import email.utils
import re
import time
from datetime import datetime, timedelta
from email.message import EmailMessage

import pytest
from sqlalchemy import text

from conftest import body_of, drawing, maildir_messages, mails, sent, plain
from mailgen import game_mails, mail, write_mbox
from pbmserv.cli import main
from pbmserv.replyto import reply_address, token_seat
from pbmserv.store.repo import find_game
from test_smtp import RunningServer

ALICE = "alice@example.org"
BOB = "bob@example.org"
CAROL = "carol@example.org"
STRANGER = "someone@example.net"
SERVER = "pbmserv@localhost"
MASK = "********"
ADDRESS = re.compile(r"pbmserv\+(\d+)-(\d+)-([a-z2-7]{20})@localhost")


def forfeits(userid: str, turn_began: datetime) -> str:
    return f"{userid} forfeits if no move by {turn_began + timedelta(days=21):%Y-%m-%d %H:%M} UTC."


def board(viewer: str, alice: list[int], bob: list[int]) -> str:
    """The board as `viewer` reads it (the public reads it as alice); rows are a..h."""
    if viewer == "bob":
        return drawing("alice", alice[::-1], "bob", bob)
    return drawing("bob", bob[::-1], "alice", alice)


def summary(status: str, drawn: str, moves: str = "", note: str = "", deadline: str = "",
            comments: str = "", next_move: int = 0) -> str:
    text = f"Summary of Super-Wari Board 101\n\n{status}\n"
    if note:
        text += note + "\n"
    if next_move:  # the #N of a running board's next move
        text += f"Next move: #{next_move}\n"
    if deadline:
        text += deadline + "\n"
    if moves:
        text += "\n" + moves
    text += "\n" + drawn
    if comments:
        text += "\n" + comments
    return text


def error(problem: str, instead: str, quoted: str, drawn: str = "") -> str:
    text = f"{problem}\n{instead}\n"
    if drawn:
        text += "\n" + drawn
    return text + f"\nYour message:\n{quoted}\n"


def quote(text: str) -> str:
    return "\n".join(f"> {line}".rstrip() for line in text.strip("\n").split("\n"))


# positions of the `game` fixture's board (pits a..h of each player)
START = [3] * 8
P2 = [3, 3, 0, 4, 4, 4, 3, 3]  # alice's and bob's rows after alice c, bob c
ALICE_A = [0, 4, 1, 5, 4, 4, 3, 3]  # alice's row after her a from P2
BOB_D = [3, 3, 0, 0, 5, 5, 4, 4]  # bob's row after his d from P2
TWO = "  alice  bob\n  #1 c   #2 c\n"
THREE = "  alice  bob\n  #1 c   #2 c\n  #3 a\n"
TURN = sent(6)  # when alice's turn began in the `game` fixture
SHOW_2 = summary("It is alice's turn.", board("alice", P2, P2), TWO, deadline=forfeits("alice", TURN), next_move=3)
SHOW_2_BOB = summary("It is alice's turn.", board("bob", P2, P2), TWO, deadline=forfeits("alice", TURN), next_move=3)


def after_a(viewer: str, comment: str = "", when: int = 7) -> str:
    """The board mail after alice's a from the `game` fixture, sent as mail `when`."""
    return summary("It is bob's turn.", board(viewer, ALICE_A, P2), THREE, deadline=forfeits("bob", sent(when)),
                   comments=f"alice writes:\n{comment}\n" if comment else "", next_move=4)


NOT_LEGAL_C = ("Move c is not legal on board 101: pit c is empty.",
               "Send instead: superwari move 101 alice PASSWORD MOVE\nwhere MOVE is one of: a, b, d, e, f, g, h.")
REFUSED = ("This reply address plays on no board: the player's password changed since the\n"
           "board mail was sent, or the address is not one of ours.",
           "Send the move with your password: GAME move BOARD USERID PASSWORD MOVE")
# the last line of an error about a reply to play that keeps the same Reply-To: the
# address is genuine, its board runs and the sender is the player's registered address
AGAIN = "To send a move again, reply to this mail with just the move."


@pytest.fixture
def game(server):
    """alice (South) against bob on Super-Wari board 101 after alice c and bob c; alice
    is to move. `game.address[userid]` is the Reply-To of that player's last board mail."""
    server.signup("alice", "bob", "carol")
    server.send(ALICE, "superwari challenge alice alice-pw bob")
    server.send(ALICE, "superwari move 101 alice alice-pw c")
    replies = server.send(BOB, "superwari move 101 bob bob-pw c")
    server.address = {"alice": replies[0].message["Reply-To"], "bob": replies[1].message["Reply-To"]}
    assert [r.to for r in replies] == [[ALICE], [BOB]] and server.clock == TURN
    return server


def to_address(server, sender: str, address: str, subject: str, body: str = "", header: str = "To"):
    """A mail to a reply address, found in the header `header` (To: then the server's own)."""
    server.count += 1
    server.clock += timedelta(minutes=1)
    message = EmailMessage()
    message["From"] = sender
    message["To"] = address if header == "To" else SERVER
    if header != "To":
        message[header] = address
    message["Subject"] = subject
    message["Date"] = email.utils.format_datetime(server.clock)
    message["Message-ID"] = f"<reply{server.count}@example.org>"
    message.set_content(body)
    return server.send_raw(message.as_bytes())


def move_count(server) -> int:
    with server.sessions() as session:
        return len(find_game(session, "superwari", 101).moves)


def pending(server) -> list[tuple[int, str, str]]:
    with server.sessions() as session:
        return [(p.seat, p.kind, p.move) for p in find_game(session, "superwari", 101).pending]


def shown(server) -> str:
    return body_of(server.one(CAROL, "superwari show 101"))


def assert_unchanged(server) -> None:
    assert move_count(server) == 2
    assert shown(server) == SHOW_2


def tampered(address: str) -> str:
    """The address with the first letter of its mac changed."""
    local, _, domain = address.partition("@")
    base, mac = local.rsplit("-", 1)
    return f"{base}-{'b' if mac[0] == 'a' else 'a'}{mac[1:]}@{domain}"


# --- the Reply-To of board mails ----------------------------------------------------------


def test_each_players_board_mail_has_its_own_lower_case_reply_address(server):
    server.signup("alice", "bob", "carol")
    first = server.send(ALICE, "superwari challenge alice alice-pw bob")
    server.one(CAROL, "superwari subscribe 101 carol carol-pw")
    moved = server.send(ALICE, "superwari move 101 alice alice-pw c")
    other = server.send(ALICE, "superwari challenge alice alice-pw carol")  # board 102
    assert [(r.subject, r.to) for r in moved] == [("Super-Wari Board 101 bob", [ALICE]),
                                                  ("Super-Wari Board 101 bob", [BOB]),
                                                  ("Super-Wari Board 101 bob", [CAROL])]
    alice, bob = first[0].message["Reply-To"], first[1].message["Reply-To"]
    alice_102, carol_102 = other[0].message["Reply-To"], other[1].message["Reply-To"]
    for address, (game_id, seat) in [(alice, ("1", "0")), (bob, ("1", "1")),
                                     (alice_102, ("2", "0")), (carol_102, ("2", "1"))]:
        match = ADDRESS.fullmatch(address)
        assert match is not None and match.groups()[:2] == (game_id, seat), address
        assert address == address.lower()
    assert len({alice, bob, alice_102, carol_102}) == 4  # per player and per board
    # stable while the password is the same; none on the observer's copy
    assert [r.message["Reply-To"] for r in moved] == [alice, bob, None]
    with server.sessions() as session:
        record = find_game(session, "superwari", 101)
        assert [reply_address(server.config, record, seat) for seat in (0, 1)] == [alice, bob]
        token = bob.split("+", 1)[1].split("@")[0]
        assert token_seat(session, server.config, token) == (record, 1)
        assert token_seat(session, server.config, token.upper()) == (record, 1)


def test_the_board_mails_of_a_finished_game_have_no_reply_address(game):
    replies = game.send(BOB, "superwari resign 101 bob bob-pw")
    assert [(r.subject, r.to, r.message["Reply-To"]) for r in replies] == [
        ("Super-Wari Board 101", [ALICE], None), ("Super-Wari Board 101", [BOB], None)]


# --- playing by reply ----------------------------------------------------------------------


@pytest.mark.parametrize("header", ["To", "Cc", "Delivered-To", "X-Original-To"])
def test_a_reply_with_the_move_in_the_body_plays_it(game, header):
    board_mail = "\n".join(f"> {line}".rstrip() for line in SHOW_2.split("\n"))
    replies = to_address(game, ALICE, game.address["alice"], "Re: Super-Wari Board 101 alice",
                         f"a\nYour turn, Bob.\n\nOn Sunday, pbmserv wrote:\n{board_mail}\n", header=header)
    assert mails(replies) == [
        ("Super-Wari Board 101 bob **", [ALICE], after_a("alice", "Your turn, Bob.")),
        ("Super-Wari Board 101 bob **", [BOB], after_a("bob", "Your turn, Bob.")),
    ]
    assert [r.message["Reply-To"] for r in replies] == [game.address["alice"], game.address["bob"]]
    assert move_count(game) == 3


def test_the_move_may_be_the_subject_and_the_body_the_comment(game):
    replies = to_address(game, ALICE, game.address["alice"], "Re: a",
                         "Take that.\n\nOn Sunday, pbmserv wrote:\n> Summary of Super-Wari Board 101\n")
    assert mails(replies) == [
        ("Super-Wari Board 101 bob **", [ALICE], after_a("alice", "Take that.")),
        ("Super-Wari Board 101 bob **", [BOB], after_a("bob", "Take that.")),
    ]
    # a board mail's own subject (here with the comment mark) is not a move: the body is read
    replies = to_address(game, BOB, game.address["bob"], "RE: Super-Wari Board 101 bob **", "d\n")
    assert [(r.subject, r.to) for r in replies] == [("Super-Wari Board 101 alice", [ALICE]),
                                                    ("Super-Wari Board 101 alice", [BOB])]
    assert move_count(game) == 4


@pytest.mark.parametrize("prefix", ["AW:", "Re: Fwd:", "Antw:", "Re[2]:"])
def test_the_board_subject_under_any_reply_prefix_is_not_the_move(game, prefix):
    """Mail programs prefix a reply's Subject in their own language (Outlook in Dutch
    "Antw:", The Bat! "Re[2]:"): it is still the board mail's own subject, so the move is
    the first line of the body."""
    replies = to_address(game, ALICE, game.address["alice"], f"{prefix} Super-Wari Board 101 alice", "a\n")
    assert [(r.subject, r.to) for r in replies] == [("Super-Wari Board 101 bob", [ALICE]),
                                                    ("Super-Wari Board 101 bob", [BOB])]


def test_the_whole_rest_of_the_body_is_the_comment(game):
    """The comment must not lose its third line (the body-command parser stops reading
    after three prose lines in a row, and the move counts as one of them)."""
    comment = "Line one.\nLine two.\nLine three."
    replies = to_address(game, ALICE, game.address["alice"], "Re: Super-Wari Board 101 alice",
                         f"a\n{comment}\n\n-- \nalice\n")
    assert body_of(replies[1]) == after_a("bob", comment)


def test_a_reply_from_an_address_the_player_has_not_registered_plays_nothing_and_shows_no_board(game):
    """A forwarded board mail must not hand over the seat, nor the seat's view."""
    reply, = to_address(game, "alice@phone.example", game.address["alice"], "Re: Super-Wari Board 101 alice",
                        "a\n")
    assert (reply.subject, reply.to, reply.message["Reply-To"], body_of(reply)) == (
        "pbmserv error", ["alice@phone.example"], None, error(  # not a registered address: no Reply-To
            "Replies to play count only from the player's registered addresses.",
            "Send it from your registered address, or: GAME move BOARD USERID PASSWORD MOVE",
            "> a"))
    assert_unchanged(game)


def test_a_wrong_move_is_answered_with_the_legal_moves_and_changes_nothing(game):
    reply, = to_address(game, ALICE, game.address["alice"], "Re: Super-Wari Board 101 alice", "c\nhm\n")
    assert (reply.subject, reply.to, reply.message["Reply-To"], body_of(reply)) == (
        "Super-Wari Board 101 Error", [ALICE], game.address["alice"],  # replying to the error plays
        error(NOT_LEGAL_C[0], f"{NOT_LEGAL_C[1]}\n{AGAIN}", "> Subject: Re: Super-Wari Board 101 alice\n>\n> c\n> hm",
              SHOW_2))
    assert_unchanged(game)


def test_a_reply_out_of_turn_and_an_empty_reply_are_refused(game):
    reply, = to_address(game, BOB, game.address["bob"], "d")
    # not bob's turn: no Reply-To to send a move again at, and no line that says to
    assert (reply.subject, reply.to, reply.message["Reply-To"], body_of(reply)) == (
        "Super-Wari Board 101 Error", [BOB], None, error(
            "It is not bob's turn on board 101. It is alice's turn.",
            "Wait for the board mail that says it is your turn.", "> Subject: d", SHOW_2_BOB))
    reply, = to_address(game, ALICE, game.address["alice"], "Re: Super-Wari Board 101 alice", "")
    assert (reply.subject, reply.to, reply.message["Reply-To"], body_of(reply)) == (
        "Super-Wari Board 101 Error", [ALICE], game.address["alice"], error(
            "Your reply holds no move.",
            f"Reply to the board mail with just your move.\nMOVE is one of: a, b, d, e, f, g, h.\n{AGAIN}",
            "> Subject: Re: Super-Wari Board 101 alice", SHOW_2))
    assert_unchanged(game)


@pytest.mark.parametrize("how", ["one character", "seat swapped", "other board", "no such board", "truncated"])
def test_a_tampered_reply_address_is_refused(game, how):
    game.send(ALICE, "superwari challenge alice alice-pw carol")  # board 102: game id 2
    alice = game.address["alice"]
    number, seat, mac = ADDRESS.fullmatch(alice).groups()
    address = {"one character": tampered(alice),
               "seat swapped": f"pbmserv+{number}-1-{mac}@localhost",  # alice's mac as bob's seat
               "other board": f"pbmserv+2-{seat}-{mac}@localhost",  # alice's seat on board 102
               "no such board": f"pbmserv+99-{seat}-{mac}@localhost",
               "truncated": alice.replace(mac, mac[:-1])}[how]
    reply, = to_address(game, ALICE, address, "a")
    assert (reply.subject, reply.to, reply.message["Reply-To"], body_of(reply)) == (
        "pbmserv error", [ALICE], None, error(*REFUSED, "> Subject: a"))  # not genuine: no Reply-To
    assert_unchanged(game)


def test_a_stranger_with_a_made_up_address_gets_only_the_move_quoted(game):
    reply, = to_address(game, STRANGER, tampered(game.address["bob"]), "Re: Super-Wari Board 101 bob",
                        "a\nsecret plans\n")
    assert (reply.subject, reply.to, reply.message["Reply-To"], body_of(reply)) == (
        "pbmserv error", [STRANGER], None, error(*REFUSED, "> a"))
    assert_unchanged(game)


def test_changing_the_password_retires_the_reply_address(game):
    old = game.address["bob"]
    assert game.one(BOB, "change password bob bob-pw bob-new").subject == "pbmserv change password"
    replies = to_address(game, ALICE, game.address["alice"], "a")  # alice's address still works
    new = replies[1].message["Reply-To"]
    assert ADDRESS.fullmatch(new) and new.startswith("pbmserv+1-1-") and new != old
    assert replies[0].message["Reply-To"] == game.address["alice"]
    reply, = to_address(game, BOB, old, "Re: Super-Wari Board 101 bob", "d\n")
    assert (reply.subject, reply.to, reply.message["Reply-To"], body_of(reply)) == (
        "pbmserv error", [BOB], None, error(*REFUSED, "> Subject: Re: Super-Wari Board 101 bob\n>\n> d"))
    assert move_count(game) == 3
    replies = to_address(game, BOB, new, "Re: Super-Wari Board 101 bob", "d\n")
    assert [(r.subject, r.to) for r in replies] == [("Super-Wari Board 101 alice", [ALICE]),
                                                    ("Super-Wari Board 101 alice", [BOB])]
    assert move_count(game) == 4


def test_the_reply_address_stops_working_when_the_game_ends(game):
    game.send(BOB, "superwari resign 101 bob bob-pw")
    reply, = to_address(game, ALICE, game.address["alice"], "a")
    over = summary("Game won by alice.", board("alice", P2, P2),
                   "  alice      bob\n  #1 c       #2 c\n             #3 resign\n")
    assert (reply.subject, reply.to, reply.message["Reply-To"], body_of(reply)) == (
        "Super-Wari Board 101 Error", [ALICE], None, error(  # the board no longer runs: no Reply-To
            "Super-Wari board 101 is over: Game won by alice.",
            "Start a new game with: superwari challenge USERID PASSWORD OPPONENT", "> Subject: a", over))
    assert move_count(game) == 3


def test_commands_in_a_mail_to_a_reply_address_run_as_usual(game):
    reply, = to_address(game, ALICE, game.address["alice"], "Re: Super-Wari Board 101 alice", "superwari show 101\n")
    assert (reply.subject, body_of(reply)) == ("Super-Wari Board 101 alice", SHOW_2)
    assert move_count(game) == 2
    # a move line and a command: the command runs, the move line is only prose
    replies = to_address(game, ALICE, game.address["alice"], "Re: Super-Wari Board 101 alice",
                         "a\nsuperwari show 101\n")
    assert [r.subject for r in replies] == ["Super-Wari Board 101 alice"]
    assert move_count(game) == 2
    replies = to_address(game, ALICE, game.address["alice"], "superwari move 101 alice alice-pw a", "Go!\n")
    assert mails(replies) == [("Super-Wari Board 101 bob **", [ALICE], after_a("alice", "Go!", when=9)),
                              ("Super-Wari Board 101 bob **", [BOB], after_a("bob", "Go!", when=9))]


def test_an_upper_cased_reply_address_still_plays(game):
    """Some mail systems fold the case of addresses: the token is read in any case."""
    replies = to_address(game, ALICE, game.address["alice"].upper(), "Re: Super-Wari Board 101 alice", "A\n")
    assert [(r.subject, r.to) for r in replies] == [("Super-Wari Board 101 bob", [ALICE]),
                                                    ("Super-Wari Board 101 bob", [BOB])]
    assert move_count(game) == 3


def test_the_nag_mail_can_be_answered_with_the_move(game):
    nag, = game.wait(timedelta(days=7))
    assert (nag.subject, nag.to, nag.message["Reply-To"]) == (
        "Nag: Super-Wari Board 101 alice", [ALICE], game.address["alice"])
    assert body_of(nag) == summary("It is alice's turn.", board("alice", P2, P2), TWO,
                                   note="Reminder: it has been alice's turn since 2026-11-01 12:06 UTC.",
                                   deadline=forfeits("alice", TURN), next_move=3)
    replies = to_address(game, ALICE, nag.message["Reply-To"], "Re: Nag: Super-Wari Board 101 alice",
                         "a\nSorry, I was away.\n")
    assert [(r.subject, r.to) for r in replies] == [("Super-Wari Board 101 bob **", [ALICE]),
                                                    ("Super-Wari Board 101 bob **", [BOB])]
    assert move_count(game) == 3


# --- over SMTP and in replay ------------------------------------------------------------


def smtp_game(running) -> str:
    """Sign-ups, a challenge and alice's first move over SMTP; bob's reply address."""
    for message in game_mails("superwari", seed=3)[:4]:
        running.send(message)
    replies = running.replies(6)
    assert [(r["To"], r["Subject"]) for r in replies[-2:]] == [(ALICE, "Super-Wari Board 101 bob"),
                                                               (BOB, "Super-Wari Board 101 bob")]
    return replies[-1]["Reply-To"]


def bobs_reply(to: str) -> EmailMessage:
    """Bob's answer to his board mail of `game_mails("superwari", seed=3)[:4]`, an hour
    after alice's move."""
    date = game_mails("superwari", seed=3)[3]["Date"].datetime + timedelta(hours=1)
    message = mail(BOB, "Re: Super-Wari Board 101 bob", "a\nMy turn.\n", date, 100)
    message.replace_header("To", to)
    return message


def send_over_smtp(running, message: EmailMessage, recipient: str) -> tuple[int, bytes]:
    with running.client() as client:
        assert client.ehlo()[0] == 250
        assert client.mail("bob@example.org")[0] == 250
        assert client.rcpt(recipient) == (250, b"OK")
        return client.data(message.as_bytes())


def moves_over_smtp(running) -> int:
    with running.sessions() as session:
        return len(find_game(session, "superwari", 101).moves)


@pytest.fixture
def running(tmp_path, serve_url):
    server = RunningServer(tmp_path, url=serve_url)
    yield server
    server.stop()


def test_a_reply_over_smtp_to_the_reply_address_plays(running):
    address = smtp_game(running)
    assert send_over_smtp(running, bobs_reply(address), address) == (250, b"2.0.0 Stored")
    replies = running.replies(8)
    assert [(r["To"], r["Subject"], r["Reply-To"] is not None) for r in replies[6:]] == [
        (ALICE, "Super-Wari Board 101 alice **", True), (BOB, "Super-Wari Board 101 alice **", True)]
    assert "bob writes:\nMy turn.\n" in plain(replies[-1])
    assert moves_over_smtp(running) == 2


def test_a_reply_over_smtp_to_the_reply_address_as_envelope_recipient_only_plays(running):
    """Bob writes to alice and sends a blind copy to his reply address: the address is
    only in the SMTP envelope, which `serve` accepts (250) and must not forget."""
    address = smtp_game(running)
    assert send_over_smtp(running, bobs_reply(ALICE), address) == (250, b"2.0.0 Stored")
    running.replies(7)
    time.sleep(0.3)  # the second board mail, if the move was played, is written with the first
    replies = maildir_messages(running.maildir)
    assert [(r["To"], r["Subject"]) for r in replies[6:]] == [
        (ALICE, "Super-Wari Board 101 alice **"), (BOB, "Super-Wari Board 101 alice **")]
    assert moves_over_smtp(running) == 2


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in ("PBMSERV_SERVER_SEED", "PBMSERV_DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PBMSERV_SECURITY_PASSWORD_COST", "fast")
    return tmp_path


def replayed(outbox) -> list[tuple[str, str, str | None]]:
    return [(m["To"], m["Subject"], m["Reply-To"]) for m in maildir_messages(outbox)]


def test_a_reply_to_play_in_replay_with_a_kept_database(in_tmp, capsys, serve_url):
    url = serve_url
    first = write_mbox(in_tmp / "first.mbox", game_mails("superwari", seed=3)[:4])
    assert main(["replay", str(first), "--db", url, "--outbox", "first"]) == 0
    address = replayed(in_tmp / "first")[-1][2]
    assert ADDRESS.fullmatch(address)
    second = write_mbox(in_tmp / "second.mbox", [bobs_reply(address)])
    assert main(["replay", str(second), "--db", url, "--outbox", "second"]) == 0
    assert "Replayed 1 mails: 1 answered, 0 ignored (loop rules), 0 duplicates, 0 failed." in capsys.readouterr().out
    assert [(to, subject) for to, subject, _ in replayed(in_tmp / "second")] == [
        (ALICE, "Super-Wari Board 101 alice **"), (BOB, "Super-Wari Board 101 alice **")]


def test_replaying_a_mailbox_with_a_reply_to_play_repeats_it(in_tmp):
    """`replay` uses a fixed seed "so replaying the same mailboxes twice gives the same
    replies" (README), and replyto.server_secret derives its key from it "so that a
    replay writes the same addresses": a mailbox holding a reply to such an address must
    replay with that reply played."""
    start = game_mails("superwari", seed=3)[:4]
    assert main(["replay", str(write_mbox(in_tmp / "start.mbox", start)), "--outbox", "first"]) == 0
    assert main(["replay", str(write_mbox(in_tmp / "again.mbox", start)), "--outbox", "again"]) == 0
    assert replayed(in_tmp / "first") == replayed(in_tmp / "again")  # the same Reply-To addresses
    address = replayed(in_tmp / "first")[-1][2]
    assert main(["replay", str(write_mbox(in_tmp / "whole.mbox", start + [bobs_reply(address)])),
                 "--outbox", "whole"]) == 0
    assert [(to, subject) for to, subject, _ in replayed(in_tmp / "whole")][6:] == [
        (ALICE, "Super-Wari Board 101 alice **"), (BOB, "Super-Wari Board 101 alice **")]


# --- queue ---------------------------------------------------------------------------------

QUEUED_D = ("Queued on Super-Wari board 101: d\n"
            "It is played for you when your turn comes, if it is legal then; otherwise you\nare told.\n"
            "A new queue command replaces it; to remove it, send:\n  superwari queue 101 bob PASSWORD cancel\n")


def test_a_queued_move_is_played_when_the_turn_comes(game):
    reply = game.one(BOB, "superwari queue 101 bob bob-pw d", "Queued for you.")
    assert (reply.subject, reply.to, body_of(reply)) == ("Super-Wari Board 101 queue", [BOB], QUEUED_D)
    assert pending(game) == [(1, "queue", "d")]
    # alice plays by reply; bob's queued move follows at once
    replies = to_address(game, ALICE, game.address["alice"], "Re: Super-Wari Board 101 alice", "a\nMy move.\n")
    auto = summary("It is alice's turn.", "{}", "  alice        bob\n  #1 c         #2 c\n  #3 a         #4 d (auto)\n",
                   note="bob's queued move was played (auto).", deadline=forfeits("alice", sent(8)),
                   comments="bob writes:\nQueued for you.\n", next_move=5)
    assert mails(replies) == [
        ("Super-Wari Board 101 bob **", [ALICE], after_a("alice", "My move.", when=8)),
        ("Super-Wari Board 101 bob **", [BOB], after_a("bob", "My move.", when=8)),
        ("Super-Wari Board 101 alice **", [ALICE], auto.replace("{}", board("alice", ALICE_A, BOB_D))),
        ("Super-Wari Board 101 alice **", [BOB], auto.replace("{}", board("bob", ALICE_A, BOB_D))),
    ]
    assert [r.message["Reply-To"] for r in replies] == [game.address["alice"], game.address["bob"]] * 2
    assert pending(game) == [] and move_count(game) == 4
    with game.sessions() as session:
        assert [(m.move, m.auto) for m in find_game(session, "superwari", 101).moves] == [
            ("c", False), ("c", False), ("a", False), ("d", True)]


def test_a_queued_move_that_is_illegal_by_then_is_dropped_and_its_player_told(game):
    game.one(BOB, "superwari queue 101 bob bob-pw c")  # bob's pit c is empty and stays so
    replies = game.send(ALICE, "superwari move 101 alice alice-pw a")
    assert mails(replies) == [
        ("Super-Wari Board 101 bob", [ALICE], after_a("alice", when=8)),
        ("Super-Wari Board 101 bob", [BOB], after_a("bob", when=8)),
        ("Super-Wari Board 101 bob", [BOB], summary(
            "It is bob's turn.", board("bob", ALICE_A, P2), THREE,
            note="Your queued move c could not be played: pit c is empty. It is your turn: send\nyour move.",
            deadline=forfeits("bob", sent(8)), next_move=4)),
    ]
    assert replies[2].message["Reply-To"] == game.address["bob"]
    assert pending(game) == [] and move_count(game) == 3
    # the notice is a board mail: answering it plays
    replies = to_address(game, BOB, replies[2].message["Reply-To"], "Re: Super-Wari Board 101 bob", "d\n")
    assert [(r.subject, r.to) for r in replies] == [("Super-Wari Board 101 alice", [ALICE]),
                                                    ("Super-Wari Board 101 alice", [BOB])]


def test_queue_cancel_and_its_errors(game):
    reply = game.one(BOB, "superwari queue 101 bob bob-pw cancel")
    assert (reply.subject, body_of(reply)) == ("Super-Wari Board 101 Error", error(
        "bob has no queued move on board 101.", "To queue one, send: superwari queue BOARD USERID PASSWORD MOVE|cancel",
        f"> Subject: superwari queue 101 bob {MASK} cancel", SHOW_2))  # the public side, not bob's
    reply = game.one(ALICE, "superwari queue 101 alice alice-pw a")
    assert (reply.subject, body_of(reply)) == ("Super-Wari Board 101 Error", error(
        "It is alice's turn on board 101 now, so there is nothing to queue.",
        "Send the move itself: superwari move 101 alice PASSWORD a",
        f"> Subject: superwari queue 101 alice {MASK} a", SHOW_2))
    game.one(BOB, "superwari queue 101 bob bob-pw d")
    reply = game.one(BOB, "superwari queue 101 bob bob-pw CANCEL")
    assert (reply.subject, reply.to, body_of(reply)) == (
        "Super-Wari Board 101 queue", [BOB], "Your queued move on board 101 was removed.\n")
    assert pending(game) == []
    assert [r.subject for r in game.send(ALICE, "superwari move 101 alice alice-pw a")] == [
        "Super-Wari Board 101 bob"] * 2  # nothing played for bob
    assert move_count(game) == 3


def test_a_new_queue_command_replaces_the_queued_move(game):
    game.one(BOB, "superwari queue 101 bob bob-pw b")
    reply = game.one(BOB, "superwari queue 101 bob bob-pw d")
    assert (reply.subject, reply.to, body_of(reply)) == ("Super-Wari Board 101 queue", [BOB], QUEUED_D)
    assert pending(game) == [(1, "queue", "d")]
    replies = game.send(ALICE, "superwari move 101 alice alice-pw a")
    assert [r.subject for r in replies] == ["Super-Wari Board 101 bob"] * 2 + ["Super-Wari Board 101 alice"] * 2
    with game.sessions() as session:
        assert [(m.move, m.auto) for m in find_game(session, "superwari", 101).moves][2:] == [("a", False), ("d", True)]


# --- preview ----------------------------------------------------------------------------

TABLES = ("users", "addresses", "games", "seats", "moves", "pending_moves", "subscriptions", "ratings",
          "vacations", "preferences", "settings")


def snapshot(server) -> dict[str, list]:
    with server.sessions() as session:
        return {table: session.execute(text(f"SELECT * FROM {table} ORDER BY 1")).all() for table in TABLES}


def test_preview_shows_the_board_after_a_sequence_and_changes_nothing(game):
    before = snapshot(game)
    reply = game.one(ALICE, "superwari preview 101 alice alice-pw a; d;b")
    assert (reply.subject, reply.to, reply.message["Reply-To"], body_of(reply)) == (
        "Preview: Super-Wari Board 101 alice", [ALICE], None,
        summary("It is bob's turn.", board("alice", [0, 0, 2, 6, 5, 5, 3, 3], BOB_D), TWO,
                note="Preview after a; d; b: nothing was played."))  # no deadline: it is the real board's
    assert snapshot(game) == before
    assert_unchanged(game)


@pytest.mark.parametrize("moves, problem", [
    ("a; c", "Preview move 2 (c, by bob) is not legal: pit c is empty."),
    ("c", "Preview move 1 (c, by alice) is not legal: pit c is empty."),
    ("a; d; b; zz", 'Preview move 4 (zz, by bob) is not legal: "zz" is not a pit; send the letter\nof one of '
                    "your pits, a–h."),
])
def test_preview_names_the_illegal_step(game, moves, problem):
    before = snapshot(game)
    reply = game.one(ALICE, f"superwari preview 101 alice alice-pw {moves}")
    assert (reply.subject, reply.to, body_of(reply)) == ("Super-Wari Board 101 Error", [ALICE], error(
        problem, "Correct that move and send the preview again.",
        f"> Subject: superwari preview 101 alice {MASK} {moves}", SHOW_2))
    assert snapshot(game) == before


def test_a_survive_preview_does_not_reveal_the_real_draw_or_a_sealed_order(server):
    """The preview docstring: chance in a preview "never shows the board's real next roll
    or card". In Survive the deck order is in the state: a preview of alice's search,
    once bob's sealed order is in, must neither show her the cards she will really draw
    nor carry out bob's sealed order (discard S) for her to read."""
    server.signup("alice", "bob")
    server.send(ALICE, "survive challenge alice alice-pw bob")
    server.send(BOB, "survive move 101 bob bob-pw search discard S")
    preview = body_of(server.one(ALICE, "survive preview 101 alice alice-pw search discard W"))
    real = body_of(server.send(ALICE, "survive move 101 alice alice-pw search discard W")[0])
    hand = [line for line in real.split("\n") if line.startswith("Your hand (alice):")]
    assert hand == ["Your hand (alice): F W S S  (F Food, W Water, S Shelter)"]
    assert "Preview after search discard W: nothing was played." in preview
    assert ("\n  bob discarded 2 Beasts from the dealt hand, discarded 1 Shelter and drew 3\n    cards.\n"
            in real)  # the round log
    assert "discarded 1 Shelter" not in preview  # bob's sealed order
    assert hand[0] not in preview.split("\n")  # alice's real next cards


# --- submit and confirm ----------------------------------------------------------------------


def test_submit_then_confirm_plays_the_move(game):
    before = snapshot(game)
    reply = game.one(ALICE, "superwari submit 101 alice alice-pw a", "Submitted comment.")
    assert (reply.subject, reply.to, body_of(reply)) == ("Submitted: Super-Wari Board 101 alice", [ALICE], summary(
        "It is bob's turn.", board("alice", ALICE_A, P2), TWO,
        note="Submitted, not yet played: a. To play it, send:\n  superwari confirm 101 alice PASSWORD"))
    assert pending(game) == [(0, "submit", "a")] and move_count(game) == 2
    assert {t: rows for t, rows in snapshot(game).items() if t not in ("pending_moves", "games")} == {
        t: rows for t, rows in before.items() if t not in ("pending_moves", "games")}
    # of the board's row, only its count of pending moves (and so its version) changed
    [row, was] = [{k: v for k, v in snap["games"][0]._mapping.items() if k not in ("version", "pending_count")}
                  for snap in (snapshot(game), before)]
    assert row == was and snapshot(game)["games"][0].pending_count == 1
    replies = game.send(ALICE, "superwari confirm 101 alice alice-pw")
    assert mails(replies) == [
        ("Super-Wari Board 101 bob **", [ALICE], after_a("alice", "Submitted comment.", when=8)),
        ("Super-Wari Board 101 bob **", [BOB], after_a("bob", "Submitted comment.", when=8)),
    ]
    assert pending(game) == [] and move_count(game) == 3


def test_confirm_without_a_submitted_move_and_an_illegal_submission(game):
    reply = game.one(ALICE, "superwari confirm 101 alice alice-pw")
    assert (reply.subject, body_of(reply)) == ("Super-Wari Board 101 Error", error(
        "alice has submitted no move on board 101.", "Submit one first: superwari submit 101 alice PASSWORD MOVE",
        f"> Subject: superwari confirm 101 alice {MASK}", SHOW_2))
    reply = game.one(ALICE, "superwari submit 101 alice alice-pw c")
    assert (reply.subject, body_of(reply)) == ("Super-Wari Board 101 Error", error(
        *NOT_LEGAL_C, f"> Subject: superwari submit 101 alice {MASK} c", SHOW_2))
    assert pending(game) == []
    assert_unchanged(game)


def test_a_new_submission_replaces_the_earlier_one(game):
    game.one(ALICE, "superwari submit 101 alice alice-pw b")
    reply = game.one(ALICE, "superwari submit 101 alice alice-pw a")
    assert body_of(reply).split("\n")[3:5] == [
        "Submitted, not yet played: a. To play it, send:", "  superwari confirm 101 alice PASSWORD"]
    assert pending(game) == [(0, "submit", "a")]
    replies = game.send(ALICE, "superwari confirm 101 alice alice-pw")
    assert mails(replies) == [("Super-Wari Board 101 bob", [ALICE], after_a("alice", when=9)),
                              ("Super-Wari Board 101 bob", [BOB], after_a("bob", when=9))]


@pytest.mark.parametrize("how", ["command", "reply"])
def test_a_move_played_meanwhile_drops_the_submission(game, how):
    game.one(ALICE, "superwari submit 101 alice alice-pw b")
    if how == "command":
        game.send(ALICE, "superwari move 101 alice alice-pw a")
    else:
        to_address(game, ALICE, game.address["alice"], "a")
    assert pending(game) == []
    game.send(BOB, "superwari move 101 bob bob-pw d")  # alice's turn again: b would be legal
    reply = game.one(ALICE, "superwari confirm 101 alice alice-pw")
    assert (reply.subject, body_of(reply).split("\n")[:2]) == ("Super-Wari Board 101 Error", [
        "alice has submitted no move on board 101.", "Submit one first: superwari submit 101 alice PASSWORD MOVE"])
    assert move_count(game) == 4
