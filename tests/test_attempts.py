"""Issue 17: a line that is almost a command is answered with the closest commands,
a game's title works as its name, and a command after prose is still run."""

from __future__ import annotations

import pytest
from conftest import body_of
from test_votes import game  # noqa: F401 - alice against bob on superwari 101 after c, c

ALICE = "alice@example.org"
BOB = "bob@example.org"
MASK = "********"


def first_lines(reply, n: int = 2) -> list[str]:
    return body_of(reply).split("\n")[:n]


@pytest.mark.parametrize("line, problem", [
    ("superwari mvoe 101 alice alice-pw h", "'superwari mvoe' is not a command."),
    ("superwary move 101 alice alice-pw h", "'superwary move' is not a command."),
    ("supewari mve 101 alice alice-pw h", "'supewari mve' is not a command."),
])
def test_a_near_miss_is_answered_with_the_command_meant(game, line, problem):
    for subject, body in ((line, ""), ("my move", f"Hi bob,\n\n{line}\n\nAlice")):
        reply = game.one(ALICE, subject, body)
        assert reply.subject == "pbmserv error"
        assert first_lines(reply) == [problem, "Did you mean: superwari move 101 alice PASSWORD MOVE?"]
        assert "alice-pw" not in reply.text and MASK in reply.text


def test_a_misspelt_account_command_is_answered(game):
    reply = game.one(ALICE, "subject", "sigup dora dora-pw")
    assert first_lines(reply) == ["'sigup dora' is not a command.", "Did you mean: signup dora PASSWORD?"]


def test_a_move_without_the_game_name_is_told_which_game(game):
    reply = game.one(ALICE, "move 101 alice alice-pw h")
    assert body_of(reply).split("\nYour message:")[0] == (
        "Which game? Board 101 with alice as a player is superwari (alice against bob).\n"
        "Send: superwari move 101 alice PASSWORD MOVE\n")
    reply = game.one(ALICE, "move 102 alice alice-pw h")
    assert first_lines(reply, 3) == [
        "Which game? 'move' follows the game's name, and no board 102 with alice as a",
        "player was found.",
        "Send: GAME move 102 alice PASSWORD MOVE, with GAME one of: serpent, superwari,",
    ]


@pytest.mark.parametrize("name", ["super-wari", "Super-Wari", "SUPERWARI"])
def test_a_games_title_works_as_its_name(game, name):
    replies = game.send(ALICE, f"{name} move 101 alice alice-pw h")
    assert [r.subject for r in replies] == ["Super-Wari Board 101 bob", "Super-Wari Board 101 bob"]
    assert game.one(ALICE, f"help {name}").subject == "Super-Wari help"


def test_prose_does_not_hide_a_command(game):
    body = ("Hello there!\nI hope you're well.\nHere is my move for today:\n"
            "superwari move 101 alice alice-pw h\n\nAll the best,\nAlice\n")
    replies = game.send(ALICE, "my move", body)
    assert [r.subject for r in replies] == ["Super-Wari Board 101 bob **", "Super-Wari Board 101 bob **"]
    assert "Here is my move for today:" in body_of(replies[1])


def test_prose_that_only_resembles_a_command_stays_prose(game):
    body = "Survival is fun.\nMove fast!\nAll the best\nsuperwari move 101 alice alice-pw h\n"
    replies = game.send(ALICE, "hello", body)
    assert [r.subject for r in replies] == ["Super-Wari Board 101 bob **", "Super-Wari Board 101 bob **"]


def test_a_typo_among_several_commands_is_listed_in_the_results(game):
    body = "superwari show 101\nsuperwari shwo 101\nsuperwari games alice\n"
    [reply] = game.send(ALICE, "commands", body)
    assert reply.subject == "pbmserv results"
    text = body_of(reply)
    assert "> superwari shwo 101\n'superwari shwo' is not a command.\nDid you mean: superwari show 101?\n" in text
    assert text.count("\n> ") == 3


def test_a_game_name_with_no_command_near_points_to_the_games_help(game):
    reply = game.one(ALICE, "superwari xyzzy 101 alice alice-pw h")
    assert first_lines(reply) == ["'superwari xyzzy' is not a command.",
                                  "Send 'help superwari' for the rules and commands of superwari."]
    assert "alice-pw" not in reply.text
