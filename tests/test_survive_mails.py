"""Survive's mails as their readers get them (issue 17): the round log as the only
record of who did what, keyed hands, offers from the reader's side, whom the board
waits for, the moves that may be sent now, and no line longer than 78 characters.

The server's seed is fixed ("test"), so the deal of board 101 is known: after a plain
round-1 search by alice, bob and carol, alice holds W W S S S, bob F W W W S and
carol F W W S X."""

from __future__ import annotations

import email
import email.policy
from datetime import timedelta

import pytest
from conftest import body_of

from pbmserv.games import get_game
from pbmserv.games.survive import SurviveState
from pbmserv.mail.text import WIDTH
from pbmserv.play import current_state
from pbmserv.render import render_board
from pbmserv.store.repo import find_game

GAME = get_game("survive")
ALICE, BOB, CAROL, DAVE = (f"{name}@example.org" for name in ("alice", "bob", "carol", "dave"))
CARDS = "(CARDS: letters F W S X B T, e.g. F,W or 2F)"
def move(server, user: str, text: str, comment: str = ""):
    return server.send(f"{user}@example.org", f"survive move 101 {user} {user}-pw {text}", comment)


def mail_to(replies, address: str) -> str:
    [reply] = [r for r in replies if r.to == [address]]
    return body_of(reply)


def after(text: str, marker: str) -> list[str]:
    """The lines of `text` from the line `marker` on."""
    lines = text.split("\n")
    return lines[lines.index(marker):]


def section(text: str, marker: str) -> list[str]:
    """The lines of `text` from the line `marker` to the next blank line."""
    lines = after(text, marker)
    return lines[:lines.index("")]


def state_of(server) -> SurviveState:
    with server.sessions() as session:
        return current_state(find_game(session, "survive", 101))


@pytest.fixture
def board(server):
    """Board 101: alice, bob and carol, watched by dave, -deadline=1d -window=3h."""
    server.signup("alice", "bob", "carol", "dave")
    server.send(ALICE, "survive challenge alice alice-pw bob carol -deadline=1d -window=3h")
    server.send(DAVE, "survive subscribe 101 dave dave-pw")
    return server


@pytest.fixture
def talking(board):
    """Board 101 in round 1's negotiation phase, after a plain search by all three."""
    for user in ("alice", "bob", "carol"):
        move(board, user, "search")
    return board


ROUND_1_SEARCH = [
    "Round 1:",
    "  Search orders carried out in this order: bob, carol, alice.",
    "  bob discarded 2 Beasts from the dealt hand and drew 2 cards.",
    "  carol discarded 1 Beast from the dealt hand and drew 1 card.",
    "  alice discarded 2 Beasts from the dealt hand and drew 2 cards.",
    "  The negotiation phase begins.",
]


# --- 1. the round log says who did what, as each reader may see it --------------------------


def test_the_round_log_tells_offers_and_answers_in_full_only_to_their_two_players(talking):
    server = talking
    move(server, "alice", "offer carol give=W get=F")
    move(server, "carol", "offer alice give=W,W get=S")
    move(server, "bob", "offer carol give=F get=X")
    move(server, "carol", "reject 1")
    move(server, "alice", "accept 2")
    move(server, "bob", "withdraw 3")
    replies = move(server, "alice", "tell carol meet me at dawn")
    # each reader's lines after the search: offers 1 and 2 are alice's and carol's, 3 bob's and carol's
    full = {1: "alice made offer 1 to carol.", 2: "carol made offer 2 to alice.", 3: "bob made offer 3 to carol.",
            "reject": "carol rejected offer 1.", "withdraw": "bob withdrew offer 3.",
            "tell": "alice told carol: meet me at dawn"}
    public = {1: "alice made an offer.", 2: "carol made an offer.", 3: "bob made an offer.",
              "reject": "carol rejected an offer.", "withdraw": "bob withdrew an offer.", "tell": "alice sent a tell."}
    sees = {ALICE: {1, 2, "reject", "tell"}, CAROL: {1, 2, 3, "reject", "withdraw", "tell"}, BOB: {3, "withdraw"},
            DAVE: set()}
    for reader, seen in sees.items():
        line = {key: full[key] if key in seen else public[key] for key in full}
        assert section(mail_to(replies, reader), "Round 1:") == ROUND_1_SEARCH + [f"  {text}" for text in [
            line[1], line[2], line[3], line["reject"], "carol and alice swapped: carol gave 2 Water, alice gave "
            "1 Shelter.", line["withdraw"], line["tell"]]], reader


