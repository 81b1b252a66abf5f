"""Issue 17, what the server's text tells a player to do next: tries left after a
wrong password and how to lift a lock, how to reach an admin, what a userid may
hold, the #N of the next move on every board mail, a legal example in Survival's
errors, what a challenged player may do, and a parameter written without its '-'.
Every reply is compared as whole text, and no line of it is longer than 78."""

from __future__ import annotations

import pytest
from conftest import body_of, drawing, sent

from pbmserv.store.repo import find_game

ALICE = "alice@example.org"
BOB = "bob@example.org"
CAROL = "carol@example.org"
ROOT = "root@example.org"
MALLORY = "mallory@example.net"
MASK = "********"


def error(problem: str, instead: str, quoted: str, board: str = "", subject: str = "Subject: ") -> str:
    """An error mail; to an address nobody registered it quotes the line alone (no `subject`)."""
    return (f"{problem}\n{instead}\n\n" + (f"{board}\n" if board else "")
            + f"Your message:\n> {subject}{quoted}\n")


def fits(*replies) -> None:
    for reply in replies:
        assert max(len(line) for line in reply.body.split("\n")) <= 78, reply.body


# --- 1. a wrong password: the tries left, how to reset it, how to lift the lock ----------


def wrong(left: str, userid: str = "alice") -> str:
    return ("Send the command again with your password (passwords are case-sensitive).\n"
            f"{left} left: after 5 wrong passwords in an hour, commands with a password are\n"
            "refused for an hour.\n"
            f"If you forgot your password, send: forgot {userid}")


def test_a_wrong_password_says_the_tries_left_and_how_to_reset_it(server):
    server.signup("alice")
    for left in ("4 tries", "3 tries", "2 tries", "1 try"):
        reply = server.one(ALICE, "signoff alice guess1")
        assert (reply.subject, body_of(reply)) == ("pbmserv error", error(
            "Wrong password for alice.", wrong(left), f"signoff alice {MASK}"))
        fits(reply)


def test_the_wrong_password_that_locks_says_so_and_how_to_lift_it(server):
    server.signup("alice")
    for _ in range(4):
        server.one(ALICE, "signoff alice guess1")
    lock, refused = server.send(ALICE, "signoff alice guess1")
    assert (lock.to, lock.subject) == ([ALICE], "pbmserv lock")
    assert (refused.to, refused.subject, body_of(refused)) == ([ALICE], "pbmserv error", error(
        "Wrong password for alice.",
        "That was the last try: for an hour, commands with a password are refused from\n"
        "alice@example.org.\n"
        'To lift it now, reply to the mail "pbmserv lock" sent to the registered\n'
        "addresses of alice: commands from them work again.\n"
        "If you forgot your password, send: forgot alice", f"signoff alice {MASK}"))
    fits(lock, refused)
    # what it says works: a reply to the lock mail lifts the lock
    assert server.one(ALICE, "Re: pbmserv lock", headers={"To": lock.message["Reply-To"]}).subject == \
        "pbmserv unlock"
    assert server.one(ALICE, "signoff alice alice-pw").subject == "pbmserv signoff"


def test_a_stranger_who_locks_is_told_both_locks(make_server):
    server = make_server(limits={"unregistered_errors_per_day": 100})
    server.signup("alice")
    for left in ("4 tries", "3 tries", "2 tries", "1 try"):
        assert body_of(server.one(MALLORY, "signoff alice guess1")) == error(
            "Wrong password for alice.", wrong(left), f"signoff alice {MASK}", subject="")
    lock, refused = server.send(MALLORY, "signoff alice guess1")
    assert lock.to == [ALICE]
    assert (refused.to, body_of(refused)) == ([MALLORY], error(
        "Wrong password for alice.",
        "That was the last try: for an hour, commands with a password are refused from\n"
        "mallory@example.net and from any address not registered to alice.\n"
        'To lift it now, reply to the mail "pbmserv lock" sent to the registered\n'
        "addresses of alice: commands from them work again.\n"
        "If you forgot your password, send: forgot alice", f"signoff alice {MASK}", subject=""))


