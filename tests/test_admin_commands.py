"""Account recovery and admin commands by mail: forgot, reset, signoff, all games,
abort, disable, enable. Every reply is compared as whole text (subject, recipients,
body); after each error a snapshot of the database proves that nothing changed."""

from __future__ import annotations

import hashlib
import re
from datetime import timedelta

import pytest
from sqlalchemy import select

from conftest import body_of, mails
from pbmserv.passwords import verify_password
from pbmserv.store.models import GameRecord, User
from pbmserv.store.repo import find_game, find_user

ALICE = "alice@example.org"
BOB = "bob@example.org"
CAROL = "carol@example.org"
STRANGER = "someone@example.net"
MASK = "********"


def error_text(problem: str, instead: str, quoted: str) -> str:
    return f"{problem}\n{instead}\n\nYour message:\n{quoted}\n"


def snapshot(server) -> tuple:
    """Everything these commands may change."""
    with server.sessions() as session:
        users = [(u.userid, u.password_hash, u.disabled, u.reset_token_hash, u.reset_expires, u.emails)
                 for u in session.scalars(select(User).order_by(User.id))]
        games = [(g.game_type, g.board, g.status, g.result, [m.kind for m in g.moves], g.due_at)
                 for g in session.scalars(select(GameRecord).order_by(GameRecord.id))]
        return users, games


def user_row(server, userid: str) -> tuple:
    with server.sessions() as session:
        user = find_user(session, userid)
        return user.disabled, user.reset_token_hash, user.reset_expires


def password_is(server, userid: str, password: str) -> bool:
    with server.sessions() as session:
        return verify_password(find_user(session, userid).password_hash, password)


def board_row(server, game_type: str = "superwari", board: int = 101) -> tuple:
    with server.sessions() as session:
        record = find_game(session, game_type, board)
        return record.status, record.result, [m.kind for m in record.moves], record.due_at


def forgot_mail(userid: str, sender: str, token: str, before: str) -> str:
    return (f"{sender} asked for a new password for {userid}.\n"
            f"To set one, send this line before {before}:\n\n"
            f"  reset {userid} {token} NEWPASSWORD\n\n"
            "If you did not ask for it, ignore this mail: your password stays as it is.\n")


def forgot_reply(userid: str) -> str:
    return f"If {userid} exists, a reset token was mailed to its registered addresses.\n"


def ask_token(server, userid: str = "alice", sender: str = STRANGER) -> str:
    replies = server.send(sender, f"forgot {userid}")
    assert len(replies) == 2
    return re.search(r"reset \S+ ([0-9a-f]{16}) NEWPASSWORD", replies[1].body)[1]


def board(top: str, bottom: str, captured: str) -> str:
    return ("   h    g    f    e    d    c    b    a\n"
            "+----+----+----+----+----+----+----+----+\n"
            f"|  3 |  3 |  3 |  3 |  3 |  3 |  3 |  3 |   {top}\n"
            "+----+----+----+----+----+----+----+----+\n"
            f"|  3 |  3 |  3 |  3 |  3 |  3 |  3 |  3 |   {bottom}\n"
            "+----+----+----+----+----+----+----+----+\n"
            "   a    b    c    d    e    f    g    h\n"
            f"Captured: {captured}\n")


@pytest.fixture
def admin_server(make_server):
    """alice, bob and carol; carol is an admin (configured as 'Carol': case-insensitive)."""
    server = make_server(server={"admins": ["Carol"]})
    server.signup("alice", "bob")
    server.add_user("carol")
    return server


# --- forgot -----------------------------------------------------------------------------------


def test_forgot_mails_a_token_to_the_registered_addresses_only(server):
    server.signup("alice")
    replies = server.send(STRANGER, "forgot ALICE")
    token = re.search(r"reset alice ([0-9a-f]{16}) NEWPASSWORD", replies[1].body)[1]
    assert mails(replies) == [
        ("pbmserv forgot", [STRANGER], forgot_reply("ALICE")),
        ("pbmserv reset", [ALICE], forgot_mail("alice", STRANGER, token, "2026-11-02 12:02 UTC")),
    ]
    disabled, stored, expires = user_row(server, "alice")
    assert stored == hashlib.sha256(token.encode()).hexdigest() and stored != token
    assert expires == server.clock + timedelta(hours=24)
    assert not disabled


def test_forgot_token_is_the_same_on_a_replay(make_server):
    tokens = []
    for _ in range(2):
        server = make_server()
        server.signup("alice")
        tokens.append(ask_token(server))
    assert tokens[0] == tokens[1]


