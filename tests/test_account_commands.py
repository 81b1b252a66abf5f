"""Account commands by mail (DESIGN.md §2, §3): help, signup, change password/address,
list, message, broadcast; the reply frame, threading, masking, quoting, rate limits and
the loop guard. Every reply text is compared as a whole."""

from __future__ import annotations

from datetime import timedelta

import pytest
from conftest import Server, body_of

from pbmserv.passwords import verify_password
from pbmserv.store.repo import find_user

ALICE = "alice@example.org"
BOB = "bob@example.org"
CAROL = "carol@example.org"
MASK = "********"

HELP_TEXT = """\
pbmserv, the play-by-email game server at pbmserv@localhost

Send one command as the Subject of a mail, or one command a line in the body.
Words in capitals are yours to fill in; [brackets] mark what may be left out.
To move, you may simply answer a board mail with your move as its first line:
its Reply-To address stands for your userid and password on that board.

Account commands:
  help [TOPIC]
      this list, or the help of one command or game
  signup USERID PASSWORD [ADDRESS ...]
      open an account (addresses default to the one you write from)
  change password USERID OLD NEW
      change your password
  change address USERID PASSWORD ADDRESS ...
      replace your e-mail addresses
  confirm USERID TOKEN
      confirm an address added to your account (the token was mailed to it)
  list
      the games this server plays
  message USERID PASSWORD TO_USERID ...
      send the text below the command to other players
  broadcast USERID PASSWORD [GAME]
      send the text below the command to every player of GAME
  forgot USERID
      mail a token to set a new password to your registered addresses
  reset USERID TOKEN NEWPASSWORD
      set a new password with the token that 'forgot' mailed
  signoff USERID PASSWORD
      close your account, resigning every game you play
  all games USERID
      the running boards of a player in every game, with their status
  players [GAME]
      the players who want games, with their ratings
  set USERID PASSWORD [NAME VALUE]
      your mail preferences; alone: show them
  vacation USERID PASSWORD on|off|DAYS
      go away (for DAYS, or until 'off'): no reminders or forfeits meanwhile

Game commands (GAME is the name of a game below):
  GAME help
      the rules of the game and how to write a move
  GAME challenge USERID PASSWORD OPPONENT ... [-NAME=VALUE ...]
      start a game at once; you take the first seat
  GAME move BOARD USERID PASSWORD MOVE [#N]
      make your move, or vote (#N: only if it is the N-th move on the board)
  GAME show BOARD[#N] [legal]
      the board as all see it (#N: after N moves; legal: the legal moves)
  GAME showas BOARD USERID PASSWORD
      the board as you see it, with what only you may see
  GAME resign BOARD USERID PASSWORD
      give up the game
  GAME games [USERID]
      the running boards of this game (or of a player) and whose turn it is
  GAME decline BOARD USERID PASSWORD
      call off a game you were challenged to, before your first move
  GAME rematch BOARD USERID PASSWORD
      after a board's end: a new one with the same players, seats rotated
  GAME refuse USERID PASSWORD
      refuse every challenge of this game from now on
  GAME welcome USERID PASSWORD
      accept challenges of this game again after 'refuse'
  GAME limit USERID PASSWORD N|none
      accept challenges only while you play fewer than N boards others started
  GAME match USERID PASSWORD PLAYER PLAYER ... [-NAME=VALUE ...]
      start a board between robots to watch (admins: between anyone)
  GAME subscribe BOARD USERID PASSWORD
      watch a board: its board mails, as everyone sees them, come to you too
  GAME unsubscribe BOARD USERID PASSWORD
      stop watching a board
  GAME chat BOARD USERID PASSWORD
      send the text below the command to the players and observers of a board
  GAME queue BOARD USERID PASSWORD MOVE|cancel
      a move played for you when your turn comes, if it is legal then
  GAME preview BOARD USERID PASSWORD MOVE[; MOVE ...]
      the board as it would be after these moves; nothing is played
  GAME submit BOARD USERID PASSWORD MOVE
      check a move and see the board after it; confirm plays it
  GAME confirm BOARD USERID PASSWORD
      play the move you submitted
  GAME history [USERID]
      the finished boards of this game (or of a player), with their results
  GAME standings
      the players' Elo ratings in this game (two-player games only)
  GAME seek USERID PASSWORD [PLAYERS] [-NAME=VALUE ...]
      post an open challenge that anyone may join
  GAME seeks
      the open challenges of this game, the oldest first
  GAME join SEEK USERID PASSWORD
      take a seat in an open challenge; a two-player game starts at once
  GAME start SEEK USERID PASSWORD [ROBOT ...]
      start your seek now; robots you name fill empty seats
  GAME unseek SEEK USERID PASSWORD
      withdraw your open challenge, or leave one you joined

Games:
  serpent     Eggs and snakes on a hex board: groups without a survival path
              die
  superwari   Bill Taylor's 8-pit Wari: sow, capture 2s and 3s, never starve
              your opponent
  survival    David Smith's arrow game: place where your last arrow points, or
              lose
  survive     Survive the nuclear winter: pay Food, Water and Shelter each
              round; trade, lie, fight
  wari        The classic 6-pit mancala game (Oware): sow, capture 2s and 3s

Send "help COMMAND" for more on a command, "GAME help" for a game's rules,
"help reply" for how to move by answering a board mail, and "help robots"
for the computer opponents.

Admins only:
  abort GAME BOARD USERID PASSWORD
      end a board with no result (admins only)
  disable USERID ADMINID PASSWORD
      close an account: its password no longer works (admins only)
  enable USERID ADMINID PASSWORD
      open a closed account again (admins only)
"""