def test_done_votes_are_in_the_log_at_the_end_of_the_round(talking):
    move(talking, "carol", "done")
    replies = move(talking, "alice", "done")
    assert "  End of round 1 (done: alice, carol).\n" in mail_to(replies, DAVE)


# --- 2. a key to the letters of a hand -----------------------------------------------------


def test_a_hand_has_a_key_to_the_letters_it_holds(board):
    replies = move(board, "alice", "search")
    assert after(mail_to(replies, ALICE), "Your hand (alice): W S S B B  (W Water, S Shelter, B Beast)") == [
        "Your hand (alice): W S S B B  (W Water, S Shelter, B Beast)",
        "Your search order: search", ""]
    assert mail_to(replies, BOB).endswith("\nYour hand (bob): F W S B B  (F Food, W Water, S Shelter, B Beast)\n")
    assert "Your hand" not in mail_to(replies, DAVE)


def test_a_key_that_would_make_the_hand_line_too_long_goes_on_the_next_line():
    state = GAME.setup(2, {}, None)
    state.hands = [["F", "W", "S", "X", "T"], []]
    names = ["a_userid_of_twenty_c", "bob"]
    board = render_board(GAME, GAME.view(state, 0), names)
    assert board.endswith("\nYour hand (a_userid_of_twenty_c): F W S X T\n"
                          "  (F Food, W Water, S Shelter, X Weapon, T Trash)\n")
    assert render_board(GAME, GAME.view(state, 1), names).endswith("\nYour hand (bob): empty\n")


# --- 3. whom the board waits for -----------------------------------------------------------


def test_waiting_for_lists_who_has_not_yet_acted_in_the_search_phase(board):
    replies = move(board, "alice", "search")
    assert mail_to(replies, DAVE).split("\n")[2] == "Waiting for: bob, carol."


def test_waiting_for_leaves_out_resigned_players_and_done_votes(board):
    board.send(BOB, "survive resign 101 bob bob-pw")
    move(board, "alice", "search")
    replies = move(board, "carol", "search")
    assert mail_to(replies, DAVE).split("\n")[2] == "Waiting for: alice, carol."


def test_the_engine_waits_for_orders_not_in_then_for_votes_and_passes(talking):
    state = state_of(talking)
    assert GAME.waiting_for(state) == frozenset({0, 1, 2})
    move(talking, "bob", "done")
    move(talking, "carol", "weapon life alice")
    state = state_of(talking)
    assert GAME.waiting_for(state) == frozenset({0, 1, 2})  # bob has to pass on weapon play 1
    move(talking, "bob", "pass 1")
    assert GAME.waiting_for(state_of(talking)) == frozenset({0, 2})
    talking.send(CAROL, "survive resign 101 carol carol-pw")
    assert GAME.waiting_for(state_of(talking)) == frozenset({0})  # to pass, and to vote
    move(talking, "alice", "pass 1")
    move(talking, "alice", "done")
    state = state_of(talking)
    assert (state.round, state.phase) == (2, "search") and GAME.waiting_for(state) == frozenset({0, 1})


# --- 4. one "Round N:" a round --------------------------------------------------------------


def test_a_new_round_is_headed_once(talking):
    move(talking, "bob", "done")
    replies = move(talking, "carol", "done")
    text = mail_to(replies, DAVE)
    assert text.count("Round 2") == 1 and text.count("Round 1") == 1
    assert after(text, "Round 2:") == ["Round 2:", "  The search phase begins.", ""]
    assert after(text, "Round 1:")[6:11] == [
        "  End of round 1 (done: bob, carol).",
        "  alice paid 1 Water and 1 Shelter and loses 1 life for want of Food (2 left).",
        "  bob paid 1 Food, 1 Water and 1 Shelter (3 left).",
        "  carol paid 1 Food, 1 Water and 1 Shelter (3 left).",
        ""]


# --- 5. offers from the reader's side -------------------------------------------------------


def test_offers_read_from_the_readers_side_with_their_number_and_status(talking):
    move(talking, "alice", "offer carol give=W get=F")
    move(talking, "carol", "offer alice give=W,W get=S")
    move(talking, "bob", "offer carol give=F get=X")
    move(talking, "carol", "reject 1")
    replies = move(talking, "alice", "accept 2")
    assert after(mail_to(replies, ALICE), "Your offers this round:") == [
        "Your offers this round:",
        "  Offer 1: you offer carol W for carol's F (rejected)",
        "  Offer 2: carol offers you W W for your S (accepted)", ""]
    assert after(mail_to(replies, CAROL), "Your offers this round:") == [
        "Your offers this round:",
        "  Offer 1: alice offers you W for your F (rejected)",
        "  Offer 2: you offer alice W W for alice's S (accepted)",
        "  Offer 3: bob offers you F for your X (open)", ""]
    assert after(mail_to(replies, BOB), "Your offers this round:") == [
        "Your offers this round:", "  Offer 3: you offer carol F for carol's X (open)", ""]
    assert "Offer" not in mail_to(replies, DAVE)