def test_forgot_from_the_registered_address(server):
    server.signup("alice")
    replies = server.send(ALICE, "forgot alice")
    assert [(r.subject, r.to) for r in replies] == [("pbmserv forgot", [ALICE]), ("pbmserv reset", [ALICE])]


def test_forgot_answers_the_same_for_an_unknown_user(server):
    server.signup("alice")
    before = snapshot(server)
    assert mails(server.send(STRANGER, "forgot nobody")) == [("pbmserv forgot", [STRANGER], forgot_reply("nobody"))]
    assert snapshot(server) == before


def test_forgot_sends_nothing_for_a_closed_account(server):
    server.signup("alice")
    server.send(ALICE, "signoff alice alice-pw")
    assert mails(server.send(ALICE, "forgot alice")) == [("pbmserv forgot", [ALICE], forgot_reply("alice"))]
    assert user_row(server, "alice")[1:] == (None, None)


def test_forgot_mails_at_most_three_tokens_a_day(server):
    server.signup("alice")
    tokens = [ask_token(server) for _ in range(3)]
    assert len(set(tokens)) == 3
    _, stored, _ = user_row(server, "alice")
    assert mails(server.send(STRANGER, "forgot alice")) == [("pbmserv forgot", [STRANGER], forgot_reply("alice"))]
    assert user_row(server, "alice")[1] == stored  # the last token mailed still works
    server.clock += timedelta(days=1)
    ask_token(server)


def test_forgot_arity(server):
    reply = server.one(STRANGER, "forgot")
    assert mails([reply]) == [("pbmserv error", [STRANGER], error_text(
        "forgot: too few words for this command.", "Send: forgot USERID", "> forgot"))]


# --- reset ------------------------------------------------------------------------------------


def test_reset_sets_the_password_and_clears_the_token(server):
    server.signup("alice")
    token = ask_token(server)
    reply = server.one(STRANGER, f"reset alice {token} new-pw")
    assert mails([reply]) == [("pbmserv reset", [STRANGER, ALICE], "The password of alice is changed.\n")]
    assert password_is(server, "alice", "new-pw") and not password_is(server, "alice", "alice-pw")
    assert user_row(server, "alice") == (False, None, None)
    reply = server.one(STRANGER, f"reset alice {token} other-pw")  # a token works once
    assert mails([reply]) == [("pbmserv error", [STRANGER], error_text(
        "That token sets no new password for alice.",
        "Send the reset line exactly as the reset mail shows it,\nor ask for a new token: forgot alice",
        f"> reset alice {MASK} {MASK}"))]
    assert password_is(server, "alice", "new-pw")


def test_reset_token_is_case_insensitive_and_the_user_too(server):
    server.signup("alice")
    token = ask_token(server)
    assert server.one(ALICE, f"reset ALICE {token.upper()} new-pw").subject == "pbmserv reset"
    assert password_is(server, "alice", "new-pw")


@pytest.mark.parametrize("args, problem, instead", [
    ("alice 0123456789abcdef new-pw", "That token sets no new password for alice.",
     "Send the reset line exactly as the reset mail shows it,\nor ask for a new token: forgot alice"),
    ("nobody TOKEN new-pw", "That token sets no new password for nobody.",
     "Send the reset line exactly as the reset mail shows it,\nor ask for a new token: forgot nobody"),
    ("alice TOKEN abc", "A password must have 4 to 64 characters (no spaces).",
     "Choose another password and send the command again."),
])
def test_reset_errors_change_nothing(server, args, problem, instead):
    server.signup("alice")
    token = ask_token(server)
    args = args.replace("TOKEN", token)
    before = snapshot(server)
    reply = server.one(STRANGER, f"reset {args}")
    userid = args.split()[0]
    assert mails([reply]) == [("pbmserv error", [STRANGER], error_text(
        problem, instead, f"> reset {userid} {MASK} {MASK}"))]
    assert snapshot(server) == before
    assert token not in reply.body


def test_reset_quote_masks_token_and_password_from_a_registered_address(server):
    server.signup("alice")
    reply = server.one(ALICE, "reset alice 0123456789abcdef new-pw", "Please.")
    assert mails([reply]) == [("pbmserv error", [ALICE], error_text(
        "That token sets no new password for alice.",
        "Send the reset line exactly as the reset mail shows it,\nor ask for a new token: forgot alice",
        f"> Subject: reset alice {MASK} {MASK}\n>\n> Please."))]