LIST_TEXT = """\
Games on this server:

  serpent     Serpent       2 players
      Eggs and snakes on a hex board: groups without a survival path die
  superwari   Super-Wari    2 players
      Bill Taylor's 8-pit Wari: sow, capture 2s and 3s, never starve your
      opponent
  survival    Survival      2 players
      David Smith's arrow game: place where your last arrow points, or lose
  survive     Survive       2-7 players
      Survive the nuclear winter: pay Food, Water and Shelter each round;
      trade, lie, fight
  wari        Wari          2 players
      The classic 6-pit mancala game (Oware): sow, capture 2s and 3s

Send "GAME help" for the rules of one.
"""


ROBOTS_HINT = ('\nNo opponent yet? "players" lists who wants games, and robot1 (weak),\n'
               'robot2 and robot3 (strong) play any game at any hour: "help robots".\n')


def welcome(userid: str, addresses: str) -> str:
    return (f"Welcome to pbmserv, {userid}.\n\n"
            f"Your account is registered to: {addresses}.\n"
            'Send "list" for the games, and this line to start one:\n\n'
            f"    GAME challenge {userid} PASSWORD OPPONENT\n" + ROBOTS_HINT)


def error_text(problem: str, instead: str, quoted: str) -> str:
    """An error reply without a board: what was wrong, what to send, the quote."""
    return f"{problem}\n{instead}\n\nYour message:\n{quoted}\n"


def relayed(sender: str, text: str) -> str:
    return (f"{sender} writes:\n\n{text}\n\n"
            f"To answer {sender}, reply to this mail with your text (from your\n"
            f"registered address), or send: message USERID PASSWORD {sender}\n"
            "with your text on the lines below it.\n")


def broadcast_text(text: str) -> str:
    return f"[pbmserv@localhost]\n\n{text}\n"


def stored_user(server: Server, userid: str) -> tuple[str, list[str]] | None:
    """(userid as registered, addresses) from the database, or None."""
    with server.sessions() as session:
        user = find_user(session, userid)
        return None if user is None else (user.userid, user.emails)


def password_is(server: Server, userid: str, password: str) -> bool:
    with server.sessions() as session:
        return verify_password(find_user(session, userid).password_hash, password)


def assert_error(reply, text: str, to: str) -> None:
    assert (reply.subject, reply.to, body_of(reply)) == ("pbmserv error", [to], text)


# --- help and list ------------------------------------------------------------------


def test_help_lists_every_command_and_game(server):
    reply = server.one(ALICE, "help")
    assert (reply.subject, reply.to, body_of(reply)) == ("pbmserv help", [ALICE], HELP_TEXT)


def test_help_on_an_account_command(server):
    reply = server.one(ALICE, "help signup")
    assert (reply.subject, reply.to) == ("pbmserv help", [ALICE])
    assert body_of(reply) == (
        "signup USERID PASSWORD [ADDRESS ...]\n"
        "    open an account (addresses default to the one you write from)\n\n"
        "A userid has 1 to 20 ASCII letters (a-z, A-Z), digits, '_', '.' or '-'; a\n"
        "password 4 to 64 characters without spaces (case-sensitive). Each new\n"
        "address gets a mail to confirm it (a reply does) before it receives\n"
        "anything else.\n")


def test_help_on_a_two_word_command(server):
    reply = server.one(ALICE, "help change password")
    assert (reply.subject, body_of(reply)) == (
        "pbmserv help", "change password USERID OLD NEW\n    change your password\n")


def test_help_on_a_game_command_is_case_insensitive(server):
    reply = server.one(ALICE, "help MOVE")
    assert (reply.subject, body_of(reply)) == (
        "pbmserv help",
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
        "anyone, cancels it. One vote at a time; the board mails show it.\n")


def test_help_on_a_game_is_the_games_help(server):
    reply = server.one(ALICE, "help SuperWari")
    assert (reply.subject, reply.to) == ("Super-Wari help", [ALICE])
    assert body_of(reply).startswith("Help for Super-Wari\n\nSuper-Wari is Bill Taylor's Wari")
    assert body_of(reply) == body_of(server.one(ALICE, "superwari help"))


def test_help_unknown_topic(server):
    reply = server.one(ALICE, "help frobnicate")
    assert_error(reply, error_text("There is no help topic 'frobnicate'.",
                                   "Send 'help' for the list of commands and games.",
                                   "> help frobnicate"), ALICE)


def test_list(server):
    reply = server.one(ALICE, "list")
    assert (reply.subject, reply.to, body_of(reply)) == ("pbmserv list", [ALICE], LIST_TEXT)


# --- signup -----------------------------------------------------------------------


def test_signup_registers_the_sender(server):
    reply = server.one(ALICE, "signup alice alice-pw")
    assert (reply.subject, reply.to, body_of(reply)) == (
        "pbmserv signup", [ALICE], welcome("alice", ALICE))
    assert stored_user(server, "ALICE") == ("alice", [ALICE])
    assert password_is(server, "alice", "alice-pw")
    assert not password_is(server, "alice", "ALICE-PW")  # passwords are case-sensitive