def test_forgot_works_as_the_wrong_password_error_says(server):
    server.signup("alice")
    server.one(ALICE, "signoff alice guess1")
    assert sorted(r.subject for r in server.send(ALICE, "forgot alice")) == ["pbmserv forgot", "pbmserv reset"]


# --- 2. how to reach an admin -----------------------------------------------------------


@pytest.fixture
def admins(make_server):
    """root is the admin of a server where alice and bob play."""
    server = make_server(server={"admins": ["root", "nobody-yet"]})
    server.add_user("root")
    server.signup("alice", "bob")
    return server


ASK_ROOT = ("Send:\n"
            "  message bob PASSWORD root\n"
            "with your request on the lines below it.")
OPEN_AGAIN = ("Ask an admin of this server to open it again: root. Send from an open account\n"
              "(sign up a new one if need be):\n"
              "  message USERID PASSWORD root\n"
              "with your request on the lines below it.")


def test_an_admin_command_from_a_player_names_the_admins_and_the_message_command(admins):
    reply = admins.one(BOB, "disable alice bob bob-pw")
    assert body_of(reply) == error("Only admins may disable an account, and bob is not one.",
                                   "Ask an admin of this server to do it: root. " + ASK_ROOT,
                                   f"disable alice bob {MASK}")
    fits(reply)


def test_the_message_the_error_names_reaches_the_admin(admins):
    answer, relayed = admins.send(BOB, "message bob bob-pw root", "Please abort board 101.")
    assert (answer.subject, relayed.to) == ("pbmserv message", [ROOT])


def test_a_closed_account_is_told_which_admin_can_open_it_and_how(admins):
    reply = admins.one(BOB, "signoff bob bob-pw")
    assert body_of(reply) == ("The account bob is closed.\n"
                              "bob had no running games.\n"
                              "Thank you for playing.\n\n"
                              "Ask an admin of this server to open the account again: root. Send from an open\n"
                              "account (sign up a new one if need be):\n"
                              "  message USERID PASSWORD root\n"
                              "with your request on the lines below it.\n")
    reply = admins.one(BOB, "superwari challenge bob bob-pw alice")
    assert body_of(reply) == error("The account bob is closed.", OPEN_AGAIN, f"superwari challenge bob {MASK} alice")
    fits(reply)


def test_an_account_closed_by_an_admin_is_told_how_to_ask_for_it_back(admins):
    answer, told = admins.send(ROOT, "disable bob root root-pw")
    assert (told.to, body_of(told)) == ([BOB], (
        "The account bob was closed by root, an admin of pbmserv@localhost.\n"
        "Commands with its password are refused until an admin opens it again.\n\n" + OPEN_AGAIN + "\n"))
    assert body_of(admins.one(BOB, "forgot bob")) == "If bob exists, a reset token was mailed to its registered addresses.\n"


def test_an_admin_closing_their_own_account_is_told_there_is_no_other_admin(admins):
    reply = admins.one(ROOT, "disable root root root-pw")
    assert body_of(reply) == error(
        "An admin cannot close their own account.",
        "This server has no other admin, so nobody can be asked to close it.\n"
        "Or close it yourself: signoff root PASSWORD", f"disable root root {MASK}")


def test_an_admin_closing_their_own_account_is_sent_to_another(make_server):
    server = make_server(server={"admins": ["root", "carol"]})
    server.add_user("root")
    server.add_user("carol")
    reply = server.one(ROOT, "disable root root root-pw")
    assert body_of(reply) == error(
        "An admin cannot close their own account.",
        "Ask an admin of this server to close it: carol. Send:\n"
        "  message root PASSWORD carol\n"
        "with your request on the lines below it.\n"
        "Or close it yourself: signoff root PASSWORD", f"disable root root {MASK}")