def test_reset_arity(server):
    reply = server.one(STRANGER, "reset alice 0123456789abcdef")
    assert mails([reply]) == [("pbmserv error", [STRANGER], error_text(
        "reset: too few words for this command.", "Send: reset USERID TOKEN NEWPASSWORD",
        f"> reset alice {MASK}"))]


def test_reset_token_is_valid_for_24_hours(server):
    server.signup("alice")
    token = ask_token(server)
    asked = server.clock
    server.clock = asked + timedelta(hours=24) - timedelta(minutes=2)  # the next mail comes a minute later
    assert server.one(STRANGER, f"reset alice {token} new-pw").subject == "pbmserv reset"
    token = ask_token(server)
    asked = server.clock
    server.clock = asked + timedelta(hours=24) - timedelta(minutes=1)  # exactly at the expiry
    before = snapshot(server)
    reply = server.one(STRANGER, f"reset alice {token} other-pw")
    expiry = f"{asked + timedelta(hours=24):%Y-%m-%d %H:%M} UTC"
    assert mails([reply]) == [("pbmserv error", [STRANGER], error_text(
        f"The reset token for alice expired at {expiry}.", "Ask for a new one: forgot alice",
        f"> reset alice {MASK} {MASK}"))]
    assert snapshot(server) == before
    assert password_is(server, "alice", "new-pw")


def test_reset_of_a_closed_account_is_refused(admin_server):
    server = admin_server
    token = ask_token(server, "bob")
    server.send(CAROL, "disable bob carol carol-pw")  # clears the token
    assert user_row(server, "bob") == (True, None, None)
    reply = server.one(STRANGER, f"reset bob {token} new-pw")
    assert body_of(reply).startswith("That token sets no new password for bob.\n")
    assert password_is(server, "bob", "bob-pw")


# --- signoff ----------------------------------------------------------------------------------


def test_signoff_resigns_every_running_game_and_closes_the_account(server):
    server.signup("alice", "bob", "carol")
    server.send(ALICE, "superwari challenge alice alice-pw bob")
    server.send(CAROL, "wari challenge carol carol-pw alice")
    server.send(CAROL, "superwari challenge carol carol-pw bob")  # not alice's
    replies = server.send(ALICE, "signoff alice alice-pw", "Goodbye.")
    table = "  alice      bob\n  #1 resign\n"
    superwari_note = "Game won by bob.\nalice resigned.\n\n" + table + "\n"
    comment = "\nalice writes:\nGoodbye.\n"
    assert [(r.subject, r.to) for r in replies] == [
        ("pbmserv signoff", [ALICE]),
        ("Super-Wari Board 101 **", [ALICE]),  # "Goodbye." is a real comment
        ("Super-Wari Board 101 **", [BOB]),
        ("Wari Board 101 **", [CAROL]),
        ("Wari Board 101 **", [ALICE]),
    ]
    assert body_of(replies[0]) == (
        "The account alice is closed.\n"
        "alice resigned on: Super-Wari board 101, Wari board 101.\n"
        "Thank you for playing.\n\n"
        "This server has no admin, so nobody can be asked to open the account again.\n")
    assert body_of(replies[2]) == ("Summary of Super-Wari Board 101\n\n" + superwari_note
                                   + board("alice", "bob", "alice 0, bob 0") + comment)
    assert body_of(replies[1]) == ("Summary of Super-Wari Board 101\n\n" + superwari_note
                                   + board("bob", "alice", "alice 0, bob 0") + comment)
    assert body_of(replies[3]).startswith("Summary of Wari Board 101\n\nGame won by carol.\nalice resigned.\n")
    assert board_row(server, "superwari", 101) == ("finished", "Game won by bob.", ["resign"], None)
    assert board_row(server, "wari", 101)[:3] == ("finished", "Game won by carol.", ["resign"])
    assert board_row(server, "superwari", 102)[:3] == ("active", "", [])
    assert user_row(server, "alice")[0] is True
    reply = server.one(ALICE, "superwari challenge alice alice-pw bob")
    assert (reply.subject, body_of(reply).split("\n")[0]) == ("Super-Wari error", "The account alice is closed.")
    reply = server.one(ALICE, "signoff alice alice-pw")
    assert body_of(reply).split("\n")[0] == "The account alice is closed."


