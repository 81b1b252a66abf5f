"""No single mail may make the server misuse mail (issue 16): one mail never makes many
mails to third parties, nothing but one confirmation mail goes to an address until
its owner replies to it, admin userids cannot be taken by mail, a stranger cannot
lock a player out for good, and quotes never show a password."""

from __future__ import annotations

from datetime import timedelta

import pytest
from conftest import body_of

from pbmserv.passwords import verify_password
from pbmserv.store.repo import find_user

ALICE = "alice@example.org"
BOB = "bob@example.org"
VICTIM = "victim@example.net"
MALLORY = "mallory@example.net"
MASK = "********"
DELIVERABLE = "pbmserv delivers to plain ASCII addresses such as alice@example.org."


def heads(replies) -> list[tuple[list[str], str]]:
    return [(r.to, r.subject) for r in replies]


def send(server, sender: str, subject: str, body: str = "", to: str | None = None):
    """Send a mail (to the tagged address `to`, as a reply to its mail would be) and
    check that no line the server wrote is longer than 78 characters (the quote of the
    sender's own mail is the sender's)."""
    replies = server.send(sender, subject, body, headers={"Delivered-To": to} if to else None)
    for reply in replies:
        long = [line for line in reply.body.split("\n") if len(line) > 78 and not line.startswith(">")]
        assert not long, long
    return replies


def first_lines(reply, count: int = 2) -> list[str]:
    return body_of(reply).split("\n")[:count]


def user_of(server, userid: str):
    with server.sessions() as session:
        user = find_user(session, userid)
        return None if user is None else (user.emails, [a.address for a in user.addresses], user.password_hash)


@pytest.fixture
def strict(make_server):
    """A server that takes no From at its word, as by default, and answers every error."""
    return make_server(security={"trust_from": False}, limits={"unregistered_errors_per_day": 1000})


@pytest.fixture
def server(make_server):
    return make_server(limits={"unregistered_errors_per_day": 1000})


# --- addresses: how many, and which -------------------------------------------------------


def test_a_signup_with_thousands_of_addresses_sends_nothing_to_them(server):
    addresses = " ".join(f"a{number}@example.net" for number in range(3000))
    replies = send(server, MALLORY, f"signup spam spam-pw {addresses}")
    assert heads(replies) == [([MALLORY], "pbmserv error")]
    problem, instead = first_lines(replies[0])  # (the parser may cut so long a line short)
    assert problem.startswith("An account has at most 5 addresses, and this command names ")
    assert instead == "Name at most 5 and send: signup USERID PASSWORD [ADDRESS ...]"
    assert user_of(server, "spam") is None


def test_an_account_has_at_most_five_addresses_counted_without_duplicates(server):
    six = [f"x{number}@example.net" for number in range(6)]
    assert first_lines(send(server, MALLORY, f"signup six six-pw {' '.join(six)}")[0], 1) == [
        "An account has at most 5 addresses, and this command names 6."]
    five = six[:5] + ["X0@Example.NET"]  # the same address twice is one
    replies = send(server, ALICE, f"signup alice alice-pw {' '.join(five)}")
    assert heads(replies) == [([ALICE], "pbmserv signup")] + [([a], "pbmserv confirm") for a in six[:5]]
    server.signup("bob")
    assert first_lines(send(server, BOB, f"change address bob bob-pw {' '.join(six)}")[0]) == [
        "An account has at most 5 addresses, and this command names 6.",
        "Name at most 5 and send: change address USERID PASSWORD ADDRESS ..."]
    assert user_of(server, "bob")[1] == [BOB]