def test_a_server_without_admins_says_so_plainly(server):
    server.signup("alice", "bob")
    assert body_of(server.one(BOB, "disable alice bob bob-pw")) == error(
        "Only admins may disable an account, and bob is not one.",
        "This server has no admin, so nobody can be asked to do it.", f"disable alice bob {MASK}")
    server.one(BOB, "signoff bob bob-pw")
    assert body_of(server.one(BOB, "signoff bob bob-pw")) == error(
        "The account bob is closed.", "This server has no admin, so nobody can be asked to open it again.",
        f"signoff bob {MASK}")


def test_two_admins_are_both_named(make_server):
    server = make_server(server={"admins": ["root", "Carol"]})
    server.add_user("root")
    server.add_user("Carol")
    server.signup("bob")
    assert body_of(server.one(BOB, "disable root bob bob-pw")) == error(
        "Only admins may disable an account, and bob is not one.",
        "Ask an admin of this server to do it: root or Carol. " + ASK_ROOT, f"disable root bob {MASK}")


# --- 3. a userid is ASCII -----------------------------------------------------------------


@pytest.mark.parametrize("userid, problem", [
    ("bäb", "'bäb' cannot be a userid: use ASCII letters, digits, '_', '.' or '-'."),
    ("Zoë_Ünal", "'Zoë_Ünal' cannot be a userid: use ASCII letters, digits, '_', '.' or '-'."),
    ("ääääääääääääääää", "'äääääääää...' cannot be a userid: use ASCII letters, digits, '_', '.' or '-'."),
    ("abcdefghijklmnopqrstu", "'abcdefghi...' cannot be a userid: it has 21 characters, at most 20."),
])
def test_a_userid_outside_ascii_is_refused_in_words_that_say_so(server, userid, problem):
    reply = server.one(ALICE, f"signup {userid} secret-pw")
    assert body_of(reply) == error(problem, "Send: signup USERID PASSWORD [ADDRESS ...]", f"signup {userid} {MASK}",
                                   subject="")  # the sender has no account: the line alone is quoted
    fits(reply)


# --- 4. the #N of the next move ------------------------------------------------------------

FORFEIT = "{} forfeits if no move by {:%Y-%m-%d %H:%M} UTC."


def superwari(status: str, next_move: str, deadline: str, table: str, board: str, note: str = "") -> str:
    return (f"Summary of Super-Wari Board 101\n\n{status}\n" + (f"{note}\n" if note else "")
            + f"Next move: {next_move}\n{deadline}\n" + (f"\n{table}" if table else "") + f"\n{board}")


def forfeits(userid: str, mail: int) -> str:
    from datetime import timedelta
    return FORFEIT.format(userid, sent(mail) + timedelta(days=21))


@pytest.fixture
def undone(server):
    """Super-Wari board 101: alice c (#1), bob c (#2), bob's undo of it accepted (#3),
    bob b (#4); alice is to move (mail 8)."""
    server.signup("alice", "bob")
    server.send(ALICE, "superwari challenge alice alice-pw bob")
    server.send(ALICE, "superwari move 101 alice alice-pw c #1")
    server.send(BOB, "superwari move 101 bob bob-pw c #2")
    server.send(BOB, "superwari move 101 bob bob-pw undo #3")
    server.send(ALICE, "superwari move 101 alice alice-pw accept #3")
    server.send(BOB, "superwari move 101 bob bob-pw b #4")
    return server


AFTER_C_B = ([3, 3, 3, 4, 4, 4, 0, 3], [3, 3, 0, 4, 4, 4, 3, 3])  # bob's h..a, alice's a..h


def test_every_board_mail_says_the_next_move_and_the_table_numbers_moves_as_the_guard(undone):
    board = drawing("bob", AFTER_C_B[0], "alice", AFTER_C_B[1])
    reply = undone.one(ALICE, "superwari show 101")
    assert body_of(reply) == superwari("It is alice's turn.", "#5", forfeits("alice", 8),
                                       "  alice  bob\n  #1 c   #4 b\n", board)
    fits(reply)


