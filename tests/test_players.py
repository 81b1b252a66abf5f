"""`players [GAME]` (pbmserv/commands/players.py): the users who chose `listed on`,
those who moved last first, with their boards running and finished, their last move
and their ratings; never an address, never a closed account; bad input answered with
what to send."""

from __future__ import annotations

from conftest import body_of

ALICE, BOB, CAROL, DAVE = "alice@example.org", "bob@example.org", "carol@example.org", "dave@example.org"
ROBOTS = ("Robot players, ready at any hour for {game}:\n\n"
          "  robot1 (weak): 0 running, 0 finished, no move yet\n"
          "  robot2 (medium): 0 running, 0 finished, no move yet\n"
          "  robot3 (strong): 0 running, 0 finished, no move yet\n\n")
FOOT = ("To challenge one: {game} challenge USERID PASSWORD OPPONENT\n"
        "To be listed too, send: set USERID PASSWORD listed on\n")


def played(server):
    server.signup("alice", "bob", "carol", "dave")
    for sender, userid in ((ALICE, "alice"), (BOB, "bob"), (DAVE, "dave")):
        server.one(sender, f"set {userid} {userid}-pw listed on")
    server.send(ALICE, "superwari challenge alice alice-pw bob")
    server.send(ALICE, "superwari move 101 alice alice-pw c")
    server.send(BOB, "superwari resign 101 bob bob-pw")
    server.send(BOB, "wari challenge bob bob-pw carol")  # carol is not listed
    server.send(BOB, "wari move 101 bob bob-pw c")
    return server


def test_nobody_listed(server):
    server.signup("alice")
    assert body_of(server.one(ALICE, "players")) == (ROBOTS.format(game="every game")
                                                     + "No player has asked to be listed yet.\n\n"
                                                     + FOOT.format(game="GAME"))


def test_players_lists_the_listed_with_boards_last_move_and_ratings(server):
    played(server)
    reply = server.one(CAROL, "players")
    assert (reply.subject, reply.to) == ("pbmserv players", [CAROL])
    assert body_of(reply) == (
        ROBOTS.format(game="every game") + "Players who want games:\n\n"
        "  bob: 1 running, 1 finished, last move 2026-11-01\n"
        "    rating: superwari 1584?\n"
        "  alice: 0 running, 1 finished, last move 2026-11-01\n"
        "    rating: superwari 1616?\n"
        "  dave: 0 running, 0 finished, no move yet\n\n"
        "? provisional: fewer than 20 rated games.\n\n" + FOOT.format(game="GAME"))
    assert "@" not in body_of(reply) and "carol" not in body_of(reply)


def test_players_of_one_game_count_only_its_boards_and_rating(server):
    played(server)
    assert body_of(server.one(CAROL, "players Wari")) == (
        ROBOTS.format(game="Wari") + "Players who want Wari games (their Wari boards and rating):\n\n"
        "  bob: 1 running, 0 finished, last move 2026-11-01\n"
        "  alice: 0 running, 0 finished, no move yet\n"
        "  dave: 0 running, 0 finished, no move yet\n\n" + FOOT.format(game="wari"))


def test_closed_and_unlisted_accounts_are_not_listed(server):
    played(server)
    server.one(DAVE, "signoff dave dave-pw")
    server.one(ALICE, "set alice alice-pw listed off")
    text = body_of(server.one(CAROL, "players"))
    assert "dave" not in text and "alice" not in text and "  bob: " in text


def test_an_unknown_game_is_an_error_saying_which_there_are(server):
    reply = server.one(CAROL, "players <chess>")
    assert body_of(reply).startswith(
        "There is no game '<chess>'.\nThe games are serpent, superwari, survival, survive, wari; send e.g.:\n"
        "  players serpent\n\nYour message:\n")