def test_signup_with_other_addresses_waits_for_their_confirmation(server):
    replies = server.send(ALICE, "signup Carol carol-pw carol@example.org Carol@Example.ORG c2@example.net")
    assert [(r.subject, r.to) for r in replies] == [
        ("pbmserv signup", [ALICE]), ("pbmserv confirm", [CAROL]), ("pbmserv confirm", ["c2@example.net"])]
    assert body_of(replies[0]) == (
        "Welcome to pbmserv, Carol.\n\n"
        "No address receives the mail of your account until one is confirmed.\n"
        'Send "list" for the games, and this line to start one:\n\n'
        "    GAME challenge Carol PASSWORD OPPONENT\n" + ROBOTS_HINT + "\n"
        "Waiting for confirmation: carol@example.org, c2@example.net.\n"
        "Each was sent a mail to confirm it; it receives mail once confirmed.\n")
    token = body_of(replies[1]).split("confirm Carol ")[1].split()[0]
    assert body_of(replies[1]) == (
        "Someone writing from alice@example.org\n"
        "asked to add this address to the account Carol\n"
        "on this play-by-email server, so that its game mail comes here.\n\n"
        "To confirm it, reply to this mail: nothing else is needed. Or send this line\n"
        "(as the Subject, or in the body):\n\n"
        f"    confirm Carol {token}\n\n"
        "If it was not you, ignore this mail: nothing more will be sent here.\n")
    assert replies[1].message["Reply-To"].startswith("pbmserv+c-")
    assert stored_user(server, "carol") == ("Carol", [])
    confirmed = server.one("someone@else.example", "Re: pbmserv confirm", f"confirm carol {token.upper()}")
    assert (confirmed.subject, confirmed.to, body_of(confirmed)) == (
        "pbmserv confirm", ["someone@else.example", CAROL], "carol@example.org now receives the mail of Carol.\n")
    assert stored_user(server, "carol") == ("Carol", [CAROL])
    wrong = server.one(CAROL, f"confirm carol {token}")  # used up
    assert body_of(wrong).split("\n")[:2] == ["That token confirms no address waiting for carol.",
                                             "Send the confirm line exactly as the confirmation mail shows it."]
    assert token not in wrong.body  # the token is masked in the quote


BAD_USERIDS = {"a/b": "'a/b' cannot be a userid: use ASCII letters, digits, '_', '.' or '-'.",
               "x" * 21: "'xxxxxxxxx...' cannot be a userid: it has 21 characters, at most 20.",
               "bob@example.org": "'bob@examp...' cannot be a userid: use ASCII letters, digits, '_', '.' or '-'."}


@pytest.mark.parametrize("userid", list(BAD_USERIDS))
def test_signup_bad_userid(server, userid):
    reply = server.one(BOB, f"signup {userid} bob-pw")
    assert_error(reply, error_text(
        BAD_USERIDS[userid], "Send: signup USERID PASSWORD [ADDRESS ...]",
        f"> signup {userid} {MASK}"), BOB)
    assert stored_user(server, userid) is None


@pytest.mark.parametrize("userid", ["all", "ERROR", "All"])
def test_signup_reserved_userid(server, userid):
    server.signup("alice")  # a registered sender gets the whole mail quoted
    reply = server.one(ALICE, f"signup {userid} some-pw")
    assert_error(reply, error_text(
        f"'{userid}' cannot be a userid: the word is used in board subjects.",
        "Choose another userid and send: signup USERID PASSWORD [ADDRESS ...]",
        f"> Subject: signup {userid} {MASK}"), ALICE)
    assert stored_user(server, userid) is None


def test_signup_taken_userid_ignoring_case(server):
    server.signup("alice")
    reply = server.one(BOB, "signup ALICE bob-pw")
    assert_error(reply, error_text(
        "The userid alice is taken.",
        "Choose another userid and send: signup USERID PASSWORD [ADDRESS ...]",
        f"> signup ALICE {MASK}"), BOB)
    assert stored_user(server, "alice") == ("alice", [ALICE])
    assert password_is(server, "alice", "alice-pw")
    assert not password_is(server, "alice", "bob-pw")


@pytest.mark.parametrize("password", ["abc", "x" * 65])
def test_signup_password_length(server, password):
    reply = server.one(CAROL, f"signup carol {password}")
    assert_error(reply, error_text("A password must have 4 to 64 characters (no spaces).",
                                   "Choose another password and send the command again.",
                                   f"> signup carol {MASK}"), CAROL)
    assert stored_user(server, "carol") is None


def test_signup_password_of_4_and_64_characters(server):
    assert server.one("d@example.org", "signup dora abcd").subject == "pbmserv signup"
    assert server.one("e@example.org", f"signup emil {'y' * 64}").subject == "pbmserv signup"
    assert password_is(server, "emil", "y" * 64)


@pytest.mark.parametrize("address", ["bad@", "no-at-sign", "<x@example.org>", "a@b@example.org"])
def test_signup_bad_address(server, address):
    reply = server.one(CAROL, f"signup carol carol-pw carol@example.org {address}")
    assert_error(reply, error_text(f"'{address}' is not an address pbmserv can deliver to.",
                                   "pbmserv delivers to plain ASCII addresses such as alice@example.org.\n"
                                   "Send: signup USERID PASSWORD [ADDRESS ...]",
                                   f"> signup carol {MASK} carol@example.org {address}"), CAROL)
    assert stored_user(server, "carol") is None


def test_signup_too_few_words(server):
    server.signup("alice")
    reply = server.one(ALICE, "signup carol")
    assert_error(reply, error_text("signup: too few words for this command.",
                                   "Send: signup USERID PASSWORD [ADDRESS ...]",
                                   "> Subject: signup carol"), ALICE)
    assert stored_user(server, "carol") is None


# --- change password / change address ------------------------------------------------


def test_change_password(server):
    server.signup("alice")
    reply = server.one(ALICE, "change password alice alice-pw new-pw")
    assert (reply.subject, reply.to, body_of(reply)) == (
        "pbmserv change password", [ALICE], "The password of alice is changed.\n")
    assert password_is(server, "alice", "new-pw") and not password_is(server, "alice", "alice-pw")
    # the old password no longer works by mail, the new one does
    assert server.one(ALICE, "change password alice alice-pw x-pw-x").text.startswith("Wrong password for alice.\n")
    assert server.one(ALICE, "change password Alice new-pw newer-pw").subject == "pbmserv change password"


def wrong_password(userid: str, left: int) -> str:
    """What to do after a wrong password: `left` tries before the hour's lock (of 5)."""
    return ("Send the command again with your password (passwords are case-sensitive).\n"
            f"{left} {'try' if left == 1 else 'tries'} left: after 5 wrong passwords in an hour, commands with a "
            "password are\nrefused for an hour.\n"
            f"If you forgot your password, send: forgot {userid}")


