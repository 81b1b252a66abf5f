"""Issue 17, replies read right: an answer to a relayed message reaches its author, an
answer to a chat mail is chat on its board, an answer to a broadcast gets a note, an
error about a reply to play can itself be answered with the move, and the day's last
error to an unregistered address says it is the last."""

from __future__ import annotations

from conftest import body_of
from test_votes import game  # noqa: F401 - alice against bob on superwari 101 after c, c

ALICE = "alice@example.org"
BOB = "bob@example.org"
CAROL = "carol@example.org"
STRANGER = "stranger@example.net"


def heads(replies) -> list[tuple[str, list[str]]]:
    return [(r.subject, r.to) for r in replies]


def answer(server, sender: str, relayed, body: str):
    """`sender` answers the mail `relayed` as a mail client does: to its Reply-To, with
    `Re:` and the original quoted below."""
    quoted = "\n".join(f"> {line}" for line in body_of(relayed).split("\n"))
    return server.send(sender, f"Re: {relayed.subject}", f"{body}\n\nOn Monday, pbmserv wrote:\n{quoted}\n",
                       headers={"To": relayed.message["Reply-To"]})


def test_an_answer_to_a_message_reaches_its_author(game):
    [relayed] = [r for r in game.send(ALICE, "message alice alice-pw bob", "Good game so far?") if r.to == [BOB]]
    assert relayed.message["Reply-To"].startswith("pbmserv+m-")
    sent, relayed_back = answer(game, BOB, relayed, "Yes, very!\nSee you.")
    assert heads([sent, relayed_back]) == [("pbmserv message", [BOB]),
                                           ("[pbmserv] Message from bob via PBM Server", [ALICE])]
    assert body_of(relayed_back).startswith("bob writes:\n\nYes, very!\nSee you.\n\nTo answer bob, reply to this")
    assert "Good game" not in body_of(relayed_back)  # the quoted original stays behind
    assert body_of(sent) == "Your message was sent to alice.\n"
    # and the conversation goes on the same way
    replies = answer(game, ALICE, relayed_back, "Great.")
    assert heads(replies) == [("pbmserv message", [ALICE]), ("[pbmserv] Message from alice via PBM Server", [BOB])]


def test_an_answer_to_a_message_counts_only_from_the_readers_address(game):
    [relayed] = [r for r in game.send(ALICE, "message alice alice-pw bob", "Hello") if r.to == [BOB]]
    [error] = answer(game, CAROL, relayed, "I read bob's mail")
    assert body_of(error).split("\n")[:3] == [
        "Replies to a message count only from the registered address of the player it",
        "was sent to.",
        "Send it from that address, or send the command with your password.",
    ]


def test_an_answer_to_a_message_keeps_to_the_limit_of_messages(make_server):
    server = make_server(limits={"messages_per_day": 1})
    server.signup("alice", "bob")
    [relayed] = [r for r in server.send(ALICE, "message alice alice-pw bob", "Hello") if r.to == [BOB]]
    answer(server, BOB, relayed, "Hi")
    [error] = answer(server, BOB, relayed, "Hi again")
    assert body_of(error).split("\n")[:2] == [
        "bob has sent 1 message in the last 24 hours, and may send 1 a day (one for",
        "each recipient).",
    ]


def test_an_empty_answer_to_a_message_is_refused(game):
    [relayed] = [r for r in game.send(ALICE, "message alice alice-pw bob", "Hello") if r.to == [BOB]]
    [error] = answer(game, BOB, relayed, "")
    assert body_of(error).split("\n")[:2] == ["There is no text to send.",
                                              "Write your text in the reply, above the quoted mail."]


def test_an_answer_to_a_chat_mail_is_chat_on_its_board(game):
    replies = game.send(ALICE, "superwari chat 101 alice alice-pw", "Nice opening.")
    [chat] = [r for r in replies if r.to == [BOB]]
    assert chat.subject == "Chat: Super-Wari Board 101 alice"
    replies = answer(game, BOB, chat, "Thanks!")
    assert heads(replies) == [("pbmserv chat", [BOB]), ("Chat: Super-Wari Board 101 bob", [ALICE])]
    assert body_of(replies[1]).split("\n")[:3] == ["bob writes on Super-Wari board 101:", "", "Thanks!"]


def test_an_answer_to_a_broadcast_gets_a_note(game):
    [relayed] = [r for r in game.send(ALICE, "broadcast alice alice-pw superwari", "Tournament soon!")
                 if r.to == [BOB]]
    [note] = game.send(BOB, f"Re: {relayed.subject}", "Count me in!\n\n> Tournament soon!\n")
    assert note.subject == "pbmserv note"
    assert body_of(note) == (
        "Your reply to the broadcast from alice came to the server, and went to nobody:\n"
        "A broadcast cannot be answered by replying to it.\n\n"
        "To write to alice, send: message USERID PASSWORD alice\n"
        "with your text on the lines below it.\n\n"
        "This server has no admin, so nobody can be asked for anything else.\n")


def test_an_error_about_a_reply_to_play_can_be_answered_with_the_move(game):
    [board] = [r for r in game.send(ALICE, "superwari move 101 alice alice-pw a") if r.to == [BOB]]
    address = board.message["Reply-To"]
    [error] = game.send(BOB, f"Re: {board.subject}", "zz\n", headers={"To": address})
    assert error.subject == "Super-Wari Board 101 Error"
    assert error.message["Reply-To"] == address
    assert "\nTo send a move again, reply to this mail with just the move.\n" in body_of(error)
    legal = body_of(game.one(BOB, "superwari show 101 legal")).split("Legal moves for bob: ")[1].split(",")[0]
    replies = game.send(BOB, f"Re: {error.subject}", f"{legal}\n\n> zz\n", headers={"To": address})
    assert [r.subject for r in replies] == ["Super-Wari Board 101 alice", "Super-Wari Board 101 alice"]


def test_the_last_error_of_the_day_to_an_unregistered_address_says_so(game):
    first = game.one(STRANGER, "superwari show 999")
    assert "last error reply" not in body_of(first)
    game.one(STRANGER, "superwari show 998")
    third = game.one(STRANGER, "superwari show 997")
    assert body_of(third).split("\n\nYour message:")[0].endswith(
        "This is the last error reply today to your address: no account has confirmed\n"
        "it, and such an address gets 3 error replies a day, so that forged mail cannot\n"
        "make this server write to strangers. Further errors today will not be\n"
        "answered. To get every answer, sign up: signup USERID PASSWORD")
    assert game.send(STRANGER, "superwari show 996") == []
