"""Survive: The Card Game, played by mail (shared/rules/survive.md).

Hidden hands, a shared deck and free negotiation. Every player acts at the same time:
sealed search orders in the search phase, then gives, offers, table talk and weapon
plays in the negotiation phase. Weapon plays open response windows; phases and
windows end by deadlines (named timers) or early when everyone has answered.

Chance: the deal is the initial chance; every reshuffle of the trash pile uses one of a
reserve of random keys kept in the (hidden) state, drawn by the server with the
game's seeded RNG at set-up and topped up by the chance of later moves, so that
reshuffles caused by deadlines (which log no chance) still replay exactly.
"""

from __future__ import annotations

import copy
import hashlib
import re
import textwrap
from dataclasses import dataclass, field
from typing import Any, ClassVar

from . import register
from .base import DurationParam, Game, Outcome, Param, PlayerParam, State, Verdict, either, echoed

ORDER = "FWSXBT"
NAMES = {"F": "Food", "W": "Water", "S": "Shelter", "X": "Weapon", "B": "Beast", "T": "Trash"}
COUNTS = {"F": 20, "W": 20, "S": 20, "X": 10, "B": 10, "T": 20}
RESOURCES = "FWS"
LIVES = 3
HAND = 5
RESERVE = 32  # reshuffle keys kept in hand: far more than can be used between two moves
MAX_TEXT = 500
MISSES = 3  # search deadlines missed in a row before the server resigns a player
SEARCH_PHASE = "search"
TALK_PHASE = "negotiation"
OVER = "over"
NEGOTIATION_ONLY = ("it is the search phase: negotiation commands are taken once every search order "
                    "is carried out")
CARD_HELP = "cards are F (Food), W (Water), S (Shelter), X (Weapon), B (Beast) and T (Trash), e.g. F,W or 2F"
CARDS_NOTE = "(CARDS: letters F W S X B T, e.g. F,W or 2F)"
SEAT = re.compile(r"\{seat(\d+)\}")


@dataclass
class SurviveState(State):
    players: int = 0
    deadline: int = 72 * 3600
    window: int = 24 * 3600
    deck: list[str] = field(default_factory=list)  # index 0 is the top
    trash: list[str] = field(default_factory=list)
    keys: list[int] = field(default_factory=list)  # reshuffle keys (hidden)
    hands: list[list[str]] = field(default_factory=list)  # kept sorted
    stock: list[list[str]] = field(default_factory=list)  # kept sorted
    beasts: list[int] = field(default_factory=list)
    lives: list[int] = field(default_factory=list)
    first: int = 0  # round 1's first searcher; breaks ties later
    last_ate: list[int] = field(default_factory=list)  # round of the last Food paid (0: never)
    round: int = 1
    phase: str = SEARCH_PHASE
    orders: list[Any] = field(default_factory=list)  # per seat None or [stock, discard]
    missed: list[int] = field(default_factory=list)
    done: list[bool] = field(default_factory=list)
    offers: list[dict[str, Any]] = field(default_factory=list)  # this round's offers
    plays: list[dict[str, Any]] = field(default_factory=list)  # pending weapon plays
    next_offer: int = 1
    next_play: int = 1
    # [round, text with {seatN}], or [round, text, seats, others] for an entry only
    # `seats` may read (a tell, an offer), the others reading `others` (None: nothing)
    log: list[list[Any]] = field(default_factory=list)


# --- cards --------------------------------------------------------------------------

def sort_cards(cards: list[str]) -> list[str]:
    return sorted(cards, key=ORDER.index)


def show_cards(cards: list[str]) -> str:
    return " ".join(sort_cards(cards)) if cards else "empty"


def card_list(cards: list[str]) -> str:
    """Canonical CARDS text: F,F,W."""
    return ",".join(sort_cards(cards))


def named(cards: list[str]) -> str:
    """'2 Food and 1 Water'."""
    parts = [f"{cards.count(c)} {NAMES[c]}" for c in ORDER if c in cards]
    if not parts:
        return "nothing"
    return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"


def parse_cards(text: str) -> tuple[list[str] | None, str | None]:
    tokens = [t for t in re.split(r"[\s,]+", text.strip()) if t]
    if not tokens:
        return None, f"name at least one card: {CARD_HELP}"
    cards: list[str] = []
    for token in tokens:
        match = re.fullmatch(r"(\d{1,3})?([A-Za-z])", token)
        if match is None or match[2].upper() not in ORDER:
            return None, f"'{echoed(token)}' is not a card: {CARD_HELP}"
        count = int(match[1]) if match[1] else 1
        if not 1 <= count <= 100:
            return None, f"'{echoed(token)}' is not a number of cards: {CARD_HELP}"
        cards += [match[2].upper()] * count
    return sort_cards(cards), None


def missing(cards: list[str], pile: list[str], where: str, owner: str = "your") -> str | None:
    """The error if `pile` lacks any of `cards`, showing the pile."""
    for card in ORDER:
        need, have = cards.count(card), pile.count(card)
        if need > have:
            what = f"no {NAMES[card]}" if have == 0 else f"only {have} {NAMES[card]}"
            subject = "you have" if owner == "your" else f"{owner} has"
            return f"{subject} {what} in {owner} {where} ({owner} {where}: {show_cards(pile)})"
    return None


def take(pile: list[str], cards: list[str]) -> None:
    for card in cards:
        pile.remove(card)




def numbered(forms: list[str], numbers: list[int]) -> list[str]:
    """Move forms ending in a number letter (`accept N`) for the numbers they may take
    now: none, the number itself when there is one (`accept 3`), else the letter with
    the choice (`accept N (N: 3 or 5)` on the last form)."""
    if not numbers:
        return []
    if len(numbers) == 1:
        return [form[:-1] + str(numbers[0]) for form in forms]
    letter = forms[-1][-1]
    return forms[:-1] + [f"{forms[-1]} ({letter}: {either([str(n) for n in numbers])})"]


def may_read(entry: list[Any], seat: int | None) -> bool:
    """Whether `seat` (None: the public) may read a log entry's own text."""
    return len(entry) == 2 or seat in entry[2]


def seen_by(entry: list[Any], seat: int | None) -> list[Any] | None:
    """A log entry as `seat` may read it: [round, text], or None."""
    if may_read(entry, seat):
        return entry[:2]
    return None if entry[3] is None else [entry[0], entry[3]]


def _clean_text(text: str) -> str:
    return " ".join("".join(c if c.isprintable() else " " for c in text).split())


