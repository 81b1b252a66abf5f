"""Robots for Survive (`games/survive.py`): heuristic players for every phase.

The engine has no `legal_moves` (a negotiation move may name any cards), so this
module makes its own moves, and reckons on `Table`, a compact copy of the board
(card counts in lists) with the engine's rules for searches, weapon chains and the
round's end: a copy costs microseconds where an engine state's costs milliseconds.

Level 0 plays at random but always makes progress: a random search order; in the
negotiation phase a uniform choice among answering an offer, a weapon play, a pass
and `done`, so it sends `done` soon. Levels 1 to 3 value what they hold by what it
saves: the first Food, Water and Shelter save a life at the round's end, further ones
less and less (`UNIT`), a Weapon kept is worth `SPARE_WEAPON`, a Beast costs a life,
and the rivals' standing counts against their own at `RIVALRY`.

- Every level from 1 stocks its resources and Weapons and discards its Trash, so it
  draws a full hand each round: the cards drawn are worth more than the Beasts they
  bring. (Keeping cards in hand, out of thieves' reach, pays against level 2's steals
  but loses more against players who seldom steal; sampled search orders did no
  better.)
- Level 1 kills its own Beasts with its Weapons and takes offers that give it more
  than they cost.
- Level 2 plays each Weapon where it gains most once the pending plays resolve (its
  own Beast, a rich stockpile to steal, a rival's life), counters plays that hurt it,
  offers Trash for a resource it lacks, and refuses offers that help their maker more
  than itself.
- Level 3 weighs the same weapon plays and counters, and holding its Weapon, by
  playing the round out: on `SAMPLES` deals of the cards it cannot see (the same
  deals for every choice), every seat on level 2's rules, to the round's end. So it
  sees what level 2 cannot: who will counter, which steal lands last, what the
  round's end costs.

A robot never chats, never gives cards away, and ends every negotiation phase with
`done`, so a game with robots always finishes.
"""

from __future__ import annotations

import random

from ..games import Game, State
from ..games.survive import COUNTS, HAND, ORDER, SEARCH_PHASE

F, W, S, X, B, T = range(6)  # card indices, in the engine's ORDER
RESOURCES = (F, W, S)
UNIT = (1.0, 0.35, 0.12, 0.04)  # worth of the 1st, 2nd, ... unit of one resource held
SPARE_WEAPON = 0.45  # worth of a Weapon kept for later (a Beast to come, a counter)
RIVALRY = 0.5  # an opponent's standing counts half of one's own against it
MARGIN = 0.05  # a Weapon is played only for a gain above this
DEAD = -1.0  # the standing of a seat that is out
WON = 3.0  # what the last survivor gains beyond its standing
SAMPLES = 10  # level 3: deals of the unseen cards on which each choice is played out

SEARCH, TALK, OVER = range(3)


def choose(game: Game, state: State, seat: int, level: int, rng: random.Random) -> str:
    table = Table.of(game, state)
    if table.phase == SEARCH:
        if level == 0:
            return _order_text(_random_order(table, seat, rng))
        return _order_text(_order(table, seat))
    if level == 0:
        return rng.choice(_random_moves(game, state, table, seat))
    answer = _answer_offer(state, table, seat, level)
    if answer:
        return answer
    action = _sampled_action(table, seat, rng) if level == 3 else _action(table, seat, level)
    if action[0] in ("pass", "done"):
        offer = _offer(state, table, seat) if level >= 2 else None
        if offer:
            return offer
    return _action_text(action)


def _counts(cards) -> list[int]:
    out = [0] * 6
    for card in cards:
        out[ORDER.index(card)] += 1
    return out


def _worth(count: int) -> float:
    return sum(UNIT[:count])


# --- the board in brief -------------------------------------------------------------