def test_change_password_wrong_password(server):
    server.signup("alice")
    reply = server.one(ALICE, "change password alice Alice-pw new-pw")
    assert_error(reply, error_text(
        "Wrong password for alice.", wrong_password("alice", 4),
        f"> Subject: change password alice {MASK} {MASK}"), ALICE)
    assert password_is(server, "alice", "alice-pw") and not password_is(server, "alice", "new-pw")


def test_change_password_unknown_user(server):
    server.signup("alice")
    reply = server.one(ALICE, "change password zed zed-pw new-pw")
    assert_error(reply, error_text(
        "There is no user zed.",
        "Check the spelling of the userid, or sign up first: signup USERID PASSWORD",
        f"> Subject: change password zed {MASK} {MASK}"), ALICE)
    assert stored_user(server, "zed") is None


def test_change_password_to_a_short_one(server):
    server.signup("alice")
    reply = server.one(ALICE, "change password alice alice-pw abc")
    assert_error(reply, error_text("A password must have 4 to 64 characters (no spaces).",
                                   "Choose another password and send the command again.",
                                   f"> Subject: change password alice {MASK} {MASK}"), ALICE)
    assert password_is(server, "alice", "alice-pw")


@pytest.mark.parametrize("args, count", [("alice alice-pw", "too few"), ("alice alice-pw new-pw extra", "too many")])
def test_change_password_word_count_names_the_command(server, args, count):
    server.signup("alice")
    reply = server.one(ALICE, f"change password {args}")
    assert body_of(reply).split("\n")[:2] == [f"change password: {count} words for this command.",
                                          "Send: change password USERID OLD NEW"]


@pytest.mark.parametrize("args, count, quoted", [
    ("alice alice-pw", "too few", f"change password alice {MASK}"),
    ("alice alice-pw new-pw extra", "too many", f"change password alice {MASK} {MASK} extra"),
])
def test_change_password_word_count_changes_nothing(server, args, count, quoted):
    server.signup("alice")
    reply = server.one(ALICE, f"change password {args}")
    assert reply.subject == "pbmserv error"
    assert body_of(reply).split("\n")[1:] == ["Send: change password USERID OLD NEW", "", "Your message:",
                                          f"> Subject: {quoted}", ""]
    assert f" {count} words for this command." in body_of(reply).split("\n")[0]
    assert password_is(server, "alice", "alice-pw")


def test_change_with_a_wrong_second_word(server):
    server.signup("alice")
    reply = server.one(ALICE, "change colour alice blue")
    assert_error(reply, (
        "'change' must be followed by one of: password, address.\n"
        "Send one of:\n"
        "  change password USERID OLD NEW\n"
        "  change address USERID PASSWORD ADDRESS ...\n\n"
        "Your message:\n"
        f"> Subject: change colour alice {MASK}\n"), ALICE)  # a family's password positions are masked
    assert stored_user(server, "alice") == ("alice", [ALICE])
    assert password_is(server, "alice", "alice-pw")


def test_change_with_a_wrong_second_word_masks_the_password(server):
    server.signup("alice")
    reply = server.one(ALICE, "change passwd alice alice-pw new-pw")
    assert "alice-pw" not in reply.body
    assert body_of(reply).endswith(f"\n> Subject: change passwd alice {MASK} {MASK}\n")


def test_change_address(server):
    server.signup("alice", "bob")
    replies = server.send(ALICE, "change address alice alice-pw alice@new.example Alice@NEW.example "
                                 "alice@example.org")
    assert [(r.subject, r.to) for r in replies] == [("pbmserv change address", [ALICE]),
                                                    ("pbmserv confirm", ["alice@new.example"])]
    assert body_of(replies[0]) == (
        "The addresses of alice are now: alice@new.example, alice@example.org.\n\n"
        "Waiting for confirmation: alice@new.example.\n"
        "Each was sent a mail to confirm it; it receives mail once confirmed.\n")
    assert stored_user(server, "alice") == ("alice", [ALICE])  # the new one is not confirmed yet
    token = body_of(replies[1]).split("confirm alice ")[1].split()[0]
    server.one("alice@new.example", f"confirm alice {token}")
    # mail for alice now goes to both addresses, in the order given
    relays = server.send(BOB, "message bob bob-pw alice", "hi")
    assert [(r.subject, r.to) for r in relays] == [
        ("pbmserv message", [BOB]),
        ("[pbmserv] Message from bob via PBM Server", ["alice@new.example", ALICE])]
    # dropping the old address needs no confirmation; it gets the notice once more
    reply = server.one("alice@new.example", "change address alice alice-pw alice@new.example")
    assert reply.to == ["alice@new.example", ALICE]
    assert stored_user(server, "alice") == ("alice", ["alice@new.example"])


def test_change_address_bad_address(server):
    server.signup("alice")
    reply = server.one(ALICE, "change address alice alice-pw alice@new.example bad@")
    assert_error(reply, error_text("'bad@' is not an address pbmserv can deliver to.",
                                   "pbmserv delivers to plain ASCII addresses such as alice@example.org.\n"
                                   "Send: change address USERID PASSWORD ADDRESS ...",
                                   f"> Subject: change address alice {MASK} alice@new.example bad@"), ALICE)
    assert stored_user(server, "alice") == ("alice", [ALICE])


def test_change_address_wrong_password(server):
    server.signup("alice")
    reply = server.one(ALICE, "change address alice bob-pw alice@new.example")
    assert_error(reply, error_text(
        "Wrong password for alice.", wrong_password("alice", 4),
        f"> Subject: change address alice {MASK} alice@new.example"), ALICE)
    assert stored_user(server, "alice") == ("alice", [ALICE])