def test_signoff_without_games_from_another_address(server):
    server.signup("alice")
    replies = server.send(STRANGER, "signoff alice alice-pw")
    assert mails(replies) == [("pbmserv signoff", [STRANGER, ALICE], (
        "The account alice is closed.\n"
        "alice had no running games.\n"
        "Thank you for playing.\n\n"
        "This server has no admin, so nobody can be asked to open the account again.\n"))]


def test_signoff_with_a_wrong_password_changes_nothing(server):
    server.signup("alice", "bob")
    server.send(ALICE, "superwari challenge alice alice-pw bob")
    before = snapshot(server)
    reply = server.one(ALICE, "signoff alice bob-pw")
    assert mails([reply]) == [("pbmserv error", [ALICE], error_text(
        "Wrong password for alice.", "Send the command again with your password (passwords are case-sensitive).\n"
        "4 tries left: after 5 wrong passwords in an hour, commands with a password are\n"
        "refused for an hour.\nIf you forgot your password, send: forgot alice",
        f"> Subject: signoff alice {MASK}"))]
    assert snapshot(server) == before


# --- all games --------------------------------------------------------------------------------


def test_all_games_lists_the_running_boards_of_every_game(server):
    server.signup("alice", "bob", "carol")
    server.send(ALICE, "superwari challenge alice alice-pw bob")
    server.send(CAROL, "superwari challenge carol carol-pw alice")
    server.send(CAROL, "wari challenge carol carol-pw alice")
    server.send(BOB, "survival challenge bob bob-pw alice")
    server.send(ALICE, "superwari resign 101 alice alice-pw")  # over: not listed
    reply = server.one(STRANGER, "all games ALICE")
    assert mails([reply]) == [("pbmserv all games", [STRANGER], (
        "Running boards of alice:\n\n"
        "  superwari  102  carol, alice: It is carol's turn.\n"
        "  survival   101  bob, alice: It is bob's turn.\n"
        "  wari       101  carol, alice: It is carol's turn.\n"))]


def test_all_games_without_running_boards(server):
    server.signup("alice")
    assert mails([server.one(ALICE, "all games alice")]) == [
        ("pbmserv all games", [ALICE], "alice plays on no running board.\n")]


@pytest.mark.parametrize("subject, problem, instead", [
    ("all games nobody", "There is no user nobody.", "Check the spelling of the userid and send: all games USERID"),
    ("all games", "all games: too few words for this command.", "Send: all games USERID"),
    ("all boards alice", "'all' must be followed by one of: games.", "Send one of:\n  all games USERID"),
])
def test_all_games_errors(server, subject, problem, instead):
    reply = server.one(STRANGER, subject)
    assert mails([reply]) == [("pbmserv error", [STRANGER], error_text(problem, instead, f"> {subject}"))]


# --- abort ------------------------------------------------------------------------------------

WRONG_CAROL = ("Send the command again with your password (passwords are case-sensitive).\n"
               "4 tries left: after 5 wrong passwords in an hour, commands with a password are\n"
               "refused for an hour.\nIf you forgot your password, send: forgot carol")


def test_abort_by_an_admin_ends_the_board_without_result(admin_server):
    server = admin_server
    server.send(ALICE, "superwari challenge alice alice-pw bob")
    server.send(ALICE, "superwari move 101 alice alice-pw c")
    replies = server.send(CAROL, "ABORT SuperWari 101 CAROL carol-pw", "Abandoned for a month.")
    result = "Game aborted by carol: no result."
    table = "  alice  bob\n  #1 c\n"
    def after_c(top: str, top_row: str, bottom: str, bottom_row: str) -> str:
        return ("   h    g    f    e    d    c    b    a\n"
                "+----+----+----+----+----+----+----+----+\n"
                f"|{top_row}|   {top}\n"
                "+----+----+----+----+----+----+----+----+\n"
                f"|{bottom_row}|   {bottom}\n"
                "+----+----+----+----+----+----+----+----+\n"
                "   a    b    c    d    e    f    g    h\n"
                "Captured: alice 0, bob 0\n")
    alice_row = "  3 |  3 |  0 |  4 |  4 |  4 |  3 |  3 "
    bob_row = "  3 |  3 |  3 |  3 |  3 |  3 |  3 |  3 "
    alice_seen_by_bob = "  3 |  3 |  4 |  4 |  4 |  0 |  3 |  3 "
    comment = "\ncarol writes:\nAbandoned for a month.\n"
    head = f"Summary of Super-Wari Board 101\n\n{result}\n\n{table}\n"
    assert mails(replies) == [
        ("pbmserv abort", [CAROL], "Super-Wari board 101 is aborted; its players (alice, bob) were sent the board.\n"),
        ("Super-Wari Board 101 **", [ALICE], head + after_c("bob", bob_row, "alice", alice_row) + comment),
        ("Super-Wari Board 101 **", [BOB], head + after_c("alice", alice_seen_by_bob, "bob", bob_row) + comment),
    ]
    assert board_row(server) == ("finished", result, ["move"], None)
    reply = server.one(BOB, "superwari move 101 bob bob-pw c")
    assert (reply.subject, body_of(reply).split("\n")[0]) == (
        "Super-Wari Board 101 Error", f"Super-Wari board 101 is over: {result}")
    assert f"  alice, bob: {result}\n" in body_of(server.one(STRANGER, "superwari history"))