def test_the_new_board_and_a_vote_say_the_next_move(server):
    server.signup("alice", "bob")
    new = server.send(ALICE, "superwari challenge alice alice-pw bob")
    assert [body_of(r).split("\n")[3] for r in new] == ["Next move: #1", "alice challenged you to Super-Wari. Move, or decline:"]
    assert body_of(new[1]).split("\n")[6] == "Next move: #1"
    server.send(ALICE, "superwari move 101 alice alice-pw c")
    proposed = server.send(ALICE, "superwari move 101 alice alice-pw propose")
    assert [body_of(r).split("\n")[3:6] for r in proposed] == [[
        "alice proposes a draw. To answer, send:", "  superwari move 101 USERID PASSWORD accept (or reject)",
        "Next move: #2"]] * 2


def test_the_guard_error_says_the_next_move_and_what_to_send(undone):
    stale = undone.one(ALICE, "superwari move 101 alice alice-pw d #4")
    board = superwari("It is alice's turn.", "#5", forfeits("alice", 8), "  alice  bob\n  #1 c   #4 b\n",
                      drawing("bob", AFTER_C_B[0], "alice", AFTER_C_B[1]))
    assert (stale.subject, body_of(stale)) == ("Super-Wari Board 101 Error", error(
        "Move d received as move #4, but the next move on board 101 is #5.",
        "Look at the board below. If d is still your move, send:\n"
        "  superwari move 101 alice PASSWORD d #5", f"superwari move 101 alice {MASK} d #4", board))
    fits(stale)
    # what it says to send plays
    assert [r.subject for r in undone.send(ALICE, "superwari move 101 alice alice-pw d #5")] == [
        "Super-Wari Board 101 bob"] * 2


def test_a_long_move_in_a_guard_error_is_cut_and_written_move(make_server):
    server = make_server()
    server.signup("alice", "bob", "carol")
    server.send(ALICE, "survive challenge alice alice-pw bob carol")
    say = "say " + "very " * 10 + "good luck"
    reply = server.one(ALICE, f"survive move 101 alice alice-pw {say} #7")
    assert body_of(reply).split("\n")[:3] == [
        "Move say very very very very very v... received as move #7, but the next move",
        "on board 101 is #1.",
        "Look at the board below. If it is still your move, send:"]
    assert body_of(reply).split("\n")[3] == "  survive move 101 alice PASSWORD MOVE #1"
    fits(reply)


def test_survive_board_mails_say_the_next_move_without_a_move_table(server):
    server.signup("alice", "bob", "carol")
    new = server.send(ALICE, "survive challenge alice alice-pw bob carol")
    for reply in new:
        lines = body_of(reply).split("\n")
        assert "Next move: #1" in lines
        assert not any(line.lstrip().startswith("#1 ") for line in lines)
    server.send(ALICE, "survive move 101 alice alice-pw search")
    after = body_of(server.one(ALICE, "survive show 101")).split("\n")
    assert "Next move: #2" in after


# --- 5. Survival's example move is a legal one ---------------------------------------------


def test_survivals_example_is_a_legal_move_not_a_taken_cell(server):
    server.signup("alice", "bob")
    server.send(ALICE, "survival challenge alice alice-pw bob")
    server.send(ALICE, "survival move 101 alice alice-pw C3/NE")
    reply = server.one(BOB, "survival move 101 bob bob-pw hello")
    assert body_of(reply).split("\n")[:7] == [
        'Move hello is not legal on board 101: "hello" is not a move; send a cell and',
        "the direction of its arrow, e.g. A1/NE.",
        "Send instead: survival move 101 bob PASSWORD MOVE",
        "where MOVE is a cell and the direction of its arrow (N, NE, SE, S, SW, NW):",
        "CELL/DIRECTION (108 legal moves, such as A1/N: send 'survival show 101 legal'",
        "for the list)",
        ""]
    fits(reply)
    # the example plays
    assert [r.subject for r in server.send(BOB, "survival move 101 bob bob-pw A1/NE")] == [
        "Survival Board 101 alice"] * 2