@pytest.mark.parametrize("address", [
    "jörg@example.org", "joerg@exämple.org", "a@b_c.example", "a@[192.0.2.1]", '"ab"@example.org',
    "a..b@example.org", ".a@example.org", "a@example..org", "a@example.org.", "pbmserv@localhost",
    "PBMSERV+x@LocalHost",
])
def test_only_plain_ascii_addresses_and_never_the_servers_own(server, address):
    for subject, usage in ((f"signup carol carol-pw {address}", "signup USERID PASSWORD [ADDRESS ...]"),
                           (f"change address alice alice-pw {address}", "change address USERID PASSWORD ADDRESS ...")):
        server.signup("alice") if user_of(server, "alice") is None else None
        replies = send(server, ALICE, subject)
        assert heads(replies) == [([ALICE], "pbmserv error")]
        shown = address.replace("+x@", "+********@")  # the server's tags are masked in every reply
        assert first_lines(replies[0], 3) == [f"'{shown}' is not an address pbmserv can deliver to.",
                                              DELIVERABLE, f"Send: {usage}"]
    assert user_of(server, "carol") is None and user_of(server, "alice")[1] == [ALICE]


def test_a_long_address_is_named_within_78_columns(server):
    address = "x" * 240 + "@example.org\u00e9"  # not ASCII: refused, and named in full across lines
    replies = send(server, MALLORY, f"signup carol carol-pw {address}")  # send() checks the width
    problem = body_of(replies[0]).split(DELIVERABLE)[0].replace("\n", "")
    assert problem == f"'{address}' is not an address pbmserv can deliver to."


# --- confirmation: one mail, answered by one reply ------------------------------------------


def test_without_trust_the_signup_is_answered_by_its_confirmation_mail_only(strict):
    replies = send(strict, ALICE, "signup alice alice-pw")
    assert heads(replies) == [([ALICE], "pbmserv confirm")]
    confirm = replies[0]
    token = body_of(confirm).split("confirm alice ")[1].split()[0]
    assert body_of(confirm) == (
        "Welcome to pbmserv, alice. Your account exists and its password\n"
        "works; its mail comes to this address once you confirm that it is yours.\n\n"
        "To confirm it, reply to this mail: nothing else is needed. Or send this line\n"
        "(as the Subject, or in the body):\n\n"
        f"    confirm alice {token}\n\n"
        'Then send "list" for the games, and this line to start one:\n\n'
        "    GAME challenge alice PASSWORD OPPONENT\n\n"
        'No opponent yet? "players" lists who wants games, and robot1 (weak),\n'
        'robot2 and robot3 (strong) play any game at any hour: "help robots".\n')
    reply_to = confirm.message["Reply-To"]
    assert reply_to.startswith("pbmserv+c-") and reply_to.endswith("@localhost") and reply_to == reply_to.lower()
    emails, addresses, password_hash = user_of(strict, "alice")
    assert (emails, addresses) == ([], [ALICE]) and verify_password(password_hash, "alice-pw")
    # the account works at once, but no mail goes to the address yet
    send(strict, BOB, "signup bob bob-pw")
    assert heads(send(strict, BOB, "message bob bob-pw alice", "hello")) == [([BOB], "pbmserv message")]
    assert heads(send(strict, ALICE, "superwari challenge alice alice-pw bob")) == [
        ([ALICE], "New Super-Wari Board 101 alice")]  # the answer to the sender only; bob is unconfirmed too


def test_a_reply_to_the_confirmation_mail_confirms_the_address(strict):
    """Needs the worker to route mail for `pbmserv+c-...@` to confirm_by_reply."""
    confirm = send(strict, ALICE, "signup alice alice-pw")[0]
    send(strict, BOB, "signup bob bob-pw")
    replies = send(strict, ALICE, "Re: pbmserv confirm", "> To confirm it, reply to this mail",
                   to=confirm.message["Reply-To"])
    assert [(r.to, r.subject, body_of(r)) for r in replies] == [
        ([ALICE], "pbmserv confirm", "alice@example.org now receives the mail of alice.\n")]
    assert user_of(strict, "alice")[0] == [ALICE]
    assert heads(send(strict, BOB, "message bob bob-pw alice", "hello")) == [
        ([BOB], "pbmserv message"), ([ALICE], "[pbmserv] Message from bob via PBM Server")]
    # used up: a second reply confirms nothing
    again = send(strict, ALICE, "Re: pbmserv confirm", "", to=confirm.message["Reply-To"])
    assert first_lines(again[0], 1) == ["This reply address confirms no address waiting for confirmation: it was"]


