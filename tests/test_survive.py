"""Survive: every rule of shared/rules/survive.md on literal states, random games with
deadlines firing, and whole games by mail through the real server with a leak scan."""

from __future__ import annotations

import json
import random
import re
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from pbmserv.games import Outcome, get_game
from pbmserv.games.survive import COUNTS, ORDER, SurviveState, seen_by, show_cards
from pbmserv.mail.outbound import deliver_queued
from pbmserv.render import render_board
from pbmserv.scheduler import run_due
from pbmserv.store.models import GameRecord
from conftest import plain

GAME = get_game("survive")
NAMES = ["alice", "bob", "carol", "dave", "erin", "frank", "gina"]
PARAMS = {"deadline": 72 * 3600, "window": 24 * 3600, "first": -1}


def full_deck() -> list[str]:
    return [card for card in ORDER for _ in range(COUNTS[card])]


def start(players: int = 3, deck: list[str] | None = None, first: int = 0, **params) -> SurviveState:
    """A fresh game with the deck in the given order (top first; the rest of the 100
    cards follow in a fixed order)."""
    rest = Counter(full_deck())
    rest.subtract(deck or [])
    order = list(deck or []) + [c for c in ORDER for _ in range(rest[c])]
    return GAME.setup(players, PARAMS | {"first": first} | params, {"deck": order, "first": 0, "keys": [7] * 32})


def negotiating(players: int = 3, **fields) -> SurviveState:
    """A round-2 negotiation phase with the given fields set (other cards stay in the deck)."""
    state = start(players)
    state.round, state.phase = 2, "negotiation"
    state.hands = [[] for _ in range(players)]
    state.deck = full_deck()
    for name, value in fields.items():
        setattr(state, name, value)
    return state


def act(state: SurviveState, seat: int, text: str) -> SurviveState:
    verdict = GAME.check(state, seat, text)
    assert verdict.ok, (text, verdict.error)
    GAME.apply(state, seat, verdict.move, GAME.draw(state, seat, verdict.move, random.Random(0)))
    return state


def error(state: SurviveState, seat: int, text: str) -> str | None:
    return GAME.check(state, seat, text).error


def log_text(state: SurviveState, seat: int | None = None) -> list[str]:
    """The round log as `seat` (None: the public) reads it."""
    return [re.sub(r"\{seat(\d)\}", lambda m: NAMES[int(m[1])], seen[1]) for entry in state.log
            if (seen := seen_by(entry, seat)) is not None]


def census(state: SurviveState) -> Counter:
    cards = Counter(state.deck) + Counter(state.trash) + Counter({"B": sum(state.beasts)})
    for seat in range(state.players):
        cards += Counter(state.hands[seat]) + Counter(state.stock[seat])
    return cards


# --- set-up ------------------------------------------------------------------------------


def test_setup_deals_five_cards_and_three_lives_from_a_deck_of_100():
    chance = GAME.initial_chance(4, PARAMS, random.Random(3))
    state = GAME.setup(4, PARAMS, json.loads(json.dumps(chance)))
    assert Counter(chance["deck"]) == Counter(COUNTS)
    assert [len(h) for h in state.hands] == [5] * 4 and len(state.deck) == 80
    assert state.lives == [3] * 4 and state.stock == [[]] * 4 and state.beasts == [0] * 4
    assert (state.round, state.phase) == (1, "search")
    assert GAME.to_act(state) == frozenset(range(4))
    assert GAME.timers(state) == {"round 1 search": 72 * 3600}
    assert census(state) == Counter(COUNTS)
    assert [(p.name, p.default) for p in GAME.params] == [("deadline", 259200), ("window", 86400), ("first", -1)]
    assert (GAME.min_players, GAME.max_players, GAME.names_in_moves) == (2, 7, True)
    assert GAME.legal_moves(state, 0) is None


def test_first_player_parameter_and_search_order_by_hunger():
    state = start(4, first=2)
    assert GAME.search_order(state) == [2, 3, 0, 1]
    state.round, state.last_ate = 3, [2, 1, 2, 1]  # bob and dave ate longest ago: dave is met first from carol
    assert GAME.search_order(state) == [3, 0, 1, 2]
    state.last_ate = [2, 0, 2, 1]
    assert GAME.search_order(state) == [1, 2, 3, 0]
    state.lives[1] = 0  # out players are skipped
    assert GAME.search_order(state) == [3, 0, 2]


# --- search phase --------------------------------------------------------------------------