def _plural(n: int, word: str) -> str:
    if n == 1:
        return f"{n} {word}"
    return f"{n} lives" if word == "life" else f"{n} {word}s"


HELP = [
    "Survive is a card game of hidden hands, a shared deck and free negotiation for 2 "
    "to 7 players (3 to 7 as published; 2 for practice). Each round every player must "
    "pay one Food, one Water and one Shelter or lose a life for each one missing. The "
    "last player with lives left wins; if all the remaining players go out in the same "
    "round, nobody wins.",
    "The deck has 100 cards: 20 Food (F), 20 Water (W), 20 Shelter (S), 10 Weapon (X), "
    "10 Beast (B) and 20 Trash (T). Everyone starts with 3 lives and 5 cards dealt from "
    "the shuffled deck. Your hand is secret; your stockpile and the beasts in front of "
    "you are public, as is the trash pile. When the deck runs out the trash pile is "
    "shuffled into a new deck. Cards in a stockpile never go back to a hand. Beasts never "
    "stay in a hand and never enter a stockpile.",
    "SEARCH PHASE. Every living player sends one sealed order: search [stock CARDS] "
    "[discard CARDS] (plain 'search' just draws). A new order replaces your earlier one. "
    "When all orders are in, or at the phase deadline (a missing order counts as plain "
    "search), they are carried out one player at a time: first whoever has gone longest "
    "without paying Food (in round 1, and to break ties, a random first player or the "
    "one named by -first), then the others in seat order. Carrying out an order: in "
    "round 1 the Beasts of the dealt hand are discarded; the stocked cards go to your "
    "stockpile; the discarded ones to the trash pile; then you draw 5 minus your hand "
    "size. A Beast drawn goes face up in front of you and is not replaced. Missing your "
    "order at three search deadlines in a row resigns you.",
    "NEGOTIATION PHASE. Everyone acts at once, in any order:",
    "  give USER CARDS       hand cards to USER's stockpile (public)\n"
    "  offer USER give=CARDS get=CARDS\n"
    "                        propose a swap of hand cards; only the two of\n"
    "                        you see it, as offer number N\n"
    "  accept N / reject N   answer an offer to you; on accept the swap\n"
    "                        happens if both still hold the cards, received\n"
    "                        cards go to stockpiles, and it becomes public\n"
    "  withdraw N            take back your own offer\n"
    "  say TEXT              talk to the table\n"
    "  tell USER TEXT        talk to one player only\n"
    "  weapon beast USER     remove a Beast in front of USER (or yourself)\n"
    "  weapon life USER      USER loses a life\n"
    "  weapon steal USER CARDS|all\n"
    "                        take cards from USER's stockpile into yours\n"
    "  weapon counter K      cancel weapon play K\n"
    "  pass K                let weapon play K go\n"
    "  done / undone         vote that you have finished negotiating",
    "A Weapon comes from your hand, or from your stockpile if your hand has none, and "
    "goes to the trash whatever happens. Each weapon play gets a number and opens a "
    "response window (-window, 24h by default) that closes early once every other "
    "living player has sent 'pass K'. A counter is itself a weapon play and can be "
    "countered. When the window of the newest play of a chain closes, the chain "
    "resolves newest first: a play takes effect unless a counter against it does. "
    "Targets are checked then, and a play does what it still can (a steal of F,F from "
    "a stockpile now holding one F takes one).",
    "The phase ends when more than half of the living players have a standing 'done' "
    "and no weapon play is pending, or at the phase deadline (silent players count as "
    "done, open windows close as passed). Open offers lapse.",
    "END OF ROUND. Each living player pays one Food, one Water and one Shelter, from "
    "the stockpile first, then from the hand, and loses a life for each one missing. "
    "Then they lose a life for each Beast in front of them, and the Beasts go to the "
    "trash. A player with no lives left (then, or when a weapon takes the last one) is "
    "out and their cards go to the trash; they may still say and tell. You may resign "
    "at any time.",
    "CARDS are card letters F W S X B T, in any case, separated by commas or spaces; "
    "2F means two Food. Each phase has a deadline (-deadline, 72h by default) counted "
    "from its start. Examples: 'search stock F,W discard T', 'give bob W', "
    "'offer bob give=F get=W', 'weapon steal carol F,F', 'pass 4', 'done'.",
]


def _help() -> str:
    out = []
    for paragraph in HELP:
        out.append(paragraph if paragraph.startswith("  ") else textwrap.fill(paragraph, 70))
    return "\n\n".join(out) + "\n"