def test_any_sender_may_confirm_by_reply_but_not_with_a_tampered_address(strict):
    """Needs the worker to route mail for `pbmserv+c-...@` to confirm_by_reply."""
    replies = send(strict, ALICE, "signup carol carol-pw carol@example.org")
    assert heads(replies) == [([ALICE], "pbmserv signup"), (["carol@example.org"], "pbmserv confirm")]
    address = replies[1].message["Reply-To"]
    local, _, domain = address.partition("@")
    for tampered in (local[:-1] + ("a" if local[-1] != "a" else "b") + "@" + domain,
                     local.replace("+c-", "+c-9") + "@" + domain, local.replace("+c-", "+u-") + "@" + domain):
        assert heads(send(strict, MALLORY, "Re: pbmserv confirm", "", to=tampered)) == [([MALLORY], "pbmserv error")]
    assert user_of(strict, "carol")[0] == []
    assert heads(send(strict, "carol.phone@example.net", "Re: pbmserv confirm", "", to=address)) == [
        (["carol.phone@example.net", "carol@example.org"], "pbmserv confirm")]


def test_a_forged_signup_confirms_nothing_and_carries_no_comments(strict):
    replies = send(strict, VICTIM, "signup forger forger-pw")  # mallory, writing as the victim
    assert heads(replies) == [([VICTIM], "pbmserv confirm")]
    assert "reply to this mail" in body_of(replies[0])
    send(strict, BOB, "signup bob bob-pw")
    assert heads(send(strict, MALLORY, "message forger forger-pw bob", "buy now")) == [([MALLORY], "pbmserv message")]
    assert heads(send(strict, BOB, "message bob bob-pw forger", "who are you?")) == [([BOB], "pbmserv message")]


def test_a_confirm_line_also_confirms(strict):
    confirm = send(strict, ALICE, "signup alice alice-pw")[0]
    token = body_of(confirm).split("confirm alice ")[1].split()[0]
    assert heads(send(strict, ALICE, f"confirm alice {token}")) == [([ALICE], "pbmserv confirm")]
    assert user_of(strict, "alice")[0] == [ALICE]


def test_confirmation_mails_are_capped_per_address(strict):
    assert heads(send(strict, "m1@example.net", f"signup u1 u1-pw {VICTIM}")) == [
        (["m1@example.net"], "pbmserv signup"), ([VICTIM], "pbmserv confirm")]
    assert heads(send(strict, "m2@example.net", f"signup u2 u2-pw {VICTIM.upper()}"))[1] == (
        [VICTIM.upper()], "pbmserv confirm")
    replies = send(strict, "m3@example.net", f"signup u3 u3-pw m3@example.net {VICTIM}")
    assert heads(replies) == [(["m3@example.net"], "pbmserv error")]
    assert first_lines(replies[0]) == [
        f"{VICTIM} was sent 2 confirmations in the last 24 hours, the limit.",
        "Leave that address out, or send the command again tomorrow."]
    assert user_of(strict, "u3") is None
    strict.clock += timedelta(days=1)
    assert heads(send(strict, "m3@example.net", f"signup u3 u3-pw {VICTIM}"))[1] == ([VICTIM], "pbmserv confirm")