def test_search_orders_are_sealed_replaceable_and_carried_out_once_all_are_in():
    deck = list("FWSXT" "WWWWW" "SSSSS") + list("FFT")  # dealt 5 each, then F F T drawn
    state = start(3, deck)
    act(state, 0, "search stock f discard T")
    act(state, 0, "search stock F, W")  # replaces the first order
    act(state, 1, "search discard 2w")
    assert state.phase == "search" and state.hands[0] == list("FWSXT")
    assert GAME.shown_move(0, "search stock F,W", 1) == "search"
    assert GAME.shown_move(0, "search stock F,W", 0) == "search stock F,W"
    act(state, 2, "search")
    assert state.phase == "negotiation"
    assert state.stock[0] == ["F", "W"] and state.hands[0] == ["F", "F", "S", "X", "T"]
    assert state.trash == ["W", "W"]
    assert log_text(state)[-4:] == ["alice stocked 1 Food and 1 Water and drew 2 cards.",
                                    "bob discarded 2 Water and drew 2 cards.", "carol drew 0 cards.",
                                    "The negotiation phase begins."]


def test_round_one_beasts_in_the_dealt_hand_are_discarded_and_drawn_beasts_are_not_replaced():
    deck = list("BBFWS" "FWSTT") + list("BFB")
    state = start(2, deck)
    act(state, 0, "search stock F")
    assert error(state, 0, "search discard B").startswith("a Beast cannot be stocked or discarded")
    act(state, 1, "search")
    # alice: two Beasts discarded, F stocked, hand W S; draws 3: B F B -> one card, two Beasts in front
    assert state.hands[0] == ["F", "W", "S"] and state.beasts[0] == 2 and state.stock[0] == ["F"]
    assert state.trash == ["B", "B"]
    assert "alice discarded 2 Beasts from the dealt hand, stocked 1 Food and drew 1 card and was attacked by " \
           "2 Beasts." in log_text(state)


def test_an_empty_deck_is_refilled_from_the_shuffled_trash_and_a_draw_stops_when_both_are_empty():
    state = negotiating(2)
    state.round, state.phase = 3, "search"
    state.hands = [["F"], ["W", "W", "W", "W", "W"]]
    state.deck, state.trash = ["S"], ["T", "T"]
    state.keys = [11, 12]
    act(state, 0, "search")
    act(state, 1, "search discard W")
    # alice (who ate longest ago: a tie, first player) draws 4: S, then the trash T T, then nothing;
    # bob's discarded W is the next trash pile, shuffled into a deck again for his draw
    assert state.hands[0] == ["F", "S", "T", "T"]
    assert state.hands[1] == ["W", "W", "W", "W", "W"] and state.trash == [] and state.deck == []
    assert "The deck ran out: the trash pile (2 cards) was shuffled into a new deck." in log_text(state)
    assert "The deck ran out: the trash pile (1 card) was shuffled into a new deck." in log_text(state)
    assert "alice drew 3 cards (the deck and the trash pile were empty)." in log_text(state)


def test_a_reshuffle_at_a_search_deadline_replays_exactly_from_the_kept_keys():
    state = negotiating(2)
    state.round, state.phase = 3, "search"
    state.hands, state.deck, state.trash = [[], []], [], list("FWSTFWSTXX")
    saved = GAME.serialise(state)
    GAME.timeout(state, "round 3 search")
    again = GAME.restore(saved)
    GAME.timeout(again, "round 3 search")
    assert GAME.serialise(again) == GAME.serialise(state) and len(state.keys) == 31
    assert sorted(state.hands[0] + state.hands[1] + state.deck) == sorted("FWSTFWSTXX")
    assert "alice sent no search order: plain search." in log_text(state)


def test_three_missed_search_deadlines_in_a_row_resign_a_player():
    state = start(3)
    for round_ in (1, 2, 3):
        assert state.round == round_
        act(state, 0, "search")
        if round_ != 2:
            act(state, 1, "search")
        GAME.timeout(state, f"round {round_} search")
        if round_ < 3:
            assert 2 not in state.resigned and state.phase == "negotiation"
            state.lives = [3, 3, 3]
            for seat in range(3):
                state.stock[seat] += ["F", "W", "S"]
            GAME.timeout(state, f"round {round_} negotiation")
    assert state.resigned == [2] and state.missed[1] == 0
    assert "carol missed 3 search deadlines in a row and is resigned; 5 cards went to the trash." in log_text(state)


# --- negotiation ---------------------------------------------------------------------------


def test_give_puts_hand_cards_in_the_receivers_stockpile_publicly():
    state = negotiating(3, hands=[["F", "W"], ["S"], []])
    act(state, 0, "give {seat1} W")
    assert state.hands[0] == ["F"] and state.stock[1] == ["W"]
    assert log_text(state)[-1] == "alice gave bob 1 Water."


