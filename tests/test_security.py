"""Security of accounts: wrong passwords are limited per address and per user without
letting a stranger lock a player out; no password ever appears in a reply."""

from datetime import timedelta

import pytest

ALICE = "alice@example.org"


@pytest.fixture
def server(make_server):
    """Errors to unregistered addresses are not throttled here, so every refusal is seen."""
    return make_server(limits={"unregistered_errors_per_day": 100})


def first_line(reply) -> str:
    return reply.text.split("\n")[0]


def test_wrong_passwords_are_limited_per_sending_address(server):
    server.signup("alice")
    for _ in range(5):
        assert first_line(server.one("mallory@example.net", "change password alice guess1 new-pw")) == \
            "Wrong password for alice."
    refused = server.one("mallory@example.net", "change password alice alice-pw new-pw")
    assert refused.text.split("\n")[:2] == [
        "Too many wrong passwords were sent from mallory@example.net in the last hour.",
        "Wait an hour, then send the command again with the right password."]
    # the player is not locked out of their own account
    assert server.one(ALICE, "change password alice alice-pw second-pw").subject == "pbmserv change password"
    server.clock += timedelta(minutes=61)
    assert server.one("mallory@example.net", "change password alice second-pw third-pw").subject == \
        "pbmserv change password"


def test_wrong_passwords_for_one_user_from_many_addresses(server):
    server.signup("alice")
    for number in range(5):
        server.one(f"bot{number}@example.net", "superwari challenge alice guess alice")
    refused = server.one("bot9@example.net", "change password alice alice-pw new-pw")
    assert refused.text.split("\n")[:2] == [
        "Too many wrong passwords for alice came from other addresses in the last hour.",
        "Send the command from an address registered to alice, or wait an hour."]
    assert server.one(ALICE, "change password alice alice-pw new-pw").subject == "pbmserv change password"


def test_wrong_passwords_from_a_registered_address_count_only_for_that_address(server):
    server.signup("alice", "bob")
    for _ in range(5):
        server.one(ALICE, "change password alice typo new-pw")
    assert first_line(server.one(ALICE, "change password alice alice-pw new-pw")) == \
        "Too many wrong passwords were sent from alice@example.org in the last hour."
    # bob, writing from his own address, is not affected
    assert server.one("bob@example.org", "change password bob bob-pw new-pw").subject == "pbmserv change password"