def test_change_address_too_few_words(server):
    server.signup("alice")
    reply = server.one(ALICE, "change address alice alice-pw")
    assert reply.subject == "pbmserv error"
    assert body_of(reply).split("\n")[1:] == ["Send: change address USERID PASSWORD ADDRESS ...", "",
                                          "Your message:", f"> Subject: change address alice {MASK}", ""]
    assert stored_user(server, "alice") == ("alice", [ALICE])


# --- word counts of the other commands ------------------------------------------------


@pytest.mark.parametrize("subject, problem, usage", [
    ("list extra", "list: too many words for this command.", "list"),
    ("help a b c", "help: too many words for this command.", "help [TOPIC]"),
    ("message alice alice-pw", "message: too few words for this command.", "message USERID PASSWORD TO_USERID ..."),
    ("broadcast alice", "broadcast: too few words for this command.", "broadcast USERID PASSWORD [GAME]"),
    ("broadcast alice alice-pw superwari wari", "broadcast: too many words for this command.",
     "broadcast USERID PASSWORD [GAME]"),
])
def test_wrong_word_count(server, subject, problem, usage):
    server.signup("alice")
    reply = server.one(ALICE, subject, "some text")
    quoted = subject.replace("alice-pw", MASK)
    assert_error(reply, error_text(problem, f"Send: {usage}", f"> Subject: {quoted}\n>\n> some text"), ALICE)


# --- message ------------------------------------------------------------------------


def test_message_is_relayed(server):
    server.signup("alice", "bob", "carol")
    replies = server.send(ALICE, "message alice alice-pw bob Carol BOB", "Hello,\n\nsee you.\n-- \nAlice")
    assert [(r.subject, r.to) for r in replies] == [
        ("pbmserv message", [ALICE]),
        ("[pbmserv] Message from alice via PBM Server", [BOB]),
        ("[pbmserv] Message from alice via PBM Server", [CAROL]),
    ]
    by_to = {r.to[0]: body_of(r) for r in replies}
    assert by_to[ALICE] == "Your message was sent to bob, carol.\n"
    assert by_to[BOB] == relayed("alice", "Hello,\n\nsee you.")
    assert by_to[CAROL] == relayed("alice", "Hello,\n\nsee you.")
    assert ALICE not in by_to[BOB]  # the sender's address is not shown


def test_message_written_in_the_body(server):
    server.signup("alice", "bob")
    replies = server.send(ALICE, "a word for bob", "message alice alice-pw bob\nLine one\n> not relayed\nLine two\n")
    assert [(r.subject, r.to, body_of(r)) for r in replies] == [
        ("pbmserv message", [ALICE], "Your message was sent to bob.\n"),
        ("[pbmserv] Message from alice via PBM Server", [BOB], relayed("alice", "Line one\nLine two")),
    ]


def test_message_with_no_text(server):
    server.signup("alice", "bob")
    reply = server.one(ALICE, "message alice alice-pw bob", "\n\n")
    assert_error(reply, error_text(
        "There is no text to send.",
        "Write the text on the lines below the command line:\n  message USERID PASSWORD TO_USERID ...",
        f"> Subject: message alice {MASK} bob"), ALICE)


def test_message_to_an_unknown_user_sends_nothing(server):
    server.signup("alice", "bob")
    replies = server.send(ALICE, "message alice alice-pw bob zed", "hi")
    assert len(replies) == 1  # not even bob gets it
    assert_error(replies[0], error_text("There is no user zed.", "Check the userids and send the message again.",
                                        f"> Subject: message alice {MASK} bob zed\n>\n> hi"), ALICE)


def test_message_wrong_password_and_unknown_sender(server):
    server.signup("alice", "bob")
    reply = server.one(ALICE, "message alice bob-pw bob", "hi")
    assert_error(reply, error_text(
        "Wrong password for alice.", wrong_password("alice", 4),
        f"> Subject: message alice {MASK} bob\n>\n> hi"), ALICE)
    reply = server.one(ALICE, "message zed zed-pw bob", "hi")
    assert_error(reply, error_text(
        "There is no user zed.",
        "Check the spelling of the userid, or sign up first: signup USERID PASSWORD",
        f"> Subject: message zed {MASK} bob\n>\n> hi"), ALICE)


# --- broadcast ----------------------------------------------------------------------


def test_broadcast_to_the_players_of_a_game(server):
    server.signup("alice", "bob", "carol", "dave")
    server.send(ALICE, "superwari challenge alice alice-pw bob")
    server.send(CAROL, "superwari challenge carol carol-pw alice")
    replies = server.send(BOB, "broadcast bob bob-pw SuperWari", "Who wants a game?\n")
    assert [(r.subject, r.to, body_of(r)) for r in replies] == [
        ("pbmserv broadcast", [BOB], "Your broadcast was sent to 2 players of superwari.\n"),
        ("[pbmserv] Broadcast from bob via PBM Server", [ALICE], broadcast_text("Who wants a game?")),
        ("[pbmserv] Broadcast from bob via PBM Server", [CAROL], broadcast_text("Who wants a game?")),
    ]


def test_broadcast_to_one_player_says_player(server):
    server.signup("alice", "bob")
    server.send(ALICE, "superwari challenge alice alice-pw bob")
    replies = server.send(BOB, "broadcast bob bob-pw superwari", "hi")
    assert [r.subject for r in replies] == ["pbmserv broadcast", "[pbmserv] Broadcast from bob via PBM Server"]
    assert body_of(replies[0]) == "Your broadcast was sent to 1 player of superwari.\n"