def test_an_offer_fails_when_a_card_was_given_away_first():
    state = negotiating(3, hands=[["F", "W"], ["S"], []])
    act(state, 0, "offer {seat1} give=F get=S")
    assert GAME.private_to(state, 0, "offer {seat1} give=F get=S") == frozenset({0, 1})
    act(state, 0, "give {seat2} F")
    act(state, 1, "accept 1")
    assert state.offers[0]["status"] == "not carried out: {seat0} no longer held the cards"
    assert state.hands == [["W"], ["S"], []] and state.stock[1] == []
    assert error(state, 1, "accept 1") == "offer 1 is no longer open (it was not carried out: {seat0} no longer " \
                                           "held the cards)"
    assert log_text(state, 1)[-1] == "bob accepted offer 1, but alice no longer held the cards: no swap."
    assert log_text(state, 0)[-1] == log_text(state, 1)[-1]
    assert log_text(state, 2)[-1] == log_text(state)[-1] == "bob accepted an offer, but it could not be carried out."


def test_an_accepted_offer_swaps_into_stockpiles_and_is_public():
    state = negotiating(3, hands=[["F", "W"], ["S", "S"], []])
    act(state, 0, "offer {seat1} give=F,W get=S")
    assert error(state, 2, "accept 1") == "there is no offer 1 made to you this round"
    act(state, 1, "accept 1")
    assert state.hands == [[], ["S"], []] and state.stock[0] == ["S"] and state.stock[1] == ["F", "W"]
    assert log_text(state)[-1] == "alice and bob swapped: alice gave 1 Food and 1 Water, bob gave 1 Shelter."
    assert GAME.shown_move(1, "accept 1 from {seat0}", 2) == "accept"


def test_reject_withdraw_and_lapse():
    state = negotiating(2, hands=[["F"], ["S"]])
    act(state, 0, "offer {seat1} give=F get=S")
    act(state, 0, "offer {seat1} give=F get=2S")
    act(state, 1, "reject 1")
    assert error(state, 1, "withdraw 2") == "there is no offer 2 made by you this round"
    act(state, 0, "withdraw 2 to {seat1}")
    act(state, 0, "offer {seat1} give=F get=S")
    act(state, 0, "done")
    act(state, 1, "done")
    assert [o["status"] for o in state.offers] == [] and state.round == 3  # a new round: offers gone
    assert [e for e in log_text(state, 1) if "offer" in e] == [
        "alice made offer 1 to bob.", "alice made offer 2 to bob.", "bob rejected offer 1.", "alice withdrew offer 2.",
        "alice made offer 3 to bob."]
    assert [e for e in log_text(state) if "offer" in e] == [
        "alice made an offer.", "alice made an offer.", "bob rejected an offer.", "alice withdrew an offer.",
        "alice made an offer."]
    assert log_text(state)[-4:] == [
        "End of round 2 (done: alice, bob).",
        "alice paid 1 Food and loses 2 lives for want of Water and Shelter (1 left).",
        "bob paid 1 Shelter and loses 2 lives for want of Food and Water (1 left).",
        "The search phase begins."]


def test_say_is_public_and_tell_is_private():
    state = negotiating(3, hands=[["F"], [], []])
    act(state, 0, "say I have   Water, {seat1}!")
    act(state, 0, "tell {seat2} I lied")
    assert log_text(state)[-2] == "alice says: I have Water, bob!"
    assert GAME.private_to(state, 0, "tell {seat2} I lied") == frozenset({0, 2})
    assert GAME.shown_move(0, "tell {seat2} I lied", 1) == "tell"
    assert GAME.shown_move(0, "tell {seat2} I lied", 2) == "tell {seat2}"
    assert log_text(state, 0)[-1] == log_text(state, 2)[-1] == "alice told carol: I lied"
    assert log_text(state, 1)[-1] == log_text(state)[-1] == "alice sent a tell."
    assert GAME.view(state, 2)["log"][-1] == [2, [0, " told ", 2, ": I lied"]]


# --- weapons ---------------------------------------------------------------------------------


def test_weapon_life_resolves_when_every_other_living_player_passes():
    state = negotiating(3, hands=[["X"], [], []], stock=[["X"], [], []])
    act(state, 0, "weapon life {seat1}")
    assert state.hands[0] == [] and state.stock[0] == ["X"] and state.trash == ["X"]  # hand first
    assert GAME.timers(state) == {"round 2 negotiation": 259200, "weapon play 1": 86400}
    act(state, 1, "pass 1")
    assert state.lives[1] == 3
    assert error(state, 0, "pass 1") == "weapon play 1 is yours: the others pass on it"
    act(state, 2, "pass 1")
    assert state.lives[1] == 2 and state.plays == []
    assert error(state, 1, "pass 1") == "weapon play 1 is no longer pending"
    act(state, 0, "weapon life {seat1}")  # from the stockpile now
    assert state.stock[0] == [] and state.trash == ["X", "X"]
    GAME.timeout(state, "weapon play 2")
    assert state.lives[1] == 1