class Table:
    """A Survive board as card counts, with the engine's rules for searching, weapon
    chains and the round's end: enough to play rounds out many times a move. Offers
    and talk are left out; a steal always takes the whole stockpile. A table that
    draws cards (level 3's playouts) needs `rng` for the reshuffles."""

    __slots__ = ("players", "lives", "alive", "hands", "stock", "beasts", "deck", "trash", "round", "first",
                 "last_ate", "phase", "orders", "done", "plays", "next_play", "rng")

    @classmethod
    def of(cls, game: Game, state: State) -> Table:
        table = cls()
        table.players = state.players
        table.lives = list(state.lives)
        table.alive = [game.is_alive(state, s) for s in range(state.players)]
        table.hands = [_counts(h) for h in state.hands]
        table.stock = [_counts(p) for p in state.stock]
        table.beasts = list(state.beasts)
        table.deck = [ORDER.index(c) for c in reversed(state.deck)]  # the top card last
        table.trash = _counts(state.trash)
        table.round, table.first, table.last_ate = state.round, state.first, list(state.last_ate)
        table.phase = OVER if game.result(state) is not None else (SEARCH if state.phase == SEARCH_PHASE else TALK)
        table.orders = [None if o is None else (_counts(o[0]), _counts(o[1])) for o in state.orders]
        table.done = list(state.done)
        table.plays = [[p["n"], p["seat"], p["kind"], p["target"], None if p["cards"] is None
                        else _counts(p["cards"]), set(p["passes"])] for p in state.plays]
        table.next_play = state.next_play
        table.rng = None
        return table

    def copy(self) -> Table:
        other = Table()
        other.players, other.round, other.first, other.phase = self.players, self.round, self.first, self.phase
        other.lives, other.alive, other.beasts = list(self.lives), list(self.alive), list(self.beasts)
        other.hands = [list(h) for h in self.hands]
        other.stock = [list(p) for p in self.stock]
        other.deck, other.trash, other.last_ate = list(self.deck), list(self.trash), list(self.last_ate)
        other.orders, other.done = list(self.orders), list(self.done)
        other.plays = [[n, s, k, t, c, set(p)] for n, s, k, t, c, p in self.plays]
        other.next_play, other.rng = self.next_play, self.rng
        return other

    def living(self) -> list[int]:
        return [s for s in range(self.players) if self.alive[s]]

    def held(self, s: int, card: int) -> int:
        return self.hands[s][card] + self.stock[s][card]

    # the unseen cards, dealt again
    def dealt_again(self, seat: int, rng: random.Random) -> Table:
        """A copy in which the other hands and the deck are dealt anew from the cards
        `seat` cannot see (in a fixed order, then shuffled by `rng`)."""
        unseen = [COUNTS[c] for c in ORDER]
        for c in range(6):
            unseen[c] -= self.trash[c] + self.hands[seat][c] + sum(p[c] for p in self.stock)
        unseen[B] -= sum(self.beasts)
        pool = [c for c in range(6) for _ in range(max(0, unseen[c]))]
        rng.shuffle(pool)
        other = self.copy()
        for s in range(self.players):
            if s != seat:
                size = sum(self.hands[s])
                other.hands[s] = [0] * 6
                for card in pool[:size]:
                    other.hands[s][card] += 1
                pool = pool[size:]
        other.deck = pool
        return other

    # weapon chains
    def chains(self) -> list[list[list]]:
        """Pending chains, each newest first, oldest chain first (as the engine)."""
        numbers = {p[0]: p for p in self.plays}
        groups: dict[int, list] = {}
        for play in self.plays:
            root = play
            while root[2] == "counter" and root[3] in numbers:
                root = numbers[root[3]]
            groups.setdefault(root[0], []).append(play)
        chains = [sorted(g, key=lambda p: -p[0]) for g in groups.values()]
        return sorted(chains, key=lambda c: c[0][0])

    def waiting(self) -> list[int]:
        """The seats the board waits for, lowest first."""
        if self.phase == OVER:
            return []
        left = self.living()
        if self.phase == SEARCH:
            return [s for s in left if self.orders[s] is None]
        waiting = {s for s in left if not self.done[s]}
        for chain in self.chains():
            waiting |= {s for s in left if s != chain[0][1] and s not in chain[0][5]}
        return sorted(waiting)

    def resolve(self, chain: list[list]) -> None:
        effective: dict[int, bool] = {}
        for play in chain:
            effective[play[0]] = not any(effective.get(p[0]) for p in chain if p[2] == "counter" and p[3] == play[0])
        numbers = {p[0] for p in chain}
        self.plays = [p for p in self.plays if p[0] not in numbers]
        for play in chain:
            if effective[play[0]] and play[2] != "counter":
                self.effect(play)

    def effect(self, play: list) -> None:
        _, seat, kind, target, cards, _ = play
        if not self.alive[target]:
            return
        if kind == "beast":
            if self.beasts[target]:
                self.beasts[target] -= 1
                self.trash[B] += 1
        elif kind == "life":
            self.lives[target] -= 1
            if self.lives[target] <= 0:
                self.knock_out(target)
        elif self.alive[seat]:
            pile = self.stock[target]
            for c in range(6):
                taken = pile[c] if cards is None else min(pile[c], cards[c])
                pile[c] -= taken
                self.stock[seat][c] += taken

    def knock_out(self, s: int) -> None:
        for c in range(6):
            self.trash[c] += self.hands[s][c] + self.stock[s][c]
        self.trash[B] += self.beasts[s]
        self.hands[s], self.stock[s], self.beasts[s] = [0] * 6, [0] * 6, 0
        self.alive[s], self.done[s], self.orders[s] = False, False, None

    def resolved(self) -> Table:
        """A copy with every pending chain resolved as it stands."""
        other = self.copy()
        for chain in other.chains():
            other.resolve(chain)
        return other

    # moves: ("search", stock, discard), ("weapon", kind, target), ("counter", n), ("pass", n), ("done",)
    def play(self, seat: int, action: tuple, settle: bool = True) -> None:
        """`seat` makes a move; with `settle`, the board then goes on as the engine's."""
        kind = action[0]
        if kind == "search":
            self.orders[seat] = (action[1], action[2])
        elif kind in ("weapon", "counter"):
            source = self.hands if self.hands[seat][X] else self.stock
            source[seat][X] -= 1
            self.trash[X] += 1
            play_kind, target = ("counter", action[1]) if kind == "counter" else (action[1], action[2])
            self.plays.append([self.next_play, seat, play_kind, target, None, set()])
            self.next_play += 1
        elif kind == "pass":
            next(p for p in self.plays if p[0] == action[1])[5].add(seat)
        else:
            self.done[seat] = True
        if settle:
            self.settle()

    def settle(self) -> None:
        while self.phase != OVER:
            left = self.living()
            if len(left) <= 1:
                self.phase = OVER
                return
            if self.phase == SEARCH:
                if any(self.orders[s] is None for s in left):
                    return
                self.carry_out()
                continue
            closed = next((c for c in self.chains()
                           if all(s in c[0][5] for s in left if s != c[0][1])), None)
            if closed is not None:
                self.resolve(closed)
                continue
            if not self.plays and 2 * sum(self.done[s] for s in left) > len(left):
                self.end_round()
                continue
            return

    def search_order(self) -> list[int]:
        left = self.living()
        ring = [(self.first + i) % self.players for i in range(self.players)]
        ring = [s for s in ring if self.alive[s]]
        if self.round == 1:
            start = ring[0]
        else:
            hungriest = min(self.last_ate[s] for s in left)
            start = next(s for s in ring if self.last_ate[s] == hungriest)
        return [(start + i) % self.players for i in range(self.players) if self.alive[(start + i) % self.players]]

    def draw_card(self) -> int | None:
        if not self.deck:
            if not sum(self.trash):
                return None
            self.deck = [c for c in range(6) for _ in range(self.trash[c])]
            self.trash = [0] * 6
            self.rng.shuffle(self.deck)
        return self.deck.pop()

    def carry_out(self) -> None:
        for seat in self.search_order():
            stock, discard = self.orders[seat] or ([0] * 6, [0] * 6)
            hand = self.hands[seat]
            if self.round == 1:
                self.trash[B] += hand[B]
                hand[B] = 0
            for c in range(6):
                hand[c] -= stock[c] + discard[c]
                self.stock[seat][c] += stock[c]
                self.trash[c] += discard[c]
            for _ in range(HAND - sum(hand)):
                card = self.draw_card()
                if card is None:
                    break
                if card == B:
                    self.beasts[seat] += 1
                else:
                    hand[card] += 1
        self.orders = [None] * self.players
        self.done = [False] * self.players
        self.phase = TALK

    def end_round(self) -> None:
        left = self.living()
        for seat in left:
            lacking = 0
            for c in RESOURCES:
                pile = self.stock[seat] if self.stock[seat][c] else self.hands[seat]
                if pile[c]:
                    pile[c] -= 1
                    self.trash[c] += 1
                    if c == F:
                        self.last_ate[seat] = self.round
                else:
                    lacking += 1
            self.lives[seat] = max(0, self.lives[seat] - lacking - self.beasts[seat])
            self.trash[B] += self.beasts[seat]
            self.beasts[seat] = 0
        for seat in left:
            if self.lives[seat] == 0:
                self.knock_out(seat)
        if len(self.living()) <= 1:
            self.phase = OVER
            return
        self.round += 1
        self.phase = SEARCH
        self.done = [False] * self.players
        self.orders = [None] * self.players

    # standing
    def score(self, s: int) -> float:
        """A seat's standing: lives, less the Beasts before it, plus what its cards
        are worth (the first of each resource pays for the coming round's end)."""
        if not self.alive[s]:
            return DEAD
        return (self.lives[s] - self.beasts[s] + sum(_worth(self.held(s, c)) for c in RESOURCES)
                + SPARE_WEAPON * self.held(s, X))

    def value(self, seat: int) -> float:
        """How good the table is for `seat`: its standing against its rivals'."""
        rivals = sum(self.score(s) for s in range(self.players) if s != seat)
        won = WON if self.alive[seat] and len(self.living()) == 1 else 0.0
        return self.score(seat) - RIVALRY * rivals + won