def test_broadcast_by_a_non_player_of_the_game(server):
    server.signup("alice", "bob", "carol")
    server.send(ALICE, "superwari challenge alice alice-pw bob")
    reply = server.one(CAROL, "broadcast carol carol-pw superwari", "Hello all")
    assert_error(reply, error_text(
        "Only players of superwari may broadcast to them, and carol has not played it.",
        "Send a message to players you know instead:\n  message USERID PASSWORD TO_USERID ...",
        f"> Subject: broadcast carol {MASK} superwari\n>\n> Hello all"), CAROL)
    # nothing was counted against carol's daily limit: once she plays, she may broadcast
    server.send(CAROL, "superwari challenge carol carol-pw alice")
    assert [r.subject for r in server.send(CAROL, "broadcast carol carol-pw superwari", "Hello all")] == [
        "pbmserv broadcast", "[pbmserv] Broadcast from carol via PBM Server", "[pbmserv] Broadcast from carol via PBM Server"]


def test_broadcast_by_an_unknown_user(server):
    server.signup("alice")
    reply = server.one(ALICE, "broadcast zed zed-pw superwari", "Hello all")
    assert_error(reply, error_text(
        "There is no user zed.",
        "Check the spelling of the userid, or sign up first: signup USERID PASSWORD",
        f"> Subject: broadcast zed {MASK} superwari\n>\n> Hello all"), ALICE)


def test_broadcast_to_an_unknown_game(server):
    server.signup("alice")
    reply = server.one(ALICE, "broadcast alice alice-pw chess", "Hello all")
    assert_error(reply, error_text("There is no game 'chess'.", "Send 'list' for the games of this server.",
                                   f"> Subject: broadcast alice {MASK} chess\n>\n> Hello all"), ALICE)


def test_broadcast_to_everyone_by_a_non_admin(server):
    server.signup("alice", "bob")
    reply = server.one(BOB, "broadcast bob bob-pw", "Hello all")
    assert_error(reply, error_text("Only admins may broadcast to every user.",
                                   "Name a game you play: broadcast bob PASSWORD GAME",
                                   f"> Subject: broadcast bob {MASK}\n>\n> Hello all"), BOB)


def test_broadcast_to_everyone_by_an_admin_is_not_rate_limited(make_server):
    server = make_server(server={"admins": ["Alice"]})
    server.add_user("alice")
    server.signup("bob", "carol")
    for news in ("Maintenance tonight.", "Maintenance done."):
        replies = server.send(ALICE, "broadcast alice alice-pw", f"{news}\n-- \nthe admin")
        assert [(r.subject, r.to, body_of(r)) for r in replies] == [
            ("pbmserv broadcast", [ALICE], "Your broadcast was sent to 2 users.\n"),
            ("[pbmserv] Broadcast from alice via PBM Server", [BOB], broadcast_text(news)),
            ("[pbmserv] Broadcast from alice via PBM Server", [CAROL], broadcast_text(news)),
        ]
    # an admin may also broadcast to the players of a game they have not played
    server.send(BOB, "wari challenge bob bob-pw carol")
    assert [(r.to, r.subject) for r in server.send(ALICE, "broadcast alice alice-pw wari", "Wari cup!")] == [
        ([ALICE], "pbmserv broadcast"),
        ([BOB], "[pbmserv] Broadcast from alice via PBM Server"),
        ([CAROL], "[pbmserv] Broadcast from alice via PBM Server")]


def test_broadcast_with_no_text(server):
    server.signup("alice", "bob")
    server.send(ALICE, "superwari challenge alice alice-pw bob")
    reply = server.one(BOB, "broadcast bob bob-pw superwari")
    assert_error(reply, error_text(
        "There is no text to send.",
        "Write the text on the lines below the command line:\n  broadcast USERID PASSWORD [GAME]",
        f"> Subject: broadcast bob {MASK} superwari"), BOB)
    # the empty try did not use up the day's broadcast
    assert [r.subject for r in server.send(BOB, "broadcast bob bob-pw superwari", "hi")] == [
        "pbmserv broadcast", "[pbmserv] Broadcast from bob via PBM Server"]


def test_broadcast_rate_limit(server):
    server.signup("alice", "bob")
    server.send(ALICE, "superwari challenge alice alice-pw bob")
    assert len(server.send(BOB, "broadcast bob bob-pw superwari", "first")) == 2
    replies = server.send(BOB, "broadcast bob bob-pw superwari", "second")
    assert len(replies) == 1  # alice does not get it
    assert replies[0].subject == "pbmserv error"
    assert body_of(replies[0]).split("\n")[1:] == [
        "Send it again tomorrow.", "", "Your message:", f"> Subject: broadcast bob {MASK} superwari", ">",
        "> second", ""]
    assert body_of(replies[0]).startswith("bob has sent 1 broadcast")
    server.clock += timedelta(hours=23)
    assert [r.subject for r in server.send(BOB, "broadcast bob bob-pw superwari", "third")] == ["pbmserv error"]
    server.clock += timedelta(hours=1)
    assert [r.subject for r in server.send(BOB, "broadcast bob bob-pw superwari", "fourth")] == [
        "pbmserv broadcast", "[pbmserv] Broadcast from bob via PBM Server"]


def test_broadcast_rate_limit_text(server):
    server.signup("alice", "bob")
    server.send(ALICE, "superwari challenge alice alice-pw bob")
    server.send(BOB, "broadcast bob bob-pw superwari", "first")
    reply = server.one(BOB, "broadcast bob bob-pw superwari", "second")
    assert body_of(reply).split("\n")[0] == "bob has sent 1 broadcast in the last 24 hours, the limit."


# --- mail with no command -------------------------------------------------------------


def test_mail_with_no_command_from_a_stranger(server):
    reply = server.one("x@example.net", "hello there", "How do I play?\n")
    assert_error(reply, error_text(
        "Your mail holds no command: neither its Subject nor any line of its body.",
        "Put one command in the Subject, or one command a line in the body;\nsend 'help' for the commands.",
        "> hello there"), "x@example.net")