def test_a_counter_of_a_counter_lets_the_first_play_through():
    state = negotiating(3, hands=[["X"], ["X"], ["X"]])
    act(state, 0, "weapon life {seat2}")
    act(state, 2, "weapon counter 1")
    assert GAME.timers(state) == {"round 2 negotiation": 259200, "weapon play 2": 86400}
    assert error(state, 1, "pass 1") == "weapon play 1 has been answered by weapon play 2: send pass 2"
    act(state, 1, "weapon counter 2")
    act(state, 0, "pass 3")
    act(state, 2, "pass 3")
    assert state.lives == [3, 3, 2] and state.plays == []
    assert log_text(state)[-3:] == ["Weapon play 3 cancels weapon play 2.", "Weapon play 2 is cancelled.",
                                    "Weapon play 1: carol loses a life (2 left)."]


def test_a_single_counter_cancels_and_targets_are_checked_at_resolution():
    state = negotiating(2, hands=[["X", "X"], ["X"]], beasts=[0, 1])
    act(state, 0, "weapon beast {seat1}")
    act(state, 1, "weapon counter 1")
    GAME.timeout(state, "weapon play 2")
    assert state.beasts == [0, 1]
    act(state, 0, "weapon beast {seat1}")
    state.beasts[1] = 0  # gone before the play resolves
    act(state, 1, "pass 3")
    assert log_text(state)[-1] == "Weapon play 3 does nothing: no Beast is left in front of bob."


def test_a_steal_takes_what_is_left():
    state = negotiating(3, hands=[["X"], ["F"], ["X"]], stock=[[], ["F", "F", "W"], []])
    act(state, 0, "weapon steal {seat1} F,F")
    act(state, 2, "weapon steal {seat1} F")
    act(state, 0, "pass 2")
    act(state, 1, "pass 2")  # play 2 resolves first: carol takes one F
    assert state.stock[2] == ["F"]
    GAME.timeout(state, "weapon play 1")
    assert state.stock == [["F"], ["W"], ["F"]]
    assert log_text(state)[-1] == "Weapon play 1: alice steals 1 Food from bob."
    state.hands[0] = ["X"]
    act(state, 0, "weapon steal {seat1} all")
    GAME.timeout(state, "weapon play 3")
    assert state.stock == [["F", "W"], [], ["F"]]


def test_elimination_by_weapon_ends_the_game_for_the_last_survivor():
    state = negotiating(3, hands=[["X", "X"], ["F", "W"], ["S"]], stock=[[], ["T"], []], lives=[3, 1, 1])
    act(state, 0, "weapon life {seat1}")
    GAME.timeout(state, "weapon play 1")
    assert state.lives[1] == 0 and state.hands[1] == [] and state.stock[1] == []
    assert Counter(state.trash) == Counter("XFWT")
    assert GAME.to_act(state) == frozenset({0, 1, 2}) and GAME.result(state) is None  # bob may still talk
    assert error(state, 1, "done") == "you are out of the game: you may still say and tell"
    act(state, 1, "say avenge me")
    act(state, 0, "weapon life {seat2}")
    GAME.timeout(state, "weapon play 2")
    assert GAME.result(state) == Outcome(winners=(0,)) and GAME.to_act(state) == frozenset()
    assert GAME.timers(state) == {}


def test_phase_ends_on_a_majority_of_done_only_with_no_weapon_play_pending():
    state = negotiating(3, hands=[["X"], [], []], stock=[list("FWS"), list("FWS"), list("FWS")])
    act(state, 0, "done")
    act(state, 0, "weapon life {seat2}")
    act(state, 1, "done")
    assert state.phase == "negotiation" and state.round == 2
    act(state, 1, "undone")
    act(state, 1, "done")
    act(state, 1, "pass 1")
    act(state, 2, "pass 1")
    assert state.round == 3 and state.phase == "search"


# --- end of round ----------------------------------------------------------------------------


def test_payment_comes_from_the_stockpile_first_then_the_hand():
    state = negotiating(2, hands=[["F", "W", "S"], ["F", "W", "S"]], stock=[["F", "T"], []])
    act(state, 0, "done")
    act(state, 1, "done")
    # alice paid F from the stockpile, then W and S from the hand, keeping the hand's F
    assert state.stock[0] == ["T"] and state.hands[0] == ["F"] and state.lives == [3, 3]
    assert state.hands[1] == [] and state.last_ate == [2, 2] and state.round == 3


def test_payment_takes_the_hand_card_when_the_stockpile_lacks_it():
    state = negotiating(2, hands=[["F", "W", "S", "S"], ["F", "W", "S"]], stock=[["S"], []])
    GAME.timeout(state, "round 2 negotiation")
    assert state.hands[0] == ["S", "S"] and state.stock[0] == [] and state.lives == [3, 3]