@pytest.mark.parametrize("sender, args, problem, instead", [
    (BOB, "superwari 101 bob bob-pw", "Only admins may abort a board, and bob is not one.",
     "Ask an admin of this server to do it: carol. Send:\n  message bob PASSWORD carol\n"
     "with your request on the lines below it."),
    (CAROL, "superwari 101 carol bob-pw", "Wrong password for carol.", WRONG_CAROL),
    (CAROL, "chess 101 carol carol-pw", "There is no game 'chess'.", "Send 'list' for the games of this server."),
    (CAROL, "superwari 999 carol carol-pw", "There is no Super-Wari board 999.",
     "Send 'superwari games' for the boards."),
    (CAROL, "superwari x1 carol carol-pw", "There is no Super-Wari board x1.",
     "Send 'superwari games' for the boards."),
    (CAROL, "superwari 102 carol carol-pw", "Super-Wari board 102 is over already: Game won by alice.",
     "Only a running board can be aborted."),
])
def test_abort_errors_change_nothing(admin_server, sender, args, problem, instead):
    server = admin_server
    server.send(ALICE, "superwari challenge alice alice-pw bob")
    server.send(ALICE, "superwari challenge alice alice-pw bob")
    server.send(BOB, "superwari resign 102 bob bob-pw")
    before = snapshot(server)
    reply = server.one(sender, f"abort {args}")
    quoted = " ".join(args.split()[:3] + [MASK])
    assert mails([reply]) == [("pbmserv error", [sender], error_text(problem, instead, f"> Subject: abort {quoted}"))]
    assert snapshot(server) == before


# --- disable and enable -----------------------------------------------------------------------


def test_disable_and_enable_by_an_admin(admin_server):
    server = admin_server
    replies = server.send(CAROL, "disable BOB carol carol-pw")
    assert mails(replies) == [
        ("pbmserv disable", [CAROL], "The account bob is closed; bob was told.\n"),
        ("pbmserv disable", [BOB], ("The account bob was closed by carol, an admin of pbmserv@localhost.\n"
                                    "Commands with its password are refused until an admin opens it again.\n\n"
                                    "Ask an admin of this server to open it again: carol. Send from an open account\n"
                                    "(sign up a new one if need be):\n"
                                    "  message USERID PASSWORD carol\n"
                                    "with your request on the lines below it.\n")),
    ]
    assert user_row(server, "bob")[0] is True
    reply = server.one(BOB, "superwari challenge bob bob-pw alice")
    assert (reply.subject, body_of(reply).split("\n")[0]) == ("Super-Wari error", "The account bob is closed.")
    replies = server.send(CAROL, "enable bob Carol carol-pw")
    assert mails(replies) == [
        ("pbmserv enable", [CAROL], "The account bob is open; bob was told.\n"),
        ("pbmserv enable", [BOB], ("The account bob was opened again by carol, an admin of pbmserv@localhost.\n"
                                   "Its password works again.\n")),
    ]
    assert user_row(server, "bob")[0] is False
    assert server.send(BOB, "superwari challenge bob bob-pw alice")[0].subject.startswith("New Super-Wari Board")


def test_disable_from_another_address_copies_the_admin(admin_server):
    replies = admin_server.send(STRANGER, "disable bob carol carol-pw")
    assert [(r.subject, r.to) for r in replies] == [("pbmserv disable", [STRANGER, CAROL]),
                                                    ("pbmserv disable", [BOB])]