# --- level 0 --------------------------------------------------------------------------

def _random_order(table: Table, seat: int, rng: random.Random) -> tuple:
    stock, discard = [0] * 6, [0] * 6
    for card in range(6):
        if card == B:
            continue
        for _ in range(table.hands[seat][card]):
            pile = rng.randrange(3)
            if pile < 2:
                (stock, discard)[pile][card] += 1
    return "search", stock, discard


def _random_moves(game: Game, state: State, table: Table, seat: int) -> list[str]:
    moves = []
    for offer in state.offers:
        if offer["status"] == "open" and offer["to"] == seat:
            if _has(table.hands[seat], _counts(offer["get"])):
                moves.append(f"accept {offer['n']}")
            moves.append(f"reject {offer['n']}")
    moves += [_action_text(a) for a in _passes(table, seat)]
    if table.held(seat, X):
        left = table.living()
        moves += [f"weapon beast {_seat(s)}" for s in left if table.beasts[s]]
        moves += [f"weapon life {_seat(s)}" for s in left]
        moves += [f"weapon steal {_seat(s)} all" for s in left if s != seat and sum(table.stock[s])]
        moves += [f"weapon counter {p[0]}" for p in sorted(table.plays)]
    if not table.done[seat]:
        moves.append("done")
    return moves