def test_one_life_per_missing_resource_and_beasts_take_lives():
    state = negotiating(3, hands=[["F"], [], ["F", "W", "S"]], beasts=[0, 0, 2], lives=[3, 3, 3])
    GAME.timeout(state, "round 2 negotiation")
    assert state.lives == [1, 0, 1]
    assert state.beasts == [0, 0, 0] and state.trash.count("B") == 2
    assert state.last_ate == [2, 0, 2]
    text = log_text(state)
    assert "alice paid 1 Food and loses 2 lives for want of Water and Shelter (1 left)." in text
    assert "carol paid 1 Food, 1 Water and 1 Shelter; 2 Beasts take 2 lives (1 left)." in text
    assert "bob is out of the game; 0 cards went to the trash." in text
    assert GAME.result(state) is None and state.round == 3


def test_everyone_out_in_the_same_round_means_nobody_wins():
    state = negotiating(2, hands=[["F", "W"], ["X"]], lives=[1, 1], stock=[[], ["T"]])
    GAME.timeout(state, "round 2 negotiation")
    assert state.lives == [0, 0] and GAME.result(state) == Outcome()
    assert log_text(state)[-1] == "Every remaining player is out: nobody wins."
    assert census(state)["X"] + state.deck.count("X") >= 1


def test_resignation_is_out_at_once_and_can_end_the_game():
    state = start(3)
    act(state, 0, "search")
    act(state, 1, "search")
    GAME.resign(state, 2)  # the last missing order: the search is carried out
    assert state.phase == "negotiation" and state.hands[2] == [] and 2 in GAME.to_act(state)
    GAME.resign(state, 1)
    assert GAME.result(state) == Outcome(winners=(0,))
    assert census(state) == Counter(COUNTS)


# --- errors ----------------------------------------------------------------------------------


@pytest.mark.parametrize("phase, seat, text, message", [
    ("n", 0, "give {seat1} W", "you have no Water in your hand (your hand: F F S X T)"),
    ("n", 0, "give {seat1} 3F", "you have only 2 Food in your hand (your hand: F F S X T)"),
    ("s", 0, "done", "it is the search phase: negotiation commands are taken once every search order is "
                     "carried out"),
    ("n", 0, "search", "it is the negotiation phase: search orders are taken in the search phase of the next round"),
    ("n", 0, "pass 4", "weapon play 4 is no longer pending"),
    ("n", 0, "weapon counter 4", "weapon play 4 is no longer pending"),
    ("n", 0, "pass 9", "there is no weapon play 9"),
    ("n", 1, "weapon life {seat0}", "you have no Weapon in your hand or your stockpile (your hand: empty; your "
                                    "stockpile: W)"),
    ("n", 0, "weapon steal {seat1} F", "{seat1}'s has no Food in {seat1}'s stockpile ({seat1}'s stockpile: W)"),
    ("n", 0, "weapon steal {seat2} all", "{seat2}'s stockpile is empty"),
    ("n", 0, "weapon beast {seat1}", "{seat1} has no Beast in front of them"),
    ("n", 0, "give zed W", "'zed' is not a player of this game"),
    ("n", 0, "give {seat0} F", "you cannot do that to yourself"),
    ("n", 0, "give {seat1} FF", "'FF' is not a card: cards are F (Food), W (Water), S (Shelter), X (Weapon), "
                                "B (Beast) and T (Trash), e.g. F,W or 2F"),
    ("n", 0, "offer {seat1} give=F", "send offer USER give=CARDS get=CARDS, e.g. offer bob give=F get=W"),
    ("n", 0, "dance", "'dance' is not a Survive command; send give USER CARDS | offer USER give=CARDS get=CARDS | "
                      "say TEXT | tell USER TEXT | weapon life USER | weapon steal USER CARDS|all | done "
                      "(CARDS: letters F W S X B T, e.g. F,W or 2F)"),
    ("n", 0, "done now", "send done alone"),
    ("n", 0, "undone", "you have no standing done vote"),
    ("n", 0, "say", "say what? e.g. say I have Water to spare"),
    ("s", 0, "search stock W", "you have no Water in your hand (your hand: F F S X T)"),
    ("s", 0, "search stock F discard F,F", "you have only 2 Food in your hand (your hand: F F S X T)"),
    ("s", 0, "search stock F stock F", "name 'stock' once: search [stock CARDS] [discard CARDS]"),
    ("s", 0, "", "send a move: search [stock CARDS] [discard CARDS] (CARDS: letters F W S X B T, e.g. F,W or 2F)"),
])
def test_errors_say_exactly_what_is_wrong(phase, seat, text, message):
    state = negotiating(3, hands=[["F", "F", "S", "X", "T"], [], []], stock=[[], ["W"], []], next_play=5)
    if phase == "s":
        state.phase = "search"
    assert error(state, seat, text) == message