def test_confirmation_mails_are_capped_per_sender(server):
    """Ten a day from one sending address, whoever they go to (trust_from: the
    sender's own address needs none)."""
    server.signup("alice")
    for batch, count in enumerate((4, 4, 2)):
        addresses = " ".join(f"t{batch}{number}@example.net" for number in range(count))
        assert len(send(server, ALICE, f"change address alice alice-pw {ALICE} {addresses}")) == 1 + count
    replies = send(server, ALICE, f"change address alice alice-pw {ALICE} t99@example.net")
    assert heads(replies) == [([ALICE], "pbmserv error")]
    assert first_lines(replies[0]) == [f"{ALICE} asked for 10 confirmations in the last 24 hours, the limit.",
                                       "Send the command again tomorrow."]
    assert "t99@example.net" not in user_of(server, "alice")[1]
    # dropping addresses, or keeping confirmed ones, sends no confirmation: allowed
    assert heads(send(server, ALICE, f"change address alice alice-pw {ALICE}")) == [([ALICE], "pbmserv change address")]


# --- message -------------------------------------------------------------------------------


def test_a_message_goes_to_at_most_ten_recipients(server):
    server.signup("alice")
    names = [f"p{number}" for number in range(11)]
    server.signup(*names)
    replies = send(server, ALICE, f"message alice alice-pw {' '.join(names)}", "hi all")
    assert heads(replies) == [([ALICE], "pbmserv error")]
    assert first_lines(replies[0]) == [
        "A message goes to at most 10 players, and this one names 11.",
        "Send it to fewer players at a time, or broadcast it to the players of a game."]
    # thousands of names are refused before any is looked up
    many = " ".join(f"n{number}" for number in range(3000))
    refused = send(server, ALICE, f"message alice alice-pw {many}", "hi")
    assert heads(refused) == [([ALICE], "pbmserv error")]
    assert first_lines(refused[0], 1)[0].startswith("A message goes to at most 10 players, and this one names ")
    assert len(send(server, ALICE, f"message alice alice-pw {' '.join(names[:10])} P0", "hi")) == 11


def test_at_most_thirty_messages_a_day_one_for_each_recipient(server):
    server.signup("alice")
    names = [f"p{number}" for number in range(10)]
    server.signup(*names)
    for _ in range(3):
        assert len(send(server, ALICE, f"message alice alice-pw {' '.join(names)}", "hi")) == 11
    replies = send(server, ALICE, "message alice alice-pw p0", "one more")
    assert heads(replies) == [([ALICE], "pbmserv error")]
    assert first_lines(replies[0]) == [
        "alice has sent 30 messages in the last 24 hours, and may send 30 a day (one",
        "for each recipient)."]
    server.clock += timedelta(days=1)
    assert heads(send(server, ALICE, "message alice alice-pw p0", "one more"))[0] == ([ALICE], "pbmserv message")


def test_a_message_that_would_pass_the_limit_sends_nothing(server):
    server.signup("alice")
    names = [f"p{number}" for number in range(10)]
    server.signup(*names)
    for _ in range(2):
        send(server, ALICE, f"message alice alice-pw {' '.join(names)}", "hi")
    send(server, ALICE, f"message alice alice-pw {' '.join(names[:9])}", "hi")  # 29
    assert heads(send(server, ALICE, "message alice alice-pw p0 p1", "two")) == [([ALICE], "pbmserv error")]
    assert len(send(server, ALICE, "message alice alice-pw p0", "one")) == 2  # the 30th


# --- admins ----------------------------------------------------------------------------------


@pytest.mark.parametrize("userid", ["carol", "CAROL", "Carol"])
def test_an_admin_userid_cannot_be_signed_up_by_mail(make_server, userid):
    server = make_server(server={"admins": ["Carol"]})
    server.signup("alice", "bob")
    replies = send(server, MALLORY, f"signup {userid} stolen-pw")
    assert heads(replies) == [([MALLORY], "pbmserv error")]
    assert first_lines(replies[0]) == [
        f"The userid {userid} is reserved for an admin of this server.",
        "Choose another userid and send: signup USERID PASSWORD [ADDRESS ...]"]
    assert user_of(server, "carol") is None
    # so the would-be admin has no admin powers
    refused = send(server, MALLORY, "broadcast carol stolen-pw", "All your base")
    assert heads(refused) == [([MALLORY], "pbmserv error")]
    assert first_lines(refused[0], 1) == ["There is no user carol."]
    # the admin made on the command line has them
    server.add_user("carol")
    assert heads(send(server, "carol@example.org", "broadcast carol carol-pw", "Maintenance")) == [
        (["carol@example.org"], "pbmserv broadcast"),
        ([ALICE], "[pbmserv] Broadcast from carol via PBM Server"),
        ([BOB], "[pbmserv] Broadcast from carol via PBM Server")]