# --- 6. the moves that may be sent now ------------------------------------------------------


def words(text: str) -> str:
    """`text` with its line breaks and runs of spaces as single spaces: the same
    however a line was wrapped."""
    return " ".join(text.split())


def test_show_legal_in_the_search_phase_lists_the_search_order_only(board):
    listed = body_of(board.one(DAVE, "survive show 101 legal")).split("\n\n")[-1]
    assert words(listed) == " ".join(f"Moves for {user}: search [stock CARDS] [discard CARDS] {CARDS}"
                                     for user in ("alice", "bob", "carol"))


def test_a_wrong_move_in_the_search_phase_is_answered_with_the_search_order(board):
    reply = board.one(ALICE, "survive move 101 alice alice-pw search stock F")
    assert words(body_of(reply).split("\n\n")[0]) == (
        "Move search stock F is not legal on board 101: you have no Food in your hand (your hand: W S S). "
        f"Send instead: survive move 101 alice PASSWORD MOVE where MOVE is search [stock CARDS] [discard CARDS] "
        f"{CARDS}")


def test_an_unknown_command_is_answered_with_the_moves_of_the_phase(board):
    reply = board.one(ALICE, "survive move 101 alice alice-pw dance")
    assert words(body_of(reply).split("\n\n")[0]).startswith(
        "Move dance is not legal on board 101: 'dance' is not a Survive command; send search [stock CARDS] "
        f"[discard CARDS] {CARDS}. Send instead: ")


def test_the_moves_now_follow_the_phase_the_offers_the_weapons_and_the_votes(talking):
    assert GAME.syntax_now(state_of(talking), 0) == (
        f"give USER CARDS | offer USER give=CARDS get=CARDS | say TEXT | tell USER TEXT | done {CARDS}")
    move(talking, "alice", "offer carol give=W get=F")
    move(talking, "bob", "offer carol give=F get=X")
    move(talking, "carol", "weapon life bob")
    move(talking, "carol", "done")
    assert GAME.syntax_now(state_of(talking), 2) == (
        "give USER CARDS | offer USER give=CARDS get=CARDS | accept N | reject N (N: 1 or 2) | say TEXT | "
        f"tell USER TEXT | undone {CARDS}")
    assert GAME.syntax_now(state_of(talking), 0) == (
        "give USER CARDS | offer USER give=CARDS get=CARDS | withdraw 1 | say TEXT | tell USER TEXT | pass 1 | "
        f"done {CARDS}")
    talking.send(BOB, "survive resign 101 bob bob-pw")
    assert GAME.syntax_now(state_of(talking), 1) == "say TEXT | tell USER TEXT"


# --- 7. no line longer than 78 characters ---------------------------------------------------


def overlong(text: str) -> list[str]:
    """The lines of a mail longer than WIDTH, but the sender's own quoted after
    "Your message:"."""
    head, _, quoted = text.partition("\nYour message:\n")
    lines = head.split("\n") + [line for line in quoted.split("\n") if not line.startswith("> ")]
    return [line for line in lines if len(line) > WIDTH]


def sent_texts(server) -> list[tuple[str, str]]:
    """(subject, plain text) of every mail the server has sent."""
    texts = []
    for _to, raw in server.transport.delivered:
        message = email.message_from_bytes(raw, policy=email.policy.default)
        texts.append((str(message["Subject"]), message.get_body(("plain",)).get_content()))
    return texts


def test_the_help_of_survive_fits(server):
    for subject in ("help survive", "help survive move", "survive help", "help survive show"):
        assert overlong(body_of(server.one(DAVE, subject))) == [], subject


USERS = ["aardvark", "beetroot", "cardigan", "dumpling", "elephant", "flamingo", "gumdrops"]
LONG_TEXT = ("Listen carefully: if you give me your Water this round I will give you two Shelter in the next, "
             "and I will never play a Weapon against you, whatever the others say about me at the table; "
             "https://example.org/a-link-that-is-far-too-long-to-fit-on-any-one-line-of-a-mail-at-all/x")


