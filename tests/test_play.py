"""Status lines and subjects of DESIGN.md §3 for every kind of turn and ending, with a
stand-in engine (Super-Wari never has several players to act at once)."""

from types import SimpleNamespace

import pytest
from hypothesis import given, settings, strategies as st

from pbmserv import play
from pbmserv.games import Game, Outcome


class StandIn(Game):
    title = "Stand-In"

    def shown_move(self, seat, move, viewer):
        """Seat 1's moves are sealed orders: others read only that one was sent."""
        return move if seat != 1 or viewer == 1 else "(sealed)"

    def __init__(self, acting, outcome):
        self.acting, self.outcome = acting, outcome

    def to_act(self, state):
        return frozenset(self.acting)

    def result(self, state):
        return self.outcome


def board(monkeypatch, acting, outcome=None):
    monkeypatch.setattr(play, "engine_of", lambda record: StandIn(acting, outcome))
    monkeypatch.setattr(play, "log_of", lambda record: record.moves)  # the stand-in's log
    users = [SimpleNamespace(userid=name) for name in ("ann", "bea", "cid")]
    return SimpleNamespace(board=104, status="active", seats=[SimpleNamespace(user=u, seat=i) for i, u in enumerate(users)])


@pytest.mark.parametrize("acting, outcome, status, subject", [
    ({1}, None, "It is bea's turn.", "Stand-In Board 104 bea"),
    ({0, 2}, None, "Waiting for: ann, cid.", "Stand-In Board 104 ALL"),
    (set(), Outcome(winners=(2,)), "Game won by cid.", "Stand-In Board 104"),
    (set(), Outcome(winners=(0, 1)), "Game won by ann and bea.", "Stand-In Board 104"),
    (set(), Outcome(tie=True), "Game was a tie.", "Stand-In Board 104"),
    (set(), Outcome(), "Game over: nobody won.", "Stand-In Board 104"),
])
def test_status_lines_and_subjects(monkeypatch, acting, outcome, status, subject):
    record = board(monkeypatch, acting, outcome)
    assert play.status_line(record, None) == status
    assert play.subject(record, None) == subject
    assert play.subject(record, None, new=True) == "New " + subject


def test_recent_moves_start_a_new_row_when_a_seat_acts_again(monkeypatch):
    moves = [SimpleNamespace(number=n, seat=s, kind=k, move=m, auto=False) for n, (s, k, m) in enumerate(
             [(0, "move", "a"), (1, "move", "b"), (-1, "timeout", "round 1"), (2, "move", "c"),
              (0, "move", "d"), (2, "move", "e"), (1, "resign", "resign"), (0, "move", "f")], start=1)]
    record = board(monkeypatch, set())
    record.moves = moves
    # each cell carries the number the #N guard counts: the timeout (#3) has one too
    assert play.recent_moves(record, 10, viewer=1) == [["#1 a", "#2 b", "#4 c"], ["#5 d", "", "#6 e"],
                                                       ["", "#7 resign", ""], ["#8 f", "", ""]]
    assert play.recent_moves(record, 2, viewer=1) == [["", "#7 resign", ""], ["#8 f", "", ""]]
    assert play.recent_moves(record, 10, upto=2, viewer=1) == [["#1 a", "#2 b", ""]]


def logged(actions):
    """Log rows numbered from 1, as the log numbers them, from (seat, kind, move)."""
    return [SimpleNamespace(number=n, seat=s, kind=k, move=m, auto=False) for n, (s, k, m) in enumerate(actions, 1)]