# --- lock-outs -------------------------------------------------------------------------------


def lock_alice(server, sender: str = ALICE) -> str:
    """Five wrong passwords for alice from `sender` (forged as alice's own address by
    default); the lock mail's Reply-To."""
    for number in range(4):
        assert heads(send(server, sender, "change password alice guess new-pw")) == [([sender], "pbmserv error")]
    replies = send(server, sender, "change password alice guess new-pw")
    assert heads(replies) == [([ALICE], "pbmserv lock"), ([sender], "pbmserv error")]
    assert replies[0].message["Reply-To"].startswith("pbmserv+u-")
    return replies[0]


def test_a_forger_who_locks_alices_address_tells_her_and_she_lifts_it(server):
    """Needs the worker to route mail for `pbmserv+u-...@` to unlock_by_reply."""
    server.signup("alice", "bob")
    lock = lock_alice(server)
    assert body_of(lock) == (
        "Commands for alice with a wrong password came in the last hour: 5 from\n"
        "alice@example.org.\n\n"
        "For an hour, commands with a password are refused from alice@example.org.\n"
        "Moves sent by replying to a board mail still work.\n\n"
        "To lift the lock now, reply to this mail: nothing else is needed.\n"
        "If the wrong passwords were not yours, someone is guessing your password:\n"
        "keep it long and secret (change password USERID OLD NEW).\n")
    assert first_lines(send(server, ALICE, "change password alice alice-pw new-pw")[0], 1) == [
        "Too many wrong passwords were sent from alice@example.org in the last hour."]
    # a stranger cannot lift it, even knowing the address
    assert heads(send(server, MALLORY, "Re: pbmserv lock", "", to=lock.message["Reply-To"])) == [
        ([MALLORY], "pbmserv error")]
    replies = send(server, ALICE, "Re: pbmserv lock", "> To lift the lock now", to=lock.message["Reply-To"])
    assert [(r.to, r.subject, body_of(r)) for r in replies] == [
        ([ALICE], "pbmserv unlock", "Commands for alice with its password are accepted again.\n")]
    assert heads(send(server, ALICE, "change password alice alice-pw new-pw")) == [
        ([ALICE], "pbmserv change password")]


def test_a_lock_mail_goes_out_once_an_hour(server):
    server.signup("alice")
    lock_alice(server, MALLORY)  # mallory's own address is locked; alice hears of it
    for number in range(5):  # more addresses: the lock on strangers starts, but no second mail
        assert heads(send(server, f"m{number}@example.net", "change password alice guess new-pw")) == [
            ([f"m{number}@example.net"], "pbmserv error")]
    server.clock += timedelta(minutes=61)
    lock_alice(server, "other@example.net")


def test_the_lock_mail_says_when_strangers_are_locked_out(server):
    server.signup("alice")
    for number in range(4):
        send(server, f"m{number}@example.net", "change password alice guess new-pw")
    lock = send(server, "m9@example.net", "change password alice guess new-pw")[0]
    assert (lock.to, first_lines(lock, 6)) == ([ALICE], [
        "Commands for alice with a wrong password came in the last hour: 1 from",
        "m9@example.net, 5 from addresses not registered to it.",
        "",
        "For an hour, commands with a password are refused from any address not",
        "registered to alice.",
        "Moves sent by replying to a board mail still work."])