def seven_player_game(server) -> None:
    """A 7-player game of 8-character userids through a search phase, a negotiation
    phase with long tells and talk, offers, gives, weapon plays and a resignation,
    deadlines, and into the next round; watched, shown and answered with errors."""
    server.signup(*USERS, "observer")
    a = USERS[0]
    server.send(f"{a}@example.org", f"survive challenge {a} {a}-pw {' '.join(USERS[1:])} -deadline=1d -window=3h")
    server.send("observer@example.org", "survive subscribe 101 observer observer-pw")
    server.send("observer@example.org", "survive show 101 legal")
    move(server, USERS[1], f"give {USERS[2]} W")  # a negotiation command in the search phase
    server.send(f"{USERS[6]}@example.org", f"survive resign 101 {USERS[6]} {USERS[6]}-pw")
    for seat, user in enumerate(USERS[:6]):
        hand = [c for c in state_of(server).hands[seat] if c != "B"]
        stock, discard = [c for c in hand if c in "FWS"], [c for c in hand if c == "T"]
        move(server, user, "search" + (f" stock {','.join(stock)}" if stock else "")
             + (f" discard {','.join(discard)}" if discard else ""), LONG_TEXT)
    state = state_of(server)
    assert state.phase == "negotiation"
    server.send("observer@example.org", "survive show 101 legal")
    for seat, user in enumerate(USERS[:6]):
        other = USERS[(seat + 1) % 6]
        move(server, user, f"tell {other} {LONG_TEXT}")
        move(server, user, f"say {LONG_TEXT}")
        hand = state_of(server).hands[seat]
        if hand:
            move(server, user, f"offer {other} give={hand[0]} get=F,F,W,W,S,S,X,T,T")
            move(server, user, f"give {USERS[(seat + 2) % 6]} {hand[-1]}")
    armed = [seat for seat in range(6) if "X" in state_of(server).hands[seat] + state_of(server).stock[seat]]
    assert len(armed) >= 2, armed
    first, second = armed[:2]
    target = next(seat for seat in range(6) if seat not in (first, second))
    move(server, USERS[first], f"weapon life {USERS[target]}")
    move(server, USERS[second], "weapon counter 1")
    move(server, USERS[target], "pass 2")
    move(server, USERS[target], "accept 999")  # an error during the negotiation
    server.send("observer@example.org", "survive show 101 legal")
    for user in USERS[:4]:
        move(server, user, "done")
    server.wait(timedelta(days=1))
    server.wait(timedelta(days=1))


@pytest.fixture
def seven(server):
    seven_player_game(server)
    return server


def drawing(text: str) -> str:
    """The part of a board mail the Survive template draws: from its first line to
    the comments (`USERID writes:`) or the end."""
    start = text.index("\nSurvive, round ") + 1
    ends = [text.index(f"\n\n{user} writes:\n", start) for user in USERS if f"\n\n{user} writes:\n" in text[start:]]
    return text[start:min(ends, default=len(text))]


def test_every_line_the_survive_board_draws_fits_78_columns(seven):
    state = state_of(seven)
    assert (state.round, state.phase, state.resigned) == (2, "negotiation", [6])
    boards = [(subject, drawing(text)) for subject, text in sent_texts(seven) if "\nSurvive, round " in text]
    assert len(boards) > 300
    assert [text for _, text in boards if "\nPending weapon plays" in text]
    assert [text for _, text in boards if f"  {USERS[0]} told {USERS[1]}: Listen carefully: if you give" in text]
    assert [(subject, line) for subject, text in boards for line in overlong(text)] == []


def test_every_line_of_every_mail_of_a_seven_player_game_fits_78_columns(seven):
    """Every line of every mail the server sent: boards (of both phases, with pending
    weapon plays and long tells), `show legal`, errors and deadline mails."""
    assert [(subject, line) for subject, text in sent_texts(seven) for line in overlong(text)] == []


def test_random_games_keep_every_drawn_line_within_78_columns():
    """A random 7-player game of 20-character userids, drawn for every seat and the
    public after every fifth action."""
    from test_survive import random_game

    names = [name.ljust(20, "x") for name in ("alice_", "bob_", "carol_", "dave_", "erin_", "frank_", "gina_")]
    for step, state in enumerate(random_game(7, 17)):
        if step % 5 == 0:
            for seat in (None, *range(7)):
                assert overlong(render_board(GAME, GAME.view(state, seat), names)) == [], (step, seat)