@pytest.mark.parametrize("sender, subject, problem, instead", [
    (ALICE, "disable bob alice alice-pw", "Only admins may disable an account, and alice is not one.",
     "Ask an admin of this server to do it: carol. Send:\n  message alice PASSWORD carol\n"
     "with your request on the lines below it."),
    (ALICE, "enable bob alice alice-pw", "Only admins may enable an account, and alice is not one.",
     "Ask an admin of this server to do it: carol. Send:\n  message alice PASSWORD carol\n"
     "with your request on the lines below it."),
    (CAROL, "disable bob carol alice-pw", "Wrong password for carol.", WRONG_CAROL),
    (CAROL, "disable nobody carol carol-pw", "There is no user nobody.",
     "Check the spelling of the userid and send: disable USERID ADMINID PASSWORD"),
    (CAROL, "enable bob carol carol-pw", "The account bob is open already.", "Nothing was changed."),
    (CAROL, "disable carol carol carol-pw", "An admin cannot close their own account.",
     "This server has no other admin, so nobody can be asked to close it.\n"
     "Or close it yourself: signoff carol PASSWORD"),
])
def test_disable_and_enable_errors_change_nothing(admin_server, sender, subject, problem, instead):
    server = admin_server
    before = snapshot(server)
    reply = server.one(sender, subject)
    quoted = " ".join(subject.split()[:3] + [MASK])
    assert mails([reply]) == [("pbmserv error", [sender], error_text(problem, instead, f"> Subject: {quoted}"))]
    assert snapshot(server) == before


def test_disable_of_a_closed_account(admin_server):
    server = admin_server
    server.send(CAROL, "disable bob carol carol-pw")
    before = snapshot(server)
    reply = server.one(CAROL, "disable bob carol carol-pw")
    assert mails([reply]) == [("pbmserv error", [CAROL], error_text(
        "The account bob is closed already.", "Nothing was changed.", f"> Subject: disable bob carol {MASK}"))]
    assert snapshot(server) == before


def test_enable_reopens_a_signed_off_account(admin_server):
    server = admin_server
    server.send(BOB, "signoff bob bob-pw")
    assert server.one(BOB, "forgot bob").subject == "pbmserv forgot"
    assert [r.subject for r in server.send(CAROL, "enable bob carol carol-pw")] == ["pbmserv enable"] * 2
    assert server.one(BOB, "change password bob bob-pw bob-pw2").subject == "pbmserv change password"


def test_prose_in_a_body_is_not_read_as_a_command(server):
    """A reply to a board mail with a move and a friendly line: "All the best!" starts
    like `all games` but is prose; only the move runs."""
    server.signup("alice", "bob")
    server.send("alice@example.org", "superwari challenge alice alice-pw bob")
    replies = server.send("alice@example.org", "Re: Super-Wari Board 101 alice",
                          "superwari move 101 alice alice-pw c\n\nAll the best!\n")
    assert [r.subject for r in replies] == ["Super-Wari Board 101 bob"] * 2  # a sign-off, not a real comment
    assert "alice writes:\nAll the best!" in replies[0].text


def test_an_aborted_board_shows_its_result_everywhere(make_server):
    server = make_server(server={"admins": ["carol"]})
    server.signup("alice", "bob")
    server.add_user("carol")
    server.send("alice@example.org", "superwari challenge alice alice-pw bob")
    server.send("carol@example.org", "abort superwari 101 carol carol-pw")
    shown = server.one("bob@example.org", "superwari show 101")
    assert shown.subject == "Super-Wari Board 101"
    assert shown.text.startswith("Summary of Super-Wari Board 101\n\nGame aborted by carol: no result.\n")


def test_a_closed_account_is_neither_challenged_nor_messaged_nor_broadcast_to(server):
    server.signup("alice", "bob", "carol")
    server.send(ALICE, "superwari challenge alice alice-pw bob")  # all three have played superwari
    server.send(BOB, "superwari challenge bob bob-pw carol")
    server.send(ALICE, "signoff alice alice-pw")  # resigns board 101
    reply = server.one(BOB, "superwari challenge bob bob-pw alice")
    assert (reply.subject, body_of(reply).split("\n")[:2]) == (
        "Super-Wari error", ["The account alice is closed: it plays no new games.", "Challenge someone else."])
    reply = server.one(BOB, "message bob bob-pw alice carol", "Hello.")
    assert (reply.subject, body_of(reply).split("\n")[:2]) == (
        "pbmserv error", ["The account alice is closed: it gets no messages.",
                          "Leave it out and send the message again."])
    replies = server.send(BOB, "broadcast bob bob-pw superwari", "Anyone for a game?")
    assert [(r.subject, r.to) for r in replies] == [
        ("pbmserv broadcast", [BOB]), ("[pbmserv] Broadcast from bob via PBM Server", [CAROL])]