def test_the_error_shows_the_hand_in_the_order_of_the_rules_example():
    state = negotiating(2, hands=[["F", "F", "S", "X", "T"], []])
    assert show_cards(["T", "X", "F", "S", "F"]) == "F F S X T"
    assert error(state, 0, "give {seat1} W") == "you have no Water in your hand (your hand: F F S X T)"


def test_check_never_raises_on_odd_text():
    state = negotiating(3, hands=[["X"], [], []])
    for text in ["\x00", "weapon", "weapon steal", "offer {seat9} give=F get=W", "accept 99999999999",
                 "tell {seat1}", "weapon counter -1", "give {seat1} 0F", "give {seat1} 999F", "{seat1}",
                 "offer {seat1} give=F get=W give=S", "search stock", "\udcff", "x" * 100_000]:
        assert isinstance(GAME.check(state, 0, text).error, str)


# --- storage and views ---------------------------------------------------------------------------


def test_serialise_restore_round_trips_mid_game():
    state = negotiating(3, hands=[["X", "F"], ["W"], []], stock=[["S"], [], ["T"]])
    act(state, 0, "offer {seat1} give=F get=W")
    act(state, 0, "weapon life {seat2}")
    act(state, 1, "tell {seat0} hi")
    data = json.loads(json.dumps(GAME.serialise(state)))
    again = GAME.restore(data)
    assert GAME.serialise(again) == data and again == state


def test_resample_hidden_keeps_each_view():
    state = negotiating(3, hands=[["X", "F"], ["W", "W"], ["T"]], stock=[["S"], [], ["T"]])
    act(state, 0, "offer {seat1} give=F get=W")
    for seat in (None, 0, 1, 2):
        other = GAME.resample_hidden(state, seat, random.Random(5))
        assert GAME.view(other, seat) == GAME.view(state, seat)
        assert census(other) == census(state)


BOARD_SEAT = """\
Survive, round 2: negotiation phase (deadline 3d from its start).
It ends when more than half of the living players are done and no weapon
play is pending.

Player  Lives  Hand  Beasts  Done   Stockpile
alice   3      2     0       done   S
bob     2      2     1       -      W
carol   out

Deck: 94 cards. Trash pile: 2 cards (1 S, 1 X).

Pending weapon plays (send pass N to let the newest of a chain go; each
window lasts 1d):
  1. alice: bob loses a life (passed: nobody yet)

Round 2:
  carol is out of the game; 1 card went to the trash.
  alice made offer 1 to bob.
  Weapon play 1: alice plays a Weapon (from the hand): bob loses a life.
  bob told alice: I have Water
  alice says: hello bob

Your hand (alice): F T  (F Food, T Trash)
Your offers this round:
  Offer 1: you offer bob F for bob's W (open)
"""

# the public reads the offer and the tell without what only their two players may see
BOARD_PUBLIC = (BOARD_SEAT.split("\nYour hand")[0].replace("alice made offer 1 to bob.", "alice made an offer.")
                .replace("bob told alice: I have Water", "bob sent a tell."))


def test_rendered_board_for_a_seat_and_for_the_public():
    state = negotiating(3, hands=[["X", "F", "T"], ["W", "W"], ["S"]], stock=[["S"], ["W"], []],
                        lives=[3, 2, 1], beasts=[0, 1, 0])
    state.deck = state.deck[:94]
    state.lives[2] = 0
    GAME.knock_out(state, 2)
    act(state, 0, "offer {seat1} give=F get=W")
    act(state, 0, "weapon life {seat1}")
    act(state, 1, "tell {seat0} I have Water")
    act(state, 0, "say hello {seat1}")
    act(state, 0, "done")
    seat_board = render_board(GAME, GAME.view(state, 0), NAMES[:3])
    public = render_board(GAME, GAME.view(state, None), NAMES[:3])
    assert seat_board == BOARD_SEAT
    assert public == BOARD_PUBLIC
    bobs = render_board(GAME, GAME.view(state, 1), NAMES[:3])
    assert "Your hand (bob): W W  (W Water)\n" in bobs and "alice)" not in bobs
    assert "  Offer 1: alice offers you F for your W (open)\n" in bobs
    assert "  bob told alice: I have Water\n" in bobs
    for board in (seat_board, public):
        assert all(line == line.rstrip() for line in board.splitlines())


# --- random games -----------------------------------------------------------------------------