def test_mail_with_no_command_from_a_player_quotes_the_body(server):
    server.signup("alice")
    reply = server.one(ALICE, "hello there", "How do I play?\nThanks\n")
    assert reply.subject == "pbmserv error"
    assert body_of(reply).endswith("\n\nYour message:\n> Subject: hello there\n>\n> How do I play?\n> Thanks\n")


def test_mail_with_no_command_from_a_player_quotes_the_subject(server):
    server.signup("alice")
    reply = server.one(ALICE, "hello there")
    assert body_of(reply) == error_text(
        "Your mail holds no command: neither its Subject nor any line of its body.",
        "Put one command in the Subject, or one command a line in the body;\nsend 'help' for the commands.",
        "> Subject: hello there")


# --- passwords, addresses, quoting --------------------------------------------------------


def test_passwords_are_never_in_a_reply(server):
    server.signup("alice", "bob")
    replies = []
    replies += server.send(ALICE, "change password alice alice-pw Secret-1")
    replies += server.send(ALICE, "change password alice alice-pw Secret-2")  # wrong old one
    replies += server.send(ALICE, "change password alice Secret-1 abc")  # short new one
    replies += server.send(ALICE, "message alice Secret-1 bob zed", "hi")
    replies += server.send("x@example.net", "signup alice Secret-3")
    replies += server.send(BOB, "Re: board", "change password bob bob-pw Secret-4\nlist\nsignup alice Secret-5 x")
    replies += server.send(BOB, "change address bob Secret-4 bad@ address")
    assert len(replies) == 7
    for reply in replies:
        for secret in ("alice-pw", "bob-pw", "Secret-1", "Secret-2", "Secret-3", "Secret-4", "Secret-5"):
            assert secret not in reply.body, (reply.subject, reply.body)
    assert body_of(replies[0]) == "The password of alice is changed.\n"
    assert body_of(replies[1]).endswith(f"> Subject: change password alice {MASK} {MASK}\n")
    assert body_of(replies[4]).endswith(f"> signup alice {MASK}\n")


def test_command_from_an_unregistered_address_with_the_right_password(server):
    server.signup("alice", "bob")
    reply = server.one("alice@elsewhere.net", "change password alice alice-pw new-pw")
    assert (reply.subject, reply.to, body_of(reply)) == (
        "pbmserv change password", ["alice@elsewhere.net", ALICE], "The password of alice is changed.\n")
    assert reply.message["To"] == "alice@elsewhere.net, alice@example.org"
    replies = server.send("Alice@Elsewhere.net", "message alice new-pw bob", "hi")
    assert [(r.subject, r.to) for r in replies] == [
        ("pbmserv message", ["Alice@Elsewhere.net", ALICE]),
        ("[pbmserv] Message from alice via PBM Server", [BOB])]
    # a registered address in another case is the registered address: no copy
    assert server.one("ALICE@example.org", "change password alice new-pw newer-pw").to == ["ALICE@example.org"]


def test_errors_to_an_unregistered_address_quote_the_command_line_and_are_rate_limited(server):
    server.signup("alice")
    stranger = "stranger@example.net"
    last_note = ("\n\nThis is the last error reply today to your address: no account has confirmed\n"
                 "it, and such an address gets 3 error replies a day, so that forged mail cannot\n"
                 "make this server write to strangers. Further errors today will not be\n"
                 "answered. To get every answer, sign up: signup USERID PASSWORD")
    for left in (4, 3, 2):  # limits.unregistered_errors_per_day
        note = last_note if left == 2 else ""  # the day's last error reply says so
        expected = error_text("Wrong password for alice.", wrong_password("alice", left) + note,
                              f"> change password alice {MASK} {MASK}")
        reply = server.one(stranger, "change password alice guess guessed", "I am alice, really.\nTrust me.")
        assert_error(reply, expected, stranger)
    assert server.send(stranger, "change password alice guess guessed") == []
    assert server.send(stranger, "no command here") == []
    # the fifth wrong password locks: alice is told, the stranger still gets nothing
    assert [(r.to, r.subject) for r in server.send(stranger.upper(), "change password alice guess guessed")] == \
        [([ALICE], "pbmserv lock")]
    # successes still get their answer, and other strangers their errors
    assert server.one(stranger, "list").subject == "pbmserv list"
    assert server.one("other@example.net", "help nothing").subject == "pbmserv error"
    assert password_is(server, "alice", "alice-pw")
    # a day later the stranger gets errors again
    server.clock += timedelta(days=1)
    assert_error(server.one(stranger, "change password alice guess guessed"), error_text(
        "Wrong password for alice.", wrong_password("alice", 4), f"> change password alice {MASK} {MASK}"), stranger)


def test_results_of_errors_to_an_unregistered_address_are_rate_limited(server):
    stranger = "stranger@example.net"
    for _ in range(3):
        server.one(stranger, "help nothing")
    assert server.send(stranger, "hi", "signup a/b pwpw\nhelp nothing\n") == []


# --- several commands in one body ------------------------------------------------------


def test_several_commands_get_one_results_mail(server):
    server.signup("alice", "bob")
    replies = server.send(ALICE, "Re: Super-Wari Board 101 bob",
                          "list\n"
                          "signup bob bob-pw2\n"
                          "change password alice alice-pw alice-pw2\n"
                          "message alice alice-pw2 bob\n"
                          "Hello bob.\n"
                          "-- \n"
                          "Alice\n")
    assert [(r.subject, r.to) for r in replies] == [
        ("[pbmserv] Message from alice via PBM Server", [BOB]),
        ("pbmserv results", [ALICE]),
    ]
    assert body_of(replies[0]) == relayed("alice", "Hello bob.")
    assert body_of(replies[1]) == (
        "Results of the commands in your mail:\n"
        "\n"
        "> list\n"
        + LIST_TEXT.rstrip("\n") + "\n"
        "\n"
        f"> signup bob {MASK}\n"
        "The userid bob is taken.\n"
        "Choose another userid and send: signup USERID PASSWORD [ADDRESS ...]\n"
        "\n"
        f"> change password alice {MASK} {MASK}\n"
        "The password of alice is changed.\n"
        "\n"
        f"> message alice {MASK} bob\n"
        "Your message was sent to bob.\n")
    assert password_is(server, "alice", "alice-pw2")
    assert password_is(server, "bob", "bob-pw")