class Survive(Game):
    name: ClassVar[str] = "survive"
    title: ClassVar[str] = "Survive"
    min_players: ClassVar[int] = 2
    max_players: ClassVar[int] = 7
    names_in_moves: ClassVar[bool] = True
    own_deadlines: ClassVar[bool] = True
    has_chance: ClassVar[bool] = True
    hidden_information: ClassVar[bool] = True
    move_table: ClassVar[bool] = False  # its round log (in the drawing) says who did what
    params: ClassVar[tuple[Param, ...]] = (
        DurationParam("deadline", 72 * 3600, 3600, 30 * 86400, "time for each phase, from its start"),
        DurationParam("window", 24 * 3600, 600, 7 * 86400, "time to answer a weapon play"),
        PlayerParam("first", -1, -1, -1, "the first player to search in round 1 (random if not given)"),
    )
    move_syntax: ClassVar[str] = (
        "search [stock CARDS] [discard CARDS] | give USER CARDS | offer USER give=CARDS get=CARDS | "
        "accept N | reject N | withdraw N | say TEXT | tell USER TEXT | "
        "weapon beast USER | weapon life USER | weapon steal USER CARDS|all | weapon counter K | "
        f"pass K | done | undone {CARDS_NOTE}")
    summary: ClassVar[str] = "Survive the nuclear winter: pay Food, Water and Shelter each round; trade, lie, fight"
    help_text: ClassVar[str] = _help()
    template: ClassVar[str] = "survive.txt"

    # --- set-up -------------------------------------------------------------------
    def initial_chance(self, players: int, params: dict[str, int], rng) -> Any:
        deck = [card for card in ORDER for _ in range(COUNTS[card])]
        rng.shuffle(deck)
        return {"deck": deck, "first": rng.randrange(players),
                "keys": [rng.getrandbits(63) for _ in range(RESERVE)]}

    def setup(self, players: int, params: dict[str, int], chance: Any) -> SurviveState:
        values = {p.name: p.default for p in self.params} | dict(params)
        if chance is None:
            chance = {"deck": [card for card in ORDER for _ in range(COUNTS[card])], "first": 0, "keys": []}
        deck = list(chance["deck"])
        first = values["first"] if 0 <= values["first"] < players else chance["first"]
        hands = [sort_cards(deck[HAND * s:HAND * (s + 1)]) for s in range(players)]
        return SurviveState(
            players=players, deadline=values["deadline"], window=values["window"],
            deck=deck[HAND * players:], keys=list(chance["keys"]), hands=hands,
            stock=[[] for _ in range(players)], beasts=[0] * players, lives=[LIVES] * players,
            first=first, last_ate=[0] * players, orders=[None] * players, missed=[0] * players,
            done=[False] * players,
        )

    # --- who is where ---------------------------------------------------------------
    @staticmethod
    def living(state: SurviveState) -> list[int]:
        return [s for s in range(state.players) if state.lives[s] > 0 and s not in state.resigned]

    def is_alive(self, state: SurviveState, seat: int) -> bool:
        return 0 <= seat < state.players and state.lives[seat] > 0 and seat not in state.resigned

    def to_act(self, state: SurviveState) -> frozenset[int]:
        if self.result(state) is not None:
            return frozenset()
        acting = set(self.living(state))
        if state.phase == TALK_PHASE:  # players who are out (resigned too) may still talk
            acting |= set(range(state.players))
        return frozenset(acting)

    def waiting_for(self, state: SurviveState) -> frozenset[int]:
        """The seats the board waits for, a narrower set than `to_act` (who may send
        something): in the search phase the living players whose order is not in; in
        the negotiation phase those with no standing done, and those who have yet to
        pass on the newest play of a pending weapon chain. Players who are out may
        talk, but nothing waits for them."""
        if self.result(state) is not None:
            return frozenset()
        left = self.living(state)
        if state.phase == SEARCH_PHASE:
            return frozenset(s for s in left if state.orders[s] is None)
        waiting = {s for s in left if not state.done[s]}
        for chain in self.chains(state):
            waiting |= {s for s in left if s != chain[0]["seat"] and s not in chain[0]["passes"]}
        return frozenset(waiting)

    def syntax_now(self, state: SurviveState, seat: int) -> str:
        """The moves `seat` may send now, in the form of `move_syntax`: the search
        order in the search phase; in the negotiation phase only the commands that
        can be legal (accept, reject, withdraw and pass with the numbers they may
        take, weapon plays only with a Weapon at hand)."""
        if self.result(state) is not None:
            return "nothing: the game is over"
        if not self.is_alive(state, seat):
            if state.phase == TALK_PHASE:
                return "say TEXT | tell USER TEXT"
            return "nothing in the search phase (players who are out may say and tell in the negotiation phase)"
        if state.phase == SEARCH_PHASE:
            return f"search [stock CARDS] [discard CARDS] {CARDS_NOTE}"
        open_ = [o for o in state.offers if o["status"] == "open"]
        to_me = [o["n"] for o in open_ if o["to"] == seat]
        by_me = [o["n"] for o in open_ if o["from"] == seat]
        passable = [c[0]["n"] for c in self.chains(state) if c[0]["seat"] != seat and seat not in c[0]["passes"]]
        forms = ["give USER CARDS", "offer USER give=CARDS get=CARDS"] if state.hands[seat] else []
        forms += numbered(["accept N", "reject N"], to_me) + numbered(["withdraw N"], by_me)
        forms += ["say TEXT", "tell USER TEXT"]
        if "X" in state.hands[seat] + state.stock[seat]:
            left = self.living(state)
            if any(state.beasts[s] for s in left):
                forms.append("weapon beast USER")
            forms.append("weapon life USER")
            if any(state.stock[s] for s in left if s != seat):
                forms.append("weapon steal USER CARDS|all")
            forms += numbered(["weapon counter K"], [p["n"] for p in state.plays])
        forms += numbered(["pass K"], passable)
        forms.append("undone" if state.done[seat] else "done")
        syntax = " | ".join(forms)
        return f"{syntax} {CARDS_NOTE}" if "CARDS" in syntax else syntax

    def idle_reason(self, state: SurviveState, seat: int) -> tuple[str, str]:
        """Why `seat`, not in `to_act`, can send nothing now, and what to do instead:
        said by phase, for Survive has no turns."""
        if not self.is_alive(state, seat) and state.phase == SEARCH_PHASE:
            return (f"{{seat{seat}}} is out of the game: nothing to do in the search phase.",
                    "Players who are out may still say and tell in the negotiation phase.")
        return (f"{{seat{seat}}} has nothing to do in this phase.",
                "Wait for the board mail that starts the next phase.")

    def result(self, state: SurviveState) -> Outcome | None:
        left = self.living(state)
        if state.phase != OVER and len(left) > 1:
            return None
        return Outcome(winners=(left[0],)) if len(left) == 1 else Outcome()

    def search_order(self, state: SurviveState) -> list[int]:
        """The living seats in search order: the longest without eating first (ties to
        the first met going left from round 1's first player), then to the left."""
        left = self.living(state)
        if not left:
            return []
        ring = [(state.first + i) % state.players for i in range(state.players)]
        ring = [s for s in ring if s in left]
        if state.round == 1:
            start = ring[0]
        else:
            hungriest = min(state.last_ate[s] for s in left)
            start = next(s for s in ring if state.last_ate[s] == hungriest)
        return [(start + i) % state.players for i in range(state.players)
                if (start + i) % state.players in left]

    # --- parsing --------------------------------------------------------------------
    def _seat(self, state: SurviveState, word: str) -> tuple[int | None, str | None]:
        match = SEAT.fullmatch(word)
        if match is None or int(match[1]) >= state.players:
            return None, f"'{echoed(word)}' is not a player of this game"
        return int(match[1]), None

    def _target(self, state: SurviveState, seat: int, word: str, *, self_ok: bool) -> tuple[int | None, str | None]:
        target, error = self._seat(state, word)
        if error:
            return None, error
        if target == seat and not self_ok:
            return None, "you cannot do that to yourself"
        if not self.is_alive(state, target):
            return None, f"{{seat{target}}} is out of the game"
        return target, None

    def parse(self, state: SurviveState, seat: int, text: str) -> tuple[dict[str, Any] | None, str | None]:
        """The move as data, or the error for the player."""
        if not isinstance(text, str):
            return None, "send a move"
        words = text.split()
        if self.result(state) is not None:
            return None, "the game is over"
        if not 0 <= seat < state.players:
            return None, "you are not a player of this game"
        if not words:
            return None, f"send a move: {self.syntax_now(state, seat)}"
        verb, rest = words[0].lower(), words[1:]
        talk = verb in ("say", "tell")  # by every player, those who are out too
        if not self.is_alive(state, seat) and not talk:
            return None, "you are out of the game: you may still say and tell"
        handlers = {"search": self._p_search, "give": self._p_give, "offer": self._p_offer,
                    "accept": self._p_answer, "reject": self._p_answer, "withdraw": self._p_answer,
                    "say": self._p_say, "tell": self._p_tell, "weapon": self._p_weapon, "pass": self._p_pass,
                    "done": self._p_vote, "undone": self._p_vote}
        handler = handlers.get(verb)
        if handler is None:
            return None, f"'{echoed(words[0])}' is not a Survive command; send {self.syntax_now(state, seat)}"
        if verb == "search":
            if state.phase != SEARCH_PHASE:
                return None, ("it is the negotiation phase: search orders are taken in the search phase of "
                              "the next round")
        elif state.phase != TALK_PHASE:
            return None, NEGOTIATION_ONLY
        return handler(state, seat, verb, rest, text)

    def _p_search(self, state, seat, verb, rest, text):
        parts: dict[str, list[str]] = {}
        key = None
        chunks: dict[str, list[str]] = {}
        for word in rest:
            if word.lower() in ("stock", "discard"):
                key = word.lower()
                if key in chunks:
                    return None, f"name '{key}' once: search [stock CARDS] [discard CARDS]"
                chunks[key] = []
            elif key is None:
                return None, f"'{echoed(word)}' is not understood: send search [stock CARDS] [discard CARDS]"
            else:
                chunks[key].append(word)
        for key, words in chunks.items():
            cards, error = parse_cards(" ".join(words))
            if error:
                return None, f"{key}: {error}"
            parts[key] = cards
        stock, discard = parts.get("stock", []), parts.get("discard", [])
        if "B" in stock + discard:
            return None, ("a Beast cannot be stocked or discarded (Beasts dealt to you are discarded before "
                          "the round 1 draw; Beasts drawn go in front of you)")
        hand = [c for c in state.hands[seat] if not (state.round == 1 and c == "B")]
        error = missing(stock + discard, hand, "hand")
        if error:
            return None, error
        canonical = "search" + (f" stock {card_list(stock)}" if stock else "") + \
                    (f" discard {card_list(discard)}" if discard else "")
        return {"verb": "search", "stock": stock, "discard": discard, "move": canonical}, None

    def _p_give(self, state, seat, verb, rest, text):
        if len(rest) < 2:
            return None, "send give USER CARDS, e.g. give bob W"
        target, error = self._target(state, seat, rest[0], self_ok=False)
        if error:
            return None, error
        cards, error = parse_cards(" ".join(rest[1:]))
        if error:
            return None, error
        if "B" in cards:
            return None, "a Beast cannot be given, offered or stolen"
        error = missing(cards, state.hands[seat], "hand")
        if error:
            return None, error
        return {"verb": "give", "target": target, "cards": cards,
                "move": f"give {{seat{target}}} {card_list(cards)}"}, None

    def _p_offer(self, state, seat, verb, rest, text):
        usage = "send offer USER give=CARDS get=CARDS, e.g. offer bob give=F get=W"
        if len(rest) < 2:
            return None, usage
        target, error = self._target(state, seat, rest[0], self_ok=False)
        if error:
            return None, error
        pieces = re.split(r"\b(give|get)\s*=", " ".join(rest[1:]), flags=re.IGNORECASE)
        if pieces[0].strip() or len(pieces) != 5:
            return None, usage
        sides: dict[str, list[str]] = {}
        for label, body in zip(pieces[1::2], pieces[2::2]):
            label = label.lower()
            if label in sides:
                return None, usage
            cards, error = parse_cards(body)
            if error:
                return None, f"{label}=: {error}"
            sides[label] = cards
        if "B" in sides["give"] + sides["get"]:
            return None, "a Beast cannot be given, offered or stolen"
        error = missing(sides["give"], state.hands[seat], "hand")
        if error:
            return None, error
        return {"verb": "offer", "target": target, "give": sides["give"], "get": sides["get"],
                "move": f"offer {{seat{target}}} give={card_list(sides['give'])} get={card_list(sides['get'])}"}, None

    def _p_answer(self, state, seat, verb, rest, text):
        usage = f"send {verb} N, the number of the offer"
        if not rest or not rest[0].isdecimal() or len(rest[0]) > 6:
            return None, usage
        number = int(rest[0])
        offer = next((o for o in state.offers if o["n"] == number), None)
        mine = "to" if verb in ("accept", "reject") else "from"
        if offer is None or offer[mine] != seat:
            made = "made to you" if mine == "to" else "made by you"
            return None, f"there is no offer {number} {made} this round"
        other = offer["from"] if mine == "to" else offer["to"]
        link = "from" if mine == "to" else "to"
        if len(rest) > 1 and " ".join(rest[1:]) != f"{link} {{seat{other}}}":
            return None, usage
        if offer["status"] != "open":
            return None, f"offer {number} is no longer open (it was {offer['status']})"
        if verb == "accept":
            error = missing(offer["get"], state.hands[seat], "hand")
            if error:
                return None, error
        return {"verb": verb, "offer": offer, "move": f"{verb} {number} {link} {{seat{other}}}"}, None

    def _p_say(self, state, seat, verb, rest, text):
        body = _clean_text(text.split(None, 1)[1] if len(text.split(None, 1)) > 1 else "")
        if not body:
            return None, "say what? e.g. say I have Water to spare"
        if len(body) > MAX_TEXT:
            return None, f"say at most {MAX_TEXT} characters (this has {len(body)})"
        return {"verb": "say", "text": body, "move": f"say {body}"}, None

    def _p_tell(self, state, seat, verb, rest, text):
        if len(rest) < 2:
            return None, "send tell USER TEXT"
        target, error = self._seat(state, rest[0])
        if error:
            return None, error
        if target == seat:
            return None, "you cannot tell yourself"
        body = _clean_text(text.split(None, 2)[2])
        if len(body) > MAX_TEXT:
            return None, f"tell at most {MAX_TEXT} characters (this has {len(body)})"
        return {"verb": "tell", "target": target, "text": body, "move": f"tell {{seat{target}}} {body}"}, None

    def _p_vote(self, state, seat, verb, rest, text):
        if rest:
            return None, f"send {verb} alone"
        if verb == "done" and state.done[seat]:
            return None, "your done vote already stands (send undone to take it back)"
        if verb == "undone" and not state.done[seat]:
            return None, "you have no standing done vote"
        return {"verb": verb, "move": verb}, None

    def _pending(self, state: SurviveState, word: str) -> tuple[dict | None, str | None]:
        if not word.isdecimal() or len(word) > 6:
            return None, f"'{echoed(word)}' is not a weapon play number"
        number = int(word)
        play = next((p for p in state.plays if p["n"] == number), None)
        if play is None:
            if 1 <= number < state.next_play:
                return None, f"weapon play {number} is no longer pending"
            return None, f"there is no weapon play {number}"
        return play, None

    def _p_pass(self, state, seat, verb, rest, text):
        if len(rest) != 1:
            return None, "send pass K, the number of a pending weapon play"
        play, error = self._pending(state, rest[0])
        if error:
            return None, error
        if play["seat"] == seat:
            return None, f"weapon play {play['n']} is yours: the others pass on it"
        newest = self.newest(state, play)
        if newest["n"] != play["n"]:
            return None, (f"weapon play {play['n']} has been answered by weapon play {newest['n']}: "
                          f"send pass {newest['n']}")
        if seat in play["passes"]:
            return None, f"you have already passed on weapon play {play['n']}"
        return {"verb": "pass", "play": play["n"], "move": f"pass {play['n']}"}, None

    def _p_weapon(self, state, seat, verb, rest, text):
        usage = "send weapon beast USER, weapon life USER, weapon steal USER CARDS|all or weapon counter K"
        if len(rest) < 2:
            return None, usage
        kind = rest[0].lower()
        if kind not in ("beast", "life", "steal", "counter"):
            return None, usage
        if "X" not in state.hands[seat] and "X" not in state.stock[seat]:
            return None, (f"you have no Weapon in your hand or your stockpile (your hand: "
                          f"{show_cards(state.hands[seat])}; your stockpile: {show_cards(state.stock[seat])})")
        data: dict[str, Any] = {"verb": "weapon", "kind": kind, "cards": None}
        if kind == "counter":
            if len(rest) != 2:
                return None, usage
            play, error = self._pending(state, rest[1])
            if error:
                return None, error
            data["target"] = play["n"]
            data["move"] = f"weapon counter {play['n']}"
            return data, None
        target, error = self._target(state, seat, rest[1], self_ok=kind != "steal")
        if error:
            return None, error
        data["target"] = target
        if kind in ("beast", "life"):
            if len(rest) != 2:
                return None, usage
            if kind == "beast" and state.beasts[target] == 0:
                who = "you have" if target == seat else f"{{seat{target}}} has"
                return None, f"{who} no Beast in front of {'you' if target == seat else 'them'}"
            data["move"] = f"weapon {kind} {{seat{target}}}"
            return data, None
        words = rest[2:]
        pile = state.stock[target]
        if len(words) == 1 and words[0].lower() == "all":
            if not pile:
                return None, f"{{seat{target}}}'s stockpile is empty"
            data["move"] = f"weapon steal {{seat{target}}} all"
            return data, None
        cards, error = parse_cards(" ".join(words))
        if error:
            return None, f"{error}, or all"
        if "B" in cards:
            return None, "a Beast cannot be given, offered or stolen"
        error = missing(cards, pile, "stockpile", owner=f"{{seat{target}}}'s")
        if error:
            return None, error
        data["cards"] = cards
        data["move"] = f"weapon steal {{seat{target}}} {card_list(cards)}"
        return data, None

    def check(self, state: SurviveState, seat: int, text: str) -> Verdict:
        try:
            data, error = self.parse(state, seat, text)
        except Exception as exc:  # noqa: BLE001 - check never raises, whatever the text
            return Verdict(error=f"that move could not be read ({exc.__class__.__name__})")
        if error:
            return Verdict(error=error)
        return Verdict(move=data["move"])

    # --- chance ---------------------------------------------------------------------
    def draw(self, state: SurviveState, seat: int, move: str, rng) -> Any:
        if len(state.keys) >= RESERVE:
            return None
        return {"keys": [rng.getrandbits(63) for _ in range(RESERVE - len(state.keys))]}

    # --- play -----------------------------------------------------------------------
    def note(self, state: SurviveState, text: str, seats: list[int] | None = None,
             others: str | None = None) -> None:
        """Log `text` for everyone; or, given `seats`, for those seats alone, the
        others reading `others` (nothing if None)."""
        state.log.append([state.round, text] if seats is None else [state.round, text, sorted(seats), others])

    def apply(self, state: SurviveState, seat: int, move: str, chance: Any) -> None:
        data, error = self.parse(state, seat, move)
        if error:
            raise ValueError(f"illegal move {move!r}: {error}")
        if chance:
            state.keys.extend(chance.get("keys", []))
        verb = data["verb"]
        getattr(self, f"_do_{verb}")(state, seat, data)
        self.settle(state)

    def _do_search(self, state, seat, data):
        state.orders[seat] = [data["stock"], data["discard"]]
        state.missed[seat] = 0

    def _do_give(self, state, seat, data):
        take(state.hands[seat], data["cards"])
        state.stock[data["target"]] = sort_cards(state.stock[data["target"]] + data["cards"])
        self.note(state, f"{{seat{seat}}} gave {{seat{data['target']}}} {named(data['cards'])}.")

    def _do_offer(self, state, seat, data):
        state.offers.append({"n": state.next_offer, "from": seat, "to": data["target"], "give": data["give"],
                             "get": data["get"], "status": "open"})
        self.note(state, f"{{seat{seat}}} made offer {state.next_offer} to {{seat{data['target']}}}.",
                  [seat, data["target"]], f"{{seat{seat}}} made an offer.")
        state.next_offer += 1

    def _do_accept(self, state, seat, data):
        offer = data["offer"]
        maker = offer["from"]
        if missing(offer["give"], state.hands[maker], "hand"):
            offer["status"] = f"not carried out: {{seat{maker}}} no longer held the cards"
            self.note(state, f"{{seat{seat}}} accepted offer {offer['n']}, but {{seat{maker}}} no longer held "
                             "the cards: no swap.", [seat, maker],
                      f"{{seat{seat}}} accepted an offer, but it could not be carried out.")
            return
        take(state.hands[maker], offer["give"])
        take(state.hands[seat], offer["get"])
        state.stock[seat] = sort_cards(state.stock[seat] + offer["give"])
        state.stock[maker] = sort_cards(state.stock[maker] + offer["get"])
        offer["status"] = "accepted"
        self.note(state, f"{{seat{maker}}} and {{seat{seat}}} swapped: {{seat{maker}}} gave "
                         f"{named(offer['give'])}, {{seat{seat}}} gave {named(offer['get'])}.")

    def _do_reject(self, state, seat, data):
        self._answered(state, seat, data["offer"], "rejected")

    def _do_withdraw(self, state, seat, data):
        self._answered(state, seat, data["offer"], "withdrawn")

    def _answered(self, state, seat, offer, status):
        offer["status"] = status
        verb = "withdrew" if status == "withdrawn" else status
        self.note(state, f"{{seat{seat}}} {verb} offer {offer['n']}.", [offer["from"], offer["to"]],
                  f"{{seat{seat}}} {verb} an offer.")

    def _do_say(self, state, seat, data):
        self.note(state, f"{{seat{seat}}} says: {data['text']}")

    def _do_tell(self, state, seat, data):
        self.note(state, f"{{seat{seat}}} told {{seat{data['target']}}}: {data['text']}", [seat, data["target"]],
                  f"{{seat{seat}}} sent a tell.")

    def _do_done(self, state, seat, data):
        state.done[seat] = True

    def _do_undone(self, state, seat, data):
        state.done[seat] = False

    def _do_pass(self, state, seat, data):
        play = next(p for p in state.plays if p["n"] == data["play"])
        play["passes"].append(seat)

    def _do_weapon(self, state, seat, data):
        source = "hand" if "X" in state.hands[seat] else "stockpile"
        (state.hands if source == "hand" else state.stock)[seat].remove("X")
        state.trash.append("X")
        number = state.next_play
        state.next_play += 1
        state.plays.append({"n": number, "seat": seat, "kind": data["kind"], "target": data["target"],
                            "cards": data["cards"], "passes": []})
        self.note(state, f"Weapon play {number}: {{seat{seat}}} plays a Weapon (from the {source}): "
                         f"{self.describe(state.plays[-1])}.")

    @staticmethod
    def describe(play: dict[str, Any]) -> str:
        kind, target = play["kind"], play["target"]
        if kind == "counter":
            return f"counter weapon play {target}"
        if kind == "beast":
            return f"remove a Beast in front of {{seat{target}}}"
        if kind == "life":
            return f"{{seat{target}}} loses a life"
        what = "all" if play["cards"] is None else card_list(play["cards"])
        return f"steal {what} from {{seat{target}}}'s stockpile"

    # --- weapon chains --------------------------------------------------------------
    def root(self, state: SurviveState, play: dict[str, Any]) -> int:
        numbers = {p["n"]: p for p in state.plays}
        while play["kind"] == "counter" and play["target"] in numbers:
            play = numbers[play["target"]]
        return play["n"]

    def chains(self, state: SurviveState) -> list[list[dict[str, Any]]]:
        """Pending chains, each newest first, in the order their windows opened."""
        groups: dict[int, list[dict[str, Any]]] = {}
        for play in state.plays:
            groups.setdefault(self.root(state, play), []).append(play)
        chains = [sorted(group, key=lambda p: -p["n"]) for group in groups.values()]
        return sorted(chains, key=lambda chain: chain[0]["n"])

    def newest(self, state: SurviveState, play: dict[str, Any]) -> dict[str, Any]:
        root = self.root(state, play)
        return max((p for p in state.plays if self.root(state, p) == root), key=lambda p: p["n"])

    def window_closed(self, state: SurviveState, chain: list[dict[str, Any]]) -> bool:
        newest = chain[0]
        return all(s in newest["passes"] for s in self.living(state) if s != newest["seat"])

    def resolve(self, state: SurviveState, chain: list[dict[str, Any]]) -> None:
        effective: dict[int, bool] = {}
        for play in chain:  # newest first: counters against a play come after it
            effective[play["n"]] = not any(effective.get(p["n"]) for p in chain
                                           if p["kind"] == "counter" and p["target"] == play["n"])
        numbers = {p["n"] for p in chain}
        state.plays = [p for p in state.plays if p["n"] not in numbers]
        for play in chain:
            if not effective[play["n"]]:
                self.note(state, f"Weapon play {play['n']} is cancelled.")
            elif play["kind"] == "counter":
                self.note(state, f"Weapon play {play['n']} cancels weapon play {play['target']}.")
            else:
                self.effect(state, play)

    def effect(self, state: SurviveState, play: dict[str, Any]) -> None:
        seat, target, n = play["seat"], play["target"], play["n"]
        if not self.is_alive(state, target):
            self.note(state, f"Weapon play {n} does nothing: {{seat{target}}} is out.")
            return
        if play["kind"] == "beast":
            if state.beasts[target] == 0:
                self.note(state, f"Weapon play {n} does nothing: no Beast is left in front of {{seat{target}}}.")
                return
            state.beasts[target] -= 1
            state.trash.append("B")
            self.note(state, f"Weapon play {n} removes a Beast in front of {{seat{target}}}.")
        elif play["kind"] == "life":
            state.lives[target] -= 1
            self.note(state, f"Weapon play {n}: {{seat{target}}} loses a life ({state.lives[target]} left).")
            if state.lives[target] == 0:
                self.knock_out(state, target)
        else:
            if not self.is_alive(state, seat):
                self.note(state, f"Weapon play {n} does nothing: {{seat{seat}}} is out.")
                return
            pile = state.stock[target]
            wanted = list(pile) if play["cards"] is None else play["cards"]
            taken = []
            for card in wanted:
                if card in pile:
                    pile.remove(card)
                    taken.append(card)
            state.stock[seat] = sort_cards(state.stock[seat] + taken)
            self.note(state, f"Weapon play {n}: {{seat{seat}}} steals {named(taken)} from {{seat{target}}}.")

    # --- phases ---------------------------------------------------------------------
    def knock_out(self, state: SurviveState, seat: int, why: str = "is out of the game") -> None:
        """`seat` is out: their cards and Beasts go to the trash, their offers lapse."""
        cards = state.hands[seat] + state.stock[seat]
        state.trash.extend(cards + ["B"] * state.beasts[seat])
        count = len(cards) + state.beasts[seat]
        state.hands[seat], state.stock[seat], state.beasts[seat] = [], [], 0
        state.orders[seat] = None
        state.done[seat] = False
        for offer in state.offers:
            if offer["status"] == "open" and seat in (offer["from"], offer["to"]):
                offer["status"] = "lapsed"
        self.note(state, f"{{seat{seat}}} {why}; {_plural(count, 'card')} went to the trash.")

    def settle(self, state: SurviveState) -> None:
        """Carry the game on as far as it goes without anyone acting."""
        while state.phase != OVER:
            left = self.living(state)
            if len(left) <= 1:
                state.phase = OVER
                if left:
                    self.note(state, f"{{seat{left[0]}}} is the last survivor and wins.")
                else:
                    self.note(state, "Every remaining player is out: nobody wins.")
                return
            if state.phase == SEARCH_PHASE:
                if any(state.orders[s] is None for s in left):
                    return
                self.carry_out(state)
                continue
            closed = next((c for c in self.chains(state) if self.window_closed(state, c)), None)
            if closed is not None:
                self.resolve(state, closed)
                continue
            if not state.plays and 2 * sum(state.done[s] for s in left) > len(left):
                self.end_round(state)
                continue
            return

    def draw_card(self, state: SurviveState) -> str | None:
        if not state.deck:
            if not state.trash:
                return None
            if state.keys:
                key = state.keys.pop(0)
            else:  # never expected: a key from the public state keeps replays exact
                key = int.from_bytes(hashlib.sha256(repr((state.round, state.trash)).encode()).digest()[:8], "big")
            trash = state.trash
            order = sorted(range(len(trash)), key=lambda i: hashlib.sha256(f"{key}:{i}".encode()).digest())
            state.deck = [trash[i] for i in order]
            state.trash = []
            self.note(state, f"The deck ran out: the trash pile ({_plural(len(trash), 'card')}) was shuffled "
                             "into a new deck.")
        return state.deck.pop(0)

    def carry_out(self, state: SurviveState) -> None:
        self.note(state, "Search orders carried out in this order: "
                  + ", ".join(f"{{seat{s}}}" for s in self.search_order(state)) + ".")
        for seat in self.search_order(state):
            stock, discard = state.orders[seat] or [[], []]
            hand = state.hands[seat]
            parts = []
            if state.round == 1 and "B" in hand:
                beasts = hand.count("B")
                state.hands[seat] = hand = [c for c in hand if c != "B"]
                state.trash.extend(["B"] * beasts)
                parts.append(f"discarded {_plural(beasts, 'Beast')} from the dealt hand")
            take(hand, stock)
            state.stock[seat] = sort_cards(state.stock[seat] + stock)
            take(hand, discard)
            state.trash.extend(discard)
            if stock:
                parts.append(f"stocked {named(stock)}")
            if discard:
                parts.append(f"discarded {named(discard)}")
            wanted = HAND - len(hand)
            drawn = beasts = 0
            for _ in range(wanted):
                card = self.draw_card(state)
                if card is None:
                    break
                if card == "B":
                    beasts += 1
                    state.beasts[seat] += 1
                else:
                    hand.append(card)
                    drawn += 1
            state.hands[seat] = sort_cards(hand)
            text = f"drew {_plural(drawn, 'card')}"
            if beasts:
                text += f" and was attacked by {_plural(beasts, 'Beast')}"
            if drawn + beasts < wanted:
                text += " (the deck and the trash pile were empty)"
            parts.append(text)
            self.note(state, f"{{seat{seat}}} " + ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "")
                      + parts[-1] + ".")
            state.orders[seat] = None
        state.orders = [None] * state.players
        state.phase = TALK_PHASE
        state.done = [False] * state.players
        self.note(state, "The negotiation phase begins.")

    def end_round(self, state: SurviveState) -> None:
        for offer in state.offers:
            if offer["status"] == "open":
                offer["status"] = "lapsed"
        left = self.living(state)
        done = [f"{{seat{s}}}" for s in left if state.done[s]]
        self.note(state, f"End of round {state.round}" + (f" (done: {', '.join(done)})." if done else "."))
        for seat in left:
            lacking = []
            for card in RESOURCES:
                if card in state.stock[seat]:
                    state.stock[seat].remove(card)
                elif card in state.hands[seat]:
                    state.hands[seat].remove(card)
                else:
                    lacking.append(card)
                    continue
                state.trash.append(card)
                if card == "F":
                    state.last_ate[seat] = state.round
            paid = [c for c in RESOURCES if c not in lacking]
            text = f"{{seat{seat}}} paid {named(paid)}" if paid else f"{{seat{seat}}} paid nothing"
            if lacking:
                lost = min(len(lacking), state.lives[seat])
                state.lives[seat] -= lost
                text += f" and loses {_plural(len(lacking), 'life')} for want of " + \
                        " and ".join(NAMES[c] for c in lacking)
            beasts = state.beasts[seat]
            if beasts:
                state.lives[seat] = max(0, state.lives[seat] - beasts)
                state.trash.extend(["B"] * beasts)
                state.beasts[seat] = 0
                text += f"; {_plural(beasts, 'Beast')} {'takes' if beasts == 1 else 'take'} {_plural(beasts, 'life')}"
            self.note(state, f"{text} ({state.lives[seat]} left).")
        for seat in left:
            if state.lives[seat] == 0:
                self.knock_out(state, seat)
        if len(self.living(state)) <= 1:
            return
        state.round += 1
        state.phase = SEARCH_PHASE
        state.offers = []
        state.log = [e for e in state.log if e[0] >= state.round - 1]
        state.done = [False] * state.players
        state.orders = [None] * state.players
        self.note(state, "The search phase begins.")

    # --- time -----------------------------------------------------------------------
    def timers(self, state: SurviveState) -> dict[str, int]:
        if self.result(state) is not None:
            return {}
        timers = {f"round {state.round} {state.phase}": state.deadline}
        for chain in self.chains(state):
            timers[f"weapon play {chain[0]['n']}"] = state.window
        return timers

    def timeout(self, state: SurviveState, name: str) -> None:
        if self.result(state) is not None:
            return
        if name == f"round {state.round} {SEARCH_PHASE}" and state.phase == SEARCH_PHASE:
            for seat in self.living(state):
                if state.orders[seat] is not None:
                    continue
                state.missed[seat] += 1
                if state.missed[seat] >= MISSES:
                    state.resigned.append(seat)
                    self.knock_out(state, seat, f"missed {MISSES} search deadlines in a row and is resigned")
                else:
                    state.orders[seat] = [[], []]
                    self.note(state, f"{{seat{seat}}} sent no search order: plain search.")
            self.settle(state)
        elif name == f"round {state.round} {TALK_PHASE}" and state.phase == TALK_PHASE:
            self.note(state, "The negotiation deadline passed.")
            for chain in self.chains(state):
                if self.result(state) is not None:
                    return
                self.resolve(state, chain)
            if self.result(state) is None and state.phase == TALK_PHASE:
                self.end_round(state)
            self.settle(state)
        else:
            match = re.fullmatch(r"weapon play (\d+)", name)
            if match:
                chain = next((c for c in self.chains(state) if c[0]["n"] == int(match[1])), None)
                if chain is not None:
                    self.resolve(state, chain)
                    self.settle(state)

    # --- leaving --------------------------------------------------------------------
    def resign(self, state: SurviveState, seat: int) -> None:
        if seat in state.resigned:
            return
        state.resigned.append(seat)
        if state.lives[seat] > 0 and state.phase != OVER:
            self.knock_out(state, seat, "resigned")
        elif state.phase != OVER:
            self.note(state, f"{{seat{seat}}} resigned.")
        self.settle(state)

    # --- what players see -------------------------------------------------------------
    def shown_move(self, seat: int, move: str, viewer: int | None) -> str:
        words = move.split()
        verb = words[0] if words else move
        if viewer == seat:
            return "say" if verb == "say" else move
        if verb in ("search", "say", "accept", "reject", "withdraw"):
            return verb
        if verb in ("offer", "tell"):
            target = words[1] if len(words) > 1 else ""
            if viewer is not None and target == f"{{seat{viewer}}}":
                return move if verb == "offer" else f"tell {target}"
            return verb
        return move

    def private_to(self, state: SurviveState, seat: int, move: str) -> frozenset[int] | None:
        words = move.split()
        verb = words[0] if words else ""
        if verb == "search":
            return frozenset({seat})
        if verb in ("offer", "tell", "accept", "reject", "withdraw"):
            match = SEAT.search(move)
            if match:
                return frozenset({seat, int(match[1])})
            return frozenset({seat})
        return None

    @staticmethod
    def parts(text: str, players: int) -> list[Any]:
        """Text split into strings and seat numbers (for the template to name)."""
        out: list[Any] = []
        pos = 0
        for match in SEAT.finditer(text):
            if int(match[1]) < players:
                out.append(text[pos:match.start()])
                out.append(int(match[1]))
                pos = match.end()
        out.append(text[pos:])
        return [p for p in out if p != ""]

    def view(self, state: SurviveState, seat: int | None) -> dict[str, Any]:
        n = state.players
        outcome = self.result(state)
        rows = []
        for s in range(n):
            status = "resigned" if s in state.resigned else ("out" if state.lives[s] == 0 else "")
            rows.append({"seat": s, "lives": state.lives[s], "hand": len(state.hands[s]),
                         "stock": " ".join(state.stock[s]) or "-", "beasts": state.beasts[s],
                         "done": bool(state.done[s]) and state.phase == TALK_PHASE,
                         "order": state.orders[s] is not None and state.phase == SEARCH_PHASE,
                         "status": status})
        plays = []
        for play in sorted(state.plays, key=lambda p: p["n"]):
            newest = self.newest(state, play)["n"] == play["n"]
            plays.append({"n": play["n"], "seat": play["seat"],
                          "text": self.parts(self.describe(play), n),
                          "passes": sorted(play["passes"]) if newest else None})
        view: dict[str, Any] = {
            "round": state.round, "phase": state.phase if outcome is None else OVER,
            "deadline": DurationParam("d", 0, 0, 0, "").show(state.deadline),
            "window": DurationParam("w", 0, 0, 0, "").show(state.window),
            "winner": outcome.winners[0] if outcome and outcome.winners else None,
            "rows": rows, "plays": plays,
            "search_order": self.search_order(state) if state.phase == SEARCH_PHASE else [],
            "deck": len(state.deck), "trash": len(state.trash),
            "trash_cards": ", ".join(f"{state.trash.count(c)} {c}" for c in ORDER if c in state.trash),
            "log": [[seen[0], self.parts(seen[1], n)] for entry in state.log
                    if (seen := seen_by(entry, seat)) is not None],
            "me": seat, "hand": None, "hand_key": "", "order": None, "offers": [],
        }
        if seat is not None:
            hand = state.hands[seat]
            view["hand"] = show_cards(hand)
            view["hand_key"] = ", ".join(f"{c} {NAMES[c]}" for c in ORDER if c in hand)
            if state.orders[seat] is not None and state.phase == SEARCH_PHASE:
                stock, discard = state.orders[seat]
                view["order"] = "search" + (f" stock {card_list(stock)}" if stock else "") + \
                                (f" discard {card_list(discard)}" if discard else "")
            # from the reader's side: what the offer's maker gives, for what of the other's
            view["offers"] = [{"n": o["n"], "mine": o["from"] == seat, "other": o["to"] if o["from"] == seat
                               else o["from"], "give": show_cards(o["give"]), "get": show_cards(o["get"]),
                               "status": self.parts(o["status"], n)}
                              for o in state.offers if seat in (o["from"], o["to"])]
        return view

    def resample_hidden(self, state: SurviveState, seat: int | None, rng) -> SurviveState:
        other = self.restore(self.serialise(state))
        others = [s for s in range(state.players) if s != seat]
        pool = list(other.deck)
        for s in others:
            pool += other.hands[s]
        pool = sort_cards(pool)  # from what the seat sees alone: the same view, the same sample
        rng.shuffle(pool)
        for s in others:
            size = len(other.hands[s])
            other.hands[s], pool = sort_cards(pool[:size]), pool[size:]
            if other.orders[s] is not None:
                other.orders[s] = [[], []]  # sealed: only its being in is known
        other.deck = pool
        other.keys = [rng.getrandbits(63) for _ in other.keys]
        other.offers = [o for o in other.offers if seat in (o["from"], o["to"])] if seat is not None else []
        other.log = [entry if may_read(entry, seat) else [entry[0], entry[3]] for entry in other.log
                     if may_read(entry, seat) or entry[3] is not None]
        return other

    # --- storage --------------------------------------------------------------------
    def serialise(self, state: SurviveState) -> dict[str, Any]:
        return copy.deepcopy({name: getattr(state, name) for name in SurviveState.__dataclass_fields__})

    def restore(self, data: dict[str, Any]) -> SurviveState:
        known = SurviveState.__dataclass_fields__  # a board stored before `tells` went into the log has them
        return SurviveState(**copy.deepcopy({name: value for name, value in data.items() if name in known}))


register(Survive())