def _has(pile: list[int], cards: list[int]) -> bool:
    return all(pile[c] >= cards[c] for c in range(6))


# --- levels 1 and 2 ---------------------------------------------------------------------

def _order(table: Table, seat: int) -> tuple:
    """Stock every resource and Weapon, discard the Trash: the hand is drawn anew."""
    hand = table.hands[seat]
    return "search", [hand[F], hand[W], hand[S], hand[X], 0, 0], [0, 0, 0, 0, 0, hand[T]]


def _action(table: Table, seat: int, level: int) -> tuple:
    """The next weapon play, pass or `done` of a level-1 or level-2 robot."""
    if level >= 2:
        weapon = _best(table, seat, _counters(table, seat) + _weapon_plays(table, seat))
        if weapon:
            return weapon
    elif table.held(seat, X):
        coming = sum(1 for p in table.plays if p[1] == seat and p[2] == "beast" and p[3] == seat)
        if table.beasts[seat] > coming:
            return "weapon", "beast", seat
    return _quiet(table, seat)


def _passes(table: Table, seat: int) -> list[tuple]:
    return [("pass", c[0][0]) for c in table.chains() if c[0][1] != seat and seat not in c[0][5]]


def _quiet(table: Table, seat: int) -> tuple:
    """A step that plays no Weapon: a pass on a chain waiting for `seat`, or `done`."""
    return (_passes(table, seat) or [("done",)])[0]


def _weapon_plays(table: Table, seat: int) -> list[tuple]:
    """The weapon plays worth weighing: a Beast of one's own, a rival's life or
    stockpile."""
    if not table.held(seat, X):
        return []
    plays = [("weapon", "beast", seat)] if table.beasts[seat] else []
    for s in table.living():
        if s != seat:
            plays.append(("weapon", "life", s))
            if sum(table.stock[s]):
                plays.append(("weapon", "steal", s))
    return plays


def _counters(table: Table, seat: int) -> list[tuple]:
    if not table.held(seat, X):
        return []
    return [("counter", p[0]) for p in sorted(table.plays) if p[1] != seat]


def _best(table: Table, seat: int, actions: list[tuple]) -> tuple | None:
    """The action that raises `seat`'s value most once the chains resolve, if any
    raises it by more than MARGIN."""
    if not actions:
        return None
    now = table.resolved().value(seat)
    best, best_gain = None, MARGIN
    for action in actions:
        trial = table.copy()
        trial.play(seat, action, settle=False)  # weighed as if every chain resolved now
        gain = trial.resolved().value(seat) - now
        if gain > best_gain:
            best, best_gain = action, gain
    return best