def test_recent_moves_skip_what_undos_took_back_even_an_undo_taken_back(monkeypatch):
    record = board(monkeypatch, set())
    record.moves = logged([(0, "move", "a"), (1, "move", "b"), (0, "move", "c"), (1, "move", "d"),
                           (0, "undo", "4"), (1, "move", "e"), (0, "move", "f"), (0, "undo", "3"),
                           (0, "move", "g")])
    # #8 takes back #3 on: #4, #5's undo of it, #6 and #7 with it
    assert play.recent_moves(record, 10, viewer=1) == [["#1 a", "#2 b", ""], ["#9 g", "", ""]]
    assert play.recent_moves(record, 1) == [["#9 g", "", ""]]
    assert play.recent_moves(record, 0) == []
    assert play.recent_moves(record, None, upto=7, viewer=1) == [["#1 a", "#2 b", ""], ["#3 c", "#6 e", ""], ["#7 f", "", ""]]
    assert [move.number for move in play.standing(record.moves)] == [1, 2, 9]


def standing_oldest_first(moves):
    """The log read forward from its start, as `play.standing` once was."""
    kept = []
    for move in moves:
        kept = [m for m in kept if m.number < int(move.move)] if move.kind == "undo" else kept + [move]
    return kept


def rows_oldest_first(moves, limit):
    """`play.recent_moves`'s rows as it once found them, from the whole log."""
    rows, last_seat = [], None
    for move in standing_oldest_first(moves):
        if move.seat < 0 or move.kind == "draw":
            continue
        if last_seat is None or move.seat <= last_seat:
            rows.append([""] * 3)
        rows[-1][move.seat] = f"#{move.number} {move.move}"
        last_seat = move.seat
    return rows if limit is None else rows[-limit:] if limit else []


@st.composite
def logs(draw):
    """A log of moves, votes' outcomes and deadlines. An undo may name any action before
    it, even one taken back already, which no vote names: the two readings must agree
    on every log, not only on those the commands write."""
    actions = []
    for _ in range(draw(st.integers(0, 40))):
        if actions and draw(st.integers(0, 4)) == 0:
            actions.append((draw(st.integers(0, 2)), "undo", str(draw(st.integers(1, len(actions))))))
        else:
            seat = draw(st.integers(-1, 2))
            actions.append((seat, "move" if seat >= 0 else "timeout", draw(st.sampled_from("abc"))))
    return logged(actions)


@settings(max_examples=300, deadline=None)
@given(moves=logs(), limit=st.one_of(st.none(), st.integers(0, 6)), upto=st.one_of(st.none(), st.integers(0, 45)))
def test_recent_moves_read_from_the_end_are_those_read_from_the_start(moves, limit, upto):
    record = SimpleNamespace(board=104, status="active",
                             seats=[SimpleNamespace(user=SimpleNamespace(userid=n), seat=i) for i, n in
                                    enumerate(("ann", "bea", "cid"))], moves=moves)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(play, "engine_of", lambda record: StandIn(set(), None))
        patch.setattr(play, "log_of", lambda record: record.moves)
        assert play.recent_moves(record, limit, upto, viewer=1) == rows_oldest_first(moves[:upto], limit)
    assert play.standing(moves[:upto]) == standing_oldest_first(moves[:upto])


def test_moves_read_as_each_viewer_may_read_them_with_userids_for_seats(monkeypatch):
    record = board(monkeypatch, set())
    record.moves = [SimpleNamespace(number=1, seat=0, kind="move", move="give {seat2} W", auto=False),
                    SimpleNamespace(number=2, seat=1, kind="move", move="search stock F", auto=False)]
    assert play.recent_moves(record, 10, viewer=1) == [["#1 give cid W", "#2 search stock F", ""]]
    assert play.recent_moves(record, 10, viewer=0) == [["#1 give cid W", "#2 (sealed)", ""]]
    assert play.recent_moves(record, 10) == [["#1 give cid W", "#2 (sealed)", ""]]


def test_userids_in_moves_become_seats_and_back():
    from pbmserv.games.base import fill_seats, seats_for_names

    names = ["ann", "Bea.2", "cid"]
    assert seats_for_names("give BEA.2 W, tell cid: ann? annie", names) == \
        "give {seat1} W, tell {seat2}: {seat0}? annie"
    assert fill_seats("give {seat1} W; {seat9} stays", names) == "give Bea.2 W; {seat9} stays"
