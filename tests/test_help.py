"""`help` for a newcomer (issue 17): every command has a topic under every name it is
written with, reply to play has one, an unknown topic points to the closest ones, the
admin commands stand apart, and no line of any help mail is longer than 78."""

from __future__ import annotations

import pytest
from conftest import body_of

from pbmserv.commands.base import account_commands, game_commands, load_commands
from pbmserv.games import games

ALICE = "alice@example.org"

MOVE_TOPIC = (
    "make your move, or vote (#N: only if it is the N-th move on the board)\n\n"
    "The #N guard keeps a re-sent or stale mail from playing twice; every board\nmail says the number its next move takes (Next move: #N).\n\n")


@pytest.fixture
def helped(server):
    """A server where alice is registered: her many help mails are never capped."""
    server.add_user("alice", address=ALICE)
    return server


def help_of(server, topic: str) -> tuple[str, str]:
    reply = server.one(ALICE, f"help {topic}")
    return reply.subject, body_of(reply)


def test_a_game_command_under_a_games_name_shows_its_move_syntax(helped):
    """`superwari move` is how the command is written: its topic says how Super-Wari's
    MOVE looks, which the generic `help move` cannot."""
    subject, text = help_of(helped, "superwari move")
    assert subject == "pbmserv help"
    assert text.startswith("superwari move BOARD USERID PASSWORD MOVE [#N]\n    " + MOVE_TOPIC)
    assert text.endswith("\nMOVE in Super-Wari: the letter of one of your own pits: c\n")


def test_a_long_move_syntax_is_wrapped(helped):
    subject, text = help_of(helped, "Serpent Queue")
    assert text.startswith("serpent queue BOARD USERID PASSWORD MOVE|cancel\n")
    assert text.endswith(
        "\nMOVE in Serpent: a cell to place on, e5, or a tail move, c3-e3; optionally /b\n"
        "    or /w for the removal order\n")


def test_game_command_written_with_the_word_game_is_the_generic_topic(helped):
    assert help_of(helped, "GAME move") == help_of(helped, "move")
    assert help_of(helped, "game standings") == help_of(helped, "standings")


def test_a_command_without_a_move_shows_no_move_syntax(helped):
    assert help_of(helped, "wari resign") == (
        "pbmserv help", "wari resign BOARD USERID PASSWORD\n    give up the game\n")


def test_the_first_word_of_a_two_word_command_shows_the_family(helped):
    """`change` alone is how a newcomer who half-remembers the command asks."""
    assert help_of(helped, "change") == ("pbmserv help", (
        "change password USERID OLD NEW\n"
        "    change your password\n\n"
        "change address USERID PASSWORD ADDRESS ...\n"
        "    replace your e-mail addresses\n\n"
        "The old addresses get this notice once more. Each new address gets a mail\n"
        "to confirm it (a reply does) before it receives anything else.\n"))


REPLY_TOPIC = """\
Reply to play: answer a board mail with just your move

Every board mail you get has a Reply-To address of its own, such as
pbmserv+TOKEN@localhost. It stands for your userid, your password and the
board, so your move alone is the answer: write it as the Subject, or as the
first line of the body (e.g. just "c" in Super-Wari). No board number, userid
or password is needed. Votes (propose, accept, ...) work the same way.

It works only from your registered addresses, and only until you change
your password or the board is over. After that, or from another address,
send the move with your password:

  GAME move BOARD USERID PASSWORD MOVE

A reply to play plays a move only: other commands in the same mail run as
usual, each with its password. Send "GAME help" for how to write a move.

If the move is refused, the error mail has the same Reply-To: answer it with
the corrected move.

Other mails you can answer by replying, from a registered address:
- a message from a player: your text goes back to its author;
- a chat mail: your text is chat on that board.
A reply to a broadcast goes to nobody: write to its author with 'message'.
"""


def test_reply_to_play_has_a_topic(helped):
    assert help_of(helped, "reply") == ("pbmserv help", REPLY_TOPIC)
    assert help_of(helped, "Reply") == ("pbmserv help", REPLY_TOPIC)


def test_an_unknown_topic_lists_the_closest(helped):
    reply = helped.one(ALICE, "help superwari mvoe")
    assert (reply.subject, body_of(reply)) == ("pbmserv error", (
        "There is no help topic 'superwari mvoe'.\n"
        "The closest topics:\n"
        "  help superwari move\n"
        "  help superwari games\n"
        "  help superwari show\n"
        "Send one of them, or 'help' for the list of commands and games.\n\n"
        "Your message:\n> Subject: help superwari mvoe\n"))


def test_help_shows_the_admin_commands_last(helped):
    text = body_of(helped.one(ALICE, "help"))
    head, admins = text.split("\nAdmins only:\n")
    assert "abort" not in head and "disable" not in head
    assert admins == ("  abort GAME BOARD USERID PASSWORD\n"
                      "      end a board with no result (admins only)\n"
                      "  disable USERID ADMINID PASSWORD\n"
                      "      close an account: its password no longer works (admins only)\n"
                      "  enable USERID ADMINID PASSWORD\n"
                      "      open a closed account again (admins only)\n")


def every_help_mail() -> list[str]:
    """The subject of every help mail there is: `help`, `help TOPIC` under every name,
    `GAME help` for every game."""
    load_commands()
    topics = ["", "reply", "GAME move"] + list(account_commands) + list(game_commands)
    topics += sorted({name.split()[0] for name in account_commands if " " in name})
    for name in games():
        topics += [name] + [f"{name} {cmd}" for cmd in game_commands]
    return [f"help {topic}".strip() for topic in topics] + [f"{name} help" for name in games()]


def test_every_line_of_every_help_mail_fits(helped):
    """Mail readers wrap longer lines, which breaks the usage lines and tables."""
    long = {}
    for subject in every_help_mail():
        reply = helped.one(ALICE, subject)
        assert reply.subject != "pbmserv error", (subject, body_of(reply))
        long.update({f"{subject}: {line}": len(line) for line in body_of(reply).split("\n") if len(line) > 78})
    assert long == {}


def test_game_help_lists_the_votes_one_a_line(helped):
    """One line of votes would run past 78 columns and wrap mid-parenthesis."""
    text = body_of(helped.one(ALICE, "superwari help"))
    assert ("\nMoves: the letter of one of your own pits: c\n"
            "Votes, sent as moves and answered with accept or reject:\n"
            "  propose  a draw\n"
            "  undo     take back your last move\n\n") in text
    assert text.endswith('\n\nSend "help superwari COMMAND" for more on a command.\n')