def _answer_offer(state: State, table: Table, seat: int, level: int) -> str | None:
    """Accept an open offer to `seat` that gives more than it costs (level 2 up: and
    more than it gives its maker, at RIVALRY), reject the rest."""
    for offer in state.offers:
        if offer["status"] != "open" or offer["to"] != seat:
            continue
        given, asked = _counts(offer["give"]), _counts(offer["get"])
        if not _has(table.hands[seat], asked):
            return f"reject {offer['n']}"
        mine = _trade_gain(table, seat, given, asked)
        theirs = _trade_gain(table, offer["from"], asked, given)
        rivalry = 0.0 if level == 1 else RIVALRY
        return f"{'accept' if mine > rivalry * theirs else 'reject'} {offer['n']}"
    return None


def _trade_gain(table: Table, seat: int, received: list[int], paid: list[int]) -> float:
    gain = 0.0
    for c in RESOURCES:
        held = table.held(seat, c)
        gain += _worth(held + received[c] - paid[c]) - _worth(held)
    return gain + SPARE_WEAPON * (received[X] - paid[X])


def _offer(state: State, table: Table, seat: int) -> str | None:
    """Once a round, to each rival who may still answer: a Trash (or a resource held
    three times) from the hand for the resource `seat` holds least of, if it holds
    fewer than two."""
    hand = table.hands[seat]
    spare = T if hand[T] else next((c for c in RESOURCES if hand[c] and table.held(seat, c) >= 3), None)
    if spare is None:
        return None
    wanted = min(RESOURCES, key=lambda c: (table.held(seat, c), c))
    if table.held(seat, wanted) >= 2 or wanted == spare:
        return None
    asked = {o["to"] for o in state.offers if o["from"] == seat}
    for s in table.living():
        if s != seat and s not in asked and not table.done[s]:
            return f"offer {_seat(s)} give={ORDER[spare]} get={ORDER[wanted]}"
    return None


# --- level 3 ----------------------------------------------------------------------------

def _sampled_action(table: Table, seat: int, rng: random.Random) -> tuple:
    """The weapon play or counter whose sampled rounds end best, or the quiet step (a
    pass or `done`, weighed as level 2 going on from there) if that ends better."""
    weapons = _counters(table, seat) + _weapon_plays(table, seat)
    if not weapons:
        return _quiet(table, seat)
    return _sampled_best(table, seat, weapons + [_quiet(table, seat)], SAMPLES, rng)


def _sampled_best(table: Table, seat: int, choices: list[tuple], samples: int, rng: random.Random) -> tuple:
    """The choice with the best total value over `samples` deals of the unseen cards,
    each choice played out on the same deals and reshuffles (the first on ties: a
    counter now rather than the same counter later)."""
    totals = [0.0] * len(choices)
    for _ in range(samples):
        seed = rng.getrandbits(32)
        deal = table.dealt_again(seat, random.Random(seed))
        for i, choice in enumerate(choices):
            trial = deal.copy()
            trial.rng = random.Random(seed)
            totals[i] += _played_out(trial, seat, choice)
    best = max(range(len(choices)), key=lambda i: (totals[i], -i))
    return choices[best]


def _played_out(table: Table, seat: int, choice: tuple) -> float:
    """`seat`'s value at the end of the round after `choice`, every seat then playing
    level 2's rules."""
    start = table.round
    table.play(seat, choice)
    while table.phase != OVER and table.round == start:
        who = table.waiting()[0]
        table.play(who, _action(table, who, 2))
    return table.value(seat)


# --- move text --------------------------------------------------------------------------

def _seat(s: int) -> str:
    return f"{{seat{s}}}"


def _cards_text(counts: list[int]) -> str:
    return ",".join(ORDER[c] for c in range(6) for _ in range(counts[c]))


def _order_text(action: tuple) -> str:
    _, stock, discard = action
    return "search" + (f" stock {_cards_text(stock)}" if sum(stock) else "") + \
        (f" discard {_cards_text(discard)}" if sum(discard) else "")


def _action_text(action: tuple) -> str:
    kind = action[0]
    if kind == "weapon":
        return f"weapon {action[1]} {_seat(action[2])}" + (" all" if action[1] == "steal" else "")
    if kind == "counter":
        return f"weapon counter {action[1]}"
    if kind == "pass":
        return f"pass {action[1]}"
    return "done"