def random_move(state: SurviveState, seat: int, rng: random.Random) -> str:
    """A plausible move text for `seat`, knowing only its own hand and public facts."""
    hand = state.hands[seat]
    others = [s for s in GAME.living(state) if s != seat] or [seat]
    who = f"{{seat{rng.choice(others)}}}"
    cards = lambda pile: ",".join(rng.sample(pile, rng.randint(1, len(pile)))) if pile else "F"  # noqa: E731
    if state.phase == "search":
        usable = [c for c in hand if c != "B"]
        if rng.random() < 0.5:  # the sensible order: keep resources, drop trash
            stock, discard = [c for c in usable if c in "FWS"], [c for c in usable if c == "T"]
            return "search" + (f" stock {','.join(stock)}" if stock else "") + \
                   (f" discard {','.join(discard)}" if discard else "")
        rng.shuffle(usable)
        k = rng.randint(0, len(usable))
        stock, discard = usable[:k][: rng.randint(0, k)], usable[k:][: rng.randint(0, len(usable) - k)]
        return "search" + (f" stock {','.join(stock)}" if stock else "") + \
               (f" discard {','.join(discard)}" if discard else "")
    pending = [p["n"] for p in state.plays]
    choices = ["done", "done", "done", "undone", f"give {who} {cards(hand)}", f"say hi {who}",
               f"tell {who} psst", f"offer {who} give={cards(hand)} get={rng.choice('FWS')}",
               f"weapon life {who}", f"weapon steal {who} all", f"weapon beast {who}",
               f"accept {rng.randint(1, state.next_offer)}", f"reject {rng.randint(1, state.next_offer)}"]
    if pending:
        choices += [f"pass {rng.choice(pending)}"] * 4 + [f"weapon counter {rng.choice(pending)}"]
    return rng.choice(choices)


def random_game(players: int, seed: int, bound: int = 3000):
    """Play a random game with deadlines firing; yield the state after every action."""
    rng = random.Random(seed)
    chance = json.loads(json.dumps(GAME.initial_chance(players, PARAMS, rng)))
    state = GAME.setup(players, PARAMS, chance)
    yield state
    for _ in range(bound):
        if GAME.result(state) is not None:
            return
        if rng.random() < 0.05:
            timers = GAME.timers(state)
            GAME.timeout(state, rng.choice(sorted(timers)))
        elif rng.random() < 0.01:
            GAME.resign(state, rng.choice(sorted(GAME.to_act(state))))
        else:
            seat = rng.choice(sorted(GAME.to_act(state)))
            verdict = GAME.check(state, seat, random_move(state, seat, rng))
            if not verdict.ok:
                continue
            GAME.apply(state, seat, verdict.move, json.loads(json.dumps(GAME.draw(state, seat, verdict.move, rng))))
        yield state
    raise AssertionError(f"a {players}-player game with seed {seed} did not end in {bound} steps")


@settings(max_examples=25, deadline=None)
@given(players=st.integers(2, 7), seed=st.integers(0, 10**6))
def test_random_games_account_for_every_card_never_raise_lives_and_end(players, seed):
    lives = None
    for state in random_game(players, seed):
        assert census(state) == Counter(COUNTS)
        assert all(len(h) <= 5 and "B" not in h for h in state.hands) or state.round == 1
        assert all(c != "B" for pile in state.stock for c in pile)
        if lives is not None:
            assert all(now <= before for now, before in zip(state.lives, lives))
        lives = list(state.lives)
        assert (GAME.result(state) is None) == bool(GAME.to_act(state))
    assert GAME.result(state) is not None


def test_random_game_replays_exactly_from_its_log_and_views_hide_hands():
    rng = random.Random(9)
    chance = json.loads(json.dumps(GAME.initial_chance(4, PARAMS, rng)))
    state, log = GAME.setup(4, PARAMS, chance), []
    steps = 0
    while GAME.result(state) is None and steps < 3000:
        steps += 1
        if rng.random() < 0.12:
            name = sorted(GAME.timers(state))[0]
            GAME.timeout(state, name)
            log.append(("timeout", -1, name, None))
        else:
            seat = rng.choice(sorted(GAME.to_act(state)))
            verdict = GAME.check(state, seat, random_move(state, seat, rng))
            if not verdict.ok:
                continue
            chance_ = json.loads(json.dumps(GAME.draw(state, seat, verdict.move, rng)))
            GAME.apply(state, seat, verdict.move, chance_)
            log.append(("move", seat, verdict.move, chance_))
        if steps % 25 == 0:
            for seat in (None, 0, 1, 2, 3):
                assert GAME.view(GAME.resample_hidden(state, seat, rng), seat) == GAME.view(state, seat)
    assert GAME.result(state) is not None
    again = GAME.setup(4, PARAMS, chance)
    for kind, seat, move, chance_ in log:
        GAME.timeout(again, move) if kind == "timeout" else GAME.apply(again, seat, move, chance_)
    assert GAME.serialise(again) == GAME.serialise(state)