def test_an_unlock_address_stops_working_when_the_password_changes(server):
    """Needs the worker to route mail for `pbmserv+u-...@` to unlock_by_reply."""
    server.signup("alice")
    address = lock_alice(server, MALLORY).message["Reply-To"]
    send(server, ALICE, "change password alice alice-pw new-pw")
    replies = send(server, ALICE, "Re: pbmserv lock", "", to=address)
    assert first_lines(replies[0], 3) == [
        "This reply address lifts no lock: the password changed since the lock",
        "mail was sent, or the address is not one of ours.",
        "Wait for the hour to pass, or send the command from a registered address."]


def test_reply_to_play_is_never_locked(server):
    server.signup("alice", "bob")
    board = send(server, ALICE, "superwari challenge alice alice-pw bob")
    lock_alice(server)
    replies = send(server, ALICE, "Re: New Super-Wari Board 101 alice", "c", to=board[0].message["Reply-To"])
    assert heads(replies) == [([ALICE], "Super-Wari Board 101 bob"), ([BOB], "Super-Wari Board 101 bob")]


# --- reset tokens ----------------------------------------------------------------------------


def test_a_reset_token_stops_working_when_the_password_changes(server):
    server.signup("alice")
    token = body_of(send(server, MALLORY, "forgot alice")[1]).split("reset alice ")[1].split()[0]
    send(server, ALICE, "change password alice alice-pw second-pw")
    replies = send(server, MALLORY, f"reset alice {token} taken-over")
    assert first_lines(replies[0], 1) == ["That token sets no new password for alice."]
    assert verify_password(user_of(server, "alice")[2], "second-pw")


# --- masking after a mistyped command word -------------------------------------------------


@pytest.mark.parametrize("line", [
    "superwari mvoe 101 alice Sekr3t c", "superwari moev 101 alice Sekr3t c", "superwari mv 101 alice Sekr3t c",
    "superwari chalenge alice Sekr3t bob", "SUPERWARI Chalenge alice Sekr3t bob", "wari xyzzy 101 Sekr3t Sekr3t x",
    "change passwd alice Sekr3t Sekr3t",
])
@pytest.mark.parametrize("sender", [ALICE, MALLORY])
def test_a_mistyped_command_word_does_not_show_the_password(server, line, sender):
    server.signup("alice")
    replies = server.send(sender, line)
    assert heads(replies) == [([sender], replies[0].subject)] and "error" in replies[0].subject
    assert "Sekr3t" not in replies[0].body
    assert MASK in replies[0].body


@pytest.mark.parametrize("words, passwords", [
    ("superwari mvoe 101 alice pw c", ["pw"]),
    ("superwari chalenge alice pw bob", ["pw"]),
    ("superwari resgin 101 alice pw", ["pw"]),
    ("superwari zzzzzzz a b c d", None),  # nothing close: every game command's positions
    ("superwari mvoe", []),
    ("nosuchgame mvoe 101 alice pw c", []),
])
def test_password_words_of_a_mistyped_command_word(words, passwords):
    from pbmserv.commands.base import game_commands, load_commands
    from pbmserv.commands.lines import password_words

    load_commands()
    found = password_words(words.split())
    if passwords is None:
        expected = {words.split()[2:][i] for cmd in game_commands.values() for i in cmd.password_args if i < 4}
        assert set(found) == expected and {"b", "c"} <= expected
    else:
        assert found == passwords


def test_a_change_of_address_sent_from_the_new_address_gets_only_its_confirmation(strict):
    confirm = send(strict, ALICE, "signup alice alice-pw")[0]
    send(strict, ALICE, "Re: pbmserv confirm", "", to=confirm.message["Reply-To"])
    new = "alice@new.example"
    replies = send(strict, new, f"change address alice alice-pw {new}")
    assert heads(replies) == [([new], "pbmserv confirm"), ([ALICE], "pbmserv change address")]
    assert user_of(strict, "alice")[0] == []  # the old one is dropped, the new one not yet confirmed


@pytest.mark.parametrize("words", ["change", "superwari", "change passwd", "superwari mvoe", ""])
def test_password_words_of_short_lines(words):
    from pbmserv.commands.lines import password_words

    assert password_words(words.split()) == []