def test_a_failing_line_changes_nothing_while_the_others_proceed(server):
    server.signup("alice")
    replies = server.send(ALICE, "accounts", "signup carol carol-pw\nsignup dave abc\nsignup erin erin-pw\n")
    assert [r.subject for r in replies] == ["pbmserv results"]
    assert body_of(replies[0]).split("\n> ")[2] == (
        f"signup dave {MASK}\n"
        "A password must have 4 to 64 characters (no spaces).\n"
        "Choose another password and send the command again.\n")
    assert stored_user(server, "carol") == ("carol", [ALICE])
    assert stored_user(server, "dave") is None
    assert stored_user(server, "erin") == ("erin", [ALICE])


def test_results_mail_also_goes_to_the_registered_addresses(server):
    server.signup("alice")
    replies = server.send("alice@elsewhere.net", "x", "change password alice alice-pw new-pw\nlist\n")
    assert [(r.subject, r.to) for r in replies] == [("pbmserv results", ["alice@elsewhere.net", ALICE])]


def test_one_command_in_the_body_is_answered_as_if_it_were_the_subject(server):
    server.signup("alice")
    reply = server.one(ALICE, "Re: your mail", "> quoted list\nOn Monday, pbmserv wrote:\n\nhelp signup\n-- \nlist")
    assert (reply.subject, body_of(reply)) == ("pbmserv help", body_of(server.one(ALICE, "help signup")))


# --- subjects, case, headers -------------------------------------------------------------


@pytest.mark.parametrize("subject", ["Re: list", "RE: Fwd: list", "[games] Re: [pbmserv] LIST", "AW: list"])
def test_subject_prefixes_are_stripped(server, subject):
    reply = server.one(ALICE, subject)
    assert (reply.subject, body_of(reply)) == ("pbmserv list", LIST_TEXT)


def test_command_words_are_case_insensitive(server):
    reply = server.one(ALICE, "SIGNUP Alice alice-pw")
    assert (reply.subject, body_of(reply)) == ("pbmserv signup", welcome("Alice", ALICE))
    assert server.one(ALICE, "Change PASSWORD alice alice-pw new-pw").subject == "pbmserv change password"
    assert server.one(ALICE, "Superwari SHOW 101").subject == "Super-Wari error"


def test_reply_headers(server):
    reply = server.one(ALICE, "list", message_id="<cmd-1@example.org>")
    message = reply.message
    assert message["From"] == "pbmserv@localhost"
    assert message["To"] == ALICE
    assert message["Subject"] == "pbmserv list"
    assert message["Auto-Submitted"] == "auto-replied"
    assert message["In-Reply-To"] == "<cmd-1@example.org>"
    assert message["References"] == "<cmd-1@example.org>"
    assert message["Message-ID"].startswith("<pbmserv.") and message["Message-ID"].endswith("@localhost>")
    # error replies thread the same way
    error = server.one(ALICE, "help nothing", message_id="<cmd-2@example.org>").message
    assert (error["In-Reply-To"], error["References"], error["Auto-Submitted"], error["From"]) == (
        "<cmd-2@example.org>", "<cmd-2@example.org>", "auto-replied", "pbmserv@localhost")
    assert error["Message-ID"] != message["Message-ID"]


def test_relay_mails_thread_to_the_command_too(server):
    server.signup("alice", "bob")
    replies = server.send(ALICE, "message alice alice-pw bob", "hi", message_id="<m-9@example.org>")
    assert [(r.message["In-Reply-To"], r.message["Auto-Submitted"], r.message["From"]) for r in replies] == [
        ("<m-9@example.org>", "auto-replied", "pbmserv@localhost")] * 2


def test_a_duplicate_message_id_is_processed_once(server):
    first = server.send(ALICE, "signup alice alice-pw", message_id="<same@example.org>")
    assert [r.subject for r in first] == ["pbmserv signup"]
    assert server.send(ALICE, "signup alice alice-pw", message_id="<same@example.org>") == []
    server.signup("bob")
    assert len(server.send(ALICE, "message alice alice-pw bob", "once", message_id="<m@example.org>")) == 2
    assert server.send(ALICE, "message alice alice-pw bob", "once", message_id="<m@example.org>") == []


@pytest.mark.parametrize("sender, headers", [
    (ALICE, {"Auto-Submitted": "auto-replied"}),
    (ALICE, {"Auto-Submitted": "auto-generated"}),
    (ALICE, {"Precedence": "bulk"}),
    ("MAILER-DAEMON@example.org", {}),
    ("pbmserv@localhost", {}),
])
def test_robots_get_no_reply_and_change_nothing(server, sender, headers):
    assert server.send(sender, "signup robot robot-pw", headers=headers) == []
    assert server.send(sender, "hello, I am on vacation", headers=headers) == []
    assert stored_user(server, "robot") is None


def test_auto_submitted_no_is_answered(server):
    assert server.one(ALICE, "list", headers={"Auto-Submitted": "no"}).subject == "pbmserv list"


def test_passwords_in_the_quoted_body_are_masked_too(server):
    server.signup("alice")
    reply = server.one(ALICE, "signup", "change address alice alice-pw alice@new.example\n")
    assert "alice-pw" not in reply.body