# --- whole games by mail -------------------------------------------------------------------------


class MailGame:
    """A Survive game on the real server, with every reply kept beside the state the
    game was in when it was sent."""

    def __init__(self, server, players: list[str], seed: int):
        self.server, self.players, self.rng = server, players, random.Random(seed)
        self.mails: list[tuple[list[str], str, dict]] = []  # (to, text, serialised state)
        self.tells: list[tuple[str, int, int]] = []
        server.signup(*players)
        first = players[0]
        self.keep(server.send(f"{first}@example.org",
                              f"survive challenge {first} {first}-pw {' '.join(players[1:])} -deadline=1d -window=3h"))

    def record(self) -> GameRecord:
        with self.server.sessions() as session:
            record = session.scalar(select(GameRecord).where(GameRecord.game_type == "survive"))
            session.expunge(record)
            return record

    def keep(self, replies) -> None:
        record = self.record()
        for reply in replies:
            self.mails.append((reply.to, reply.text, record.state))

    def fire_next_deadline(self) -> None:
        record = self.record()
        self.server.clock = max(self.server.clock, record.due_at)
        before = len(self.server.transport.delivered)
        assert run_due(self.server.sessions, self.server.config, self.server.clock) >= 1
        deliver_queued(self.server.sessions, self.server.transport, self.server.clock)
        import email
        import email.policy
        from conftest import Reply
        for to, raw in self.server.transport.delivered[before:]:
            message = email.message_from_bytes(raw, policy=email.policy.default)
            reply = Reply(to, message["Subject"], plain(message), message)
            assert "Deadline passed: " in reply.text
            self.mails.append((reply.to, reply.text, self.record().state))

    def play(self, bound: int = 1500) -> str:
        for _ in range(bound):
            record = self.record()
            if record.status != "active":
                return record.result
            state = GAME.restore(record.state)
            if self.rng.random() < 0.06:
                self.fire_next_deadline()
                continue
            seat = self.rng.choice(sorted(GAME.to_act(state)))
            if state.phase == "search" and state.orders[seat] is not None and self.rng.random() < 0.7:
                continue
            move = random_move(state, seat, self.rng)
            if move.startswith("tell"):
                token = f"secret{len(self.tells)}x{self.rng.randint(0, 10**6)}"
                target = int(re.search(r"\d+", move)[0])
                self.tells.append((token, seat, target))
                move = f"tell {{seat{target}}} {token}"
            move = re.sub(r"\{seat(\d)\}", lambda m: self.players[int(m[1])], move)
            user = self.players[seat]
            self.keep(self.server.send(f"{user}@example.org", f"survive move 101 {user} {user}-pw {move}"))
        raise AssertionError("the game by mail did not end")

    def assert_no_leaks(self) -> None:
        addresses = {f"{p}@example.org": seat for seat, p in enumerate(self.players)}
        boards = 0
        for to, text, data in self.mails:
            (reader,) = {addresses[a] for a in to}
            state = GAME.restore(data)
            for seat, userid in enumerate(self.players):
                line = f"Your hand ({userid}):"
                if seat != reader:
                    assert line not in text
                elif "Summary of Survive Board 101" in text and text.count(line):
                    boards += 1
                    own = f"{line} {show_cards(state.hands[seat])}"
                    assert [x for x in text.splitlines() if x == own or x.startswith(own + "  (")], (own, text)
            for number, mine, theirs in re.findall(r"Offer (\d+): (?:you offer (\S+)|(\S+) offers you)", text):
                offer = next(o for o in state.offers if o["n"] == int(number))
                parties = (offer["from"], offer["to"]) if mine else (offer["to"], offer["from"])
                assert parties == (reader, self.players.index(mine or theirs)), (number, text)
            for token, teller, target in self.tells:
                if token in text:
                    assert reader in (teller, target), token
        assert boards > 0
        told = [token for token, _, _ in self.tells]
        if told:  # the target of a tell reads it
            assert any(told[0] in text for _, text, _ in self.mails)


@pytest.mark.parametrize("players, seed", [(3, 1), (7, 2)])
def test_whole_games_by_mail_end_and_leak_no_hand(server, players, seed):
    game = MailGame(server, NAMES[:players], seed)
    result = game.play()
    assert result == "Game over: nobody won." or re.fullmatch(r"Game won by \w+\.", result), result
    last = game.mails[-1][1]
    assert result in last
    game.assert_no_leaks()
    assert any("Deadline passed: round " in text for _, text, _ in game.mails)
    assert any("Deadline passed: weapon play " in text for _, text, _ in game.mails)