def test_a_cell_without_a_direction_is_told_it_is_taken_before_the_example(server):
    server.signup("alice", "bob")
    server.send(ALICE, "survival challenge alice alice-pw bob")
    server.send(ALICE, "survival move 101 alice alice-pw C3/NE")
    reply = server.one(BOB, "survival move 101 bob bob-pw C3")
    assert body_of(reply).split("\n")[0] == "Move C3 is not legal on board 101: C3 is taken."


# --- 6. the challenged player: who, decline, reply to play ------------------------------------


def test_the_challenged_player_is_told_who_challenged_them_and_how_to_decline(server):
    server.signup("alice", "bob")
    to_alice, to_bob = server.send(ALICE, "superwari challenge alice alice-pw bob")
    start = drawing("bob", [3] * 8, "alice", [3] * 8)
    assert (to_alice.to, to_alice.subject, body_of(to_alice)) == (
        [ALICE], "New Super-Wari Board 101 alice",
        superwari("It is alice's turn.", "#1", forfeits("alice", 3), "", start))
    assert (to_bob.to, to_bob.subject, body_of(to_bob)) == (
        [BOB], "New Super-Wari Board 101 alice",
        superwari("It is alice's turn.", "#1", forfeits("alice", 3), "",
                  drawing("alice", [3] * 8, "bob", [3] * 8),
                  note="alice challenged you to Super-Wari. Move, or decline:\n"
                       "  superwari decline 101 bob PASSWORD\n"
                       "Once it is your turn, a reply to this mail with just your move plays it."))
    fits(to_alice, to_bob)
    # both things it says work: a reply to it plays, and decline calls the board off
    server.send(ALICE, "superwari move 101 alice alice-pw c")
    assert [r.subject for r in server.send(BOB, "Re: New Super-Wari Board 101 alice", "c",
                                           headers={"To": to_bob.message["Reply-To"]})] == [
        "Super-Wari Board 101 alice"] * 2


def test_decline_as_the_mail_says(server):
    server.signup("alice", "bob")
    server.send(ALICE, "superwari challenge alice alice-pw bob")
    declined = server.send(BOB, "superwari decline 101 bob bob-pw")
    assert [r.subject for r in declined] == ["Super-Wari Board 101"] * 2
    with server.sessions() as session:
        assert find_game(session, "superwari", 101).result == "Game declined by bob: no result."


def test_every_challenged_survive_player_is_told_with_their_own_userid(server):
    server.signup("alice", "bob", "carol")
    mails = {r.to[0]: body_of(r).split("\n") for r in server.send(ALICE, "survive challenge alice alice-pw bob carol")}
    for address, userid in ((BOB, "bob"), (CAROL, "carol")):
        assert mails[address][3:6] == ["alice challenged you to Survive. Move, or decline:",
                                       f"  survive decline 101 {userid} PASSWORD",
                                       "To move, reply to this mail with just your move."]
    assert "alice challenged you" not in "\n".join(mails[ALICE])


# --- 7. a parameter without its '-' ---------------------------------------------------------


def test_a_parameter_without_its_dash_is_named_as_one(server):
    server.signup("alice", "bob")
    reply = server.one(ALICE, "serpent challenge alice alice-pw bob size=4")
    assert (reply.subject, body_of(reply)) == ("Serpent error", error(
        "Parameters start with '-': -size=4", "Send: serpent challenge alice PASSWORD bob -size=4",
        f"serpent challenge alice {MASK} bob size=4"))
    assert [r.subject for r in server.send(ALICE, "serpent challenge alice alice-pw bob -size=4")] == [
        "New Serpent Board 101 alice"] * 2


def test_server_parameters_without_dashes_too_and_other_words_stay_userids(server):
    server.signup("alice", "bob")
    reply = server.one(ALICE, "superwari challenge alice alice-pw bob NagTime=2d forfeittime=9d")
    assert body_of(reply).split("\n")[:2] == [
        "Parameters start with '-': -NagTime=2d, -forfeittime=9d",
        "Send: superwari challenge alice PASSWORD bob -NagTime=2d -forfeittime=9d"]
    assert body_of(server.one(ALICE, "serpent challenge alice alice-pw bob colour=red")).split("\n")[0] == \
        "There is no user colour=red."
