"""Survival: every rule of shared/rules/survival.md, the board of the seed's Figure 1,
exact error messages, random games, and whole games by mail.

Cells are column letter + row, rows numbered from the top of each column (A1–A3,
B1–B4, C1–C5, D1–D4, E1–E3). Ohs (O) is seat 0 and moves first; Eks (X) is seat 1.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mailgen import mail, write_mbox
from pbmserv.cli import main
from pbmserv.games import Outcome, get_game
from pbmserv.games.survival import CELLS, DIRECTIONS, EKS, OHS, SurvivalState, neighbour, ray
from pbmserv.render import render_board

SURVIVAL = get_game("survival")
NAMES = ["alice", "bob"]
GOLDEN = Path(__file__).parent / "golden"
SEED = Path(__file__).parent.parent.parent / "shared" / "seeds" / "000_aca8fc25fa967fef.txt"

# A legal game to a full board: Ohs places the 19th piece on A1 and Eks, whose last
# piece B3 points SW at the taken A3, cannot move.
FULL_GAME = [
    "E1/S", "B2/S", "E3/NW", "B4/NE", "C3/SW", "E2/NW", "A3/SE", "D2/S", "C5/NE", "D3/SW",
    "D4/NW", "C4/N", "A2/NE", "C2/NW", "D1/NW", "B1/S", "C1/SW", "B3/SW", "A1/S",
]


def play(*moves: str, state: SurvivalState | None = None) -> SurvivalState:
    """Play `moves` in turn from the start (or `state`), each checked as sent."""
    state = SURVIVAL.setup(2, {}, None) if state is None else state
    for move in moves:
        seat = state.to_move
        verdict = SURVIVAL.check(state, seat, move)
        assert verdict.ok, (move, verdict.error)
        SURVIVAL.apply(state, seat, verdict.move, None)
    return state


def error(state: SurvivalState, text: str, seat: int | None = None) -> str | None:
    return SURVIVAL.check(state, state.to_move if seat is None else seat, text).error


def cells_of(moves: list[str]) -> list[str]:
    """The cells of a list of legal moves, each once, in order."""
    return list(dict.fromkeys(move.split("/")[0] for move in moves))


def board(state: SurvivalState, seat: int | None = None) -> str:
    return render_board(SURVIVAL, SURVIVAL.view(state, seat), NAMES)


# --- metadata -------------------------------------------------------------------------


def test_metadata():
    assert (SURVIVAL.name, SURVIVAL.title, SURVIVAL.template) == ("survival", "Survival", "survival.txt")
    assert (SURVIVAL.min_players, SURVIVAL.max_players, SURVIVAL.params) == (2, 2, ())
    # no example cell in the syntax: errors show it, and any one cell may be taken
    assert SURVIVAL.move_syntax.endswith(": CELL/DIRECTION") and "\n" not in SURVIVAL.move_syntax
    assert SURVIVAL.summary and "\n" not in SURVIVAL.summary


def test_help_is_wrapped_and_in_our_own_words():
    text = SURVIVAL.help_text
    assert all(len(line) <= 70 for line in text.splitlines())
    for needed in ("C3/NE", "C3 NE", "C3-NE", "c3ne", "Ohs", "Eks", "NE, SE", "no E or W", "19"):
        assert needed in " ".join(text.split())
    seed = " ".join(SEED.read_text().split()) if SEED.exists() else ""
    words = " ".join(text.split()).split(" ")
    # no run of 8 words is copied from the seed
    assert not [i for i in range(len(words) - 8) if " ".join(words[i:i + 8]) in seed]


# --- the board ------------------------------------------------------------------------

NEIGHBOURS = {  # cell: neighbours in the order N, NE, SE, S, SW, NW
    "A1": (None, "B1", "B2", "A2", None, None),
    "A2": ("A1", "B2", "B3", "A3", None, None),
    "A3": ("A2", "B3", "B4", None, None, None),
    "B1": (None, "C1", "C2", "B2", "A1", None),
    "B2": ("B1", "C2", "C3", "B3", "A2", "A1"),
    "B3": ("B2", "C3", "C4", "B4", "A3", "A2"),
    "B4": ("B3", "C4", "C5", None, None, "A3"),
    "C1": (None, None, "D1", "C2", "B1", None),
    "C2": ("C1", "D1", "D2", "C3", "B2", "B1"),
    "C3": ("C2", "D2", "D3", "C4", "B3", "B2"),
    "C4": ("C3", "D3", "D4", "C5", "B4", "B3"),
    "C5": ("C4", "D4", None, None, None, "B4"),
    "D1": (None, None, "E1", "D2", "C2", "C1"),
    "D2": ("D1", "E1", "E2", "D3", "C3", "C2"),
    "D3": ("D2", "E2", "E3", "D4", "C4", "C3"),
    "D4": ("D3", "E3", None, None, "C5", "C4"),
    "E1": (None, None, None, "E2", "D2", "D1"),
    "E2": ("E1", None, None, "E3", "D3", "D2"),
    "E3": ("E2", None, None, None, "D4", "D3"),
}


def test_cells_and_directions():
    assert CELLS == tuple(NEIGHBOURS)
    assert len(CELLS) == 19
    assert DIRECTIONS == ("N", "NE", "SE", "S", "SW", "NW")


@pytest.mark.parametrize("cell", list(NEIGHBOURS))
def test_neighbour_of_every_cell_in_every_direction(cell):
    assert tuple(neighbour(cell, d) for d in DIRECTIONS) == NEIGHBOURS[cell]


def test_the_rules_example_c3():
    assert [neighbour("C3", d) for d in DIRECTIONS] == ["C2", "D2", "D3", "C4", "B3", "B2"]


def test_neighbours_agree_with_the_figure():
    """Each neighbour stands where the seed's figure puts it: N/S 4 lines up/down,
    NE/SE/SW/NW 7 columns across and 2 lines up or down."""
    figure = FIGURE.splitlines()
    where = {m[0]: (m.start(), y) for y, line in enumerate(figure) for m in re.finditer(r"[A-E][1-5]", line)}
    at = {xy: cell for cell, xy in where.items()}
    step = {"N": (0, -4), "NE": (7, -2), "SE": (7, 2), "S": (0, 4), "SW": (-7, 2), "NW": (-7, -2)}
    for cell, (x, y) in where.items():
        for d, (dx, dy) in step.items():
            assert neighbour(cell, d) == at.get((x + dx, y + dy)), (cell, d)


def test_neighbours_are_mutual():
    opposite = dict(zip(DIRECTIONS, ("S", "SW", "NW", "N", "NE", "SE")))
    for cell in CELLS:
        for d in DIRECTIONS:
            other = neighbour(cell, d)
            if other is not None:
                assert neighbour(other, opposite[d]) == cell


@pytest.mark.parametrize(
    "cell, direction, cells",
    [
        ("C5", "N", ["C4", "C3", "C2", "C1"]),
        ("C1", "S", ["C2", "C3", "C4", "C5"]),
        ("A1", "SE", ["B2", "C3", "D3", "E3"]),
        ("A3", "NE", ["B3", "C3", "D2", "E1"]),
        ("E3", "NW", ["D3", "C3", "B2", "A1"]),
        ("E1", "SW", ["D2", "C3", "B3", "A3"]),
        ("C1", "SW", ["B1", "A1"]),
        ("C4", "NW", ["B3", "A2"]),
        ("B1", "SE", ["C2", "D2", "E2"]),
        ("E2", "NE", []),
        ("A2", "NW", []),
        ("C1", "N", []),
        ("D4", "SE", []),
    ],
)
def test_rays_run_to_the_edge(cell, direction, cells):
    assert ray(cell, direction) == cells


# --- placing --------------------------------------------------------------------------


def test_start_ohs_may_place_anywhere_pointing_anywhere():
    state = SURVIVAL.setup(2, {}, None)
    assert SURVIVAL.to_act(state) == frozenset({OHS})
    assert SURVIVAL.result(state) is None
    legal = SURVIVAL.legal_moves(state, OHS)
    assert legal == [f"{c}/{d}" for c in CELLS for d in DIRECTIONS]
    assert len(legal) == 114
    assert SURVIVAL.legal_moves(state, EKS) == []


def test_eks_first_piece_may_go_on_any_vacant_cell_pointing_anywhere():
    state = play("C3/NE")  # Ohs's arrow says nothing about Eks's piece
    assert SURVIVAL.to_act(state) == frozenset({EKS})
    assert SURVIVAL.legal_moves(state, EKS) == [f"{c}/{d}" for c in CELLS if c != "C3" for d in DIRECTIONS]
    assert error(state, "C3/N") == "C3 is taken"
    play("A3/SW", state=state)  # not on Ohs's ray, and pointing off the board: legal
    assert state.board == {"C3": [OHS, "NE"], "A3": [EKS, "SW"]}


def test_later_pieces_go_on_the_ray_of_ones_own_previous_piece():
    state = play("C3/NE", "A1/S")
    assert cells_of(SURVIVAL.legal_moves(state, OHS)) == ["D2", "E1"]  # C3's ray, not A1's
    play("E1/SW", state=state)
    assert cells_of(SURVIVAL.legal_moves(state, EKS)) == ["A2", "A3"]  # A1's ray
    play("A3/N", state=state)
    # E1 pointing SW: D2, C3 (taken), B3, A3 (taken)
    assert cells_of(SURVIVAL.legal_moves(state, OHS)) == ["B3", "D2"]
    assert len(SURVIVAL.legal_moves(state, OHS)) == 12


def test_pieces_on_the_ray_do_not_block_it():
    state = play("C1/S", "C2/N")
    assert SURVIVAL.legal_moves(state, OHS) == [f"{c}/{d}" for c in ("C3", "C4", "C5") for d in DIRECTIONS]
    play("C5/N", state=state)  # the far end of the ray, past C2, C3 and C4
    assert state.board["C5"] == [OHS, "N"]


def test_a_piece_may_be_placed_at_any_distance_along_the_ray():
    for cell in ("B2", "C3", "D3", "E3"):
        state = play("A1/SE", "C1/S")
        play(f"{cell}/N", state=state)
        assert state.board[cell] == [OHS, "N"]


def test_pieces_left_count_down():
    state = play("C3/NE", "A1/S", "D2/N")
    assert state.placed == [2, 1]
    assert SURVIVAL.view(state, None)["pieces_left"] == [8, 9]


# --- the end --------------------------------------------------------------------------


def test_an_arrow_off_the_board_loses_on_the_next_turn():
    state = play("A1/NW", "C3/N")  # A1 pointing NW has no cells at all
    assert SURVIVAL.to_act(state) == frozenset()
    assert SURVIVAL.result(state) == Outcome(winners=(EKS,))
    assert SURVIVAL.legal_moves(state, OHS) == []
    assert error(state, "B1/N", seat=OHS) == "the game is over"
    assert board(state).endswith(
        "alice (O) cannot move: A1 points NW, off the board\n"
        "Pieces left: alice (O) 9, bob (X) 9\n"
        "Game won by bob.\n"
    )


def test_a_ray_whose_cells_are_all_taken_loses():
    # Ohs C4 points NW at B3 (Eks's) and A2; Eks B3 points N at B2 and B1.
    state = play("C4/NW", "B3/N", "A2/S", "B2/NE", "A3/N")
    assert cells_of(SURVIVAL.legal_moves(state, EKS)) == ["C2", "D1"]  # B2 pointing NE
    play("C2/SW", state=state)  # points SW at B2 and A2, both taken
    assert cells_of(SURVIVAL.legal_moves(state, OHS)) == ["A1"]  # A3 pointing N, past A2
    assert SURVIVAL.to_act(state) == frozenset({OHS})
    play("A1/S", state=state)
    assert SURVIVAL.result(state) == Outcome(winners=(OHS,))
    assert SURVIVAL.to_act(state) == frozenset()
    assert board(state).endswith(
        "bob (X) cannot move: the ray of C2 pointing SW has no vacant cell\n"
        "Pieces left: alice (O) 6, bob (X) 7\n"
        "Game won by alice.\n"
    )


def test_a_full_board_game_ohs_wins_when_eks_cannot_move():
    state = SURVIVAL.setup(2, {}, None)
    for number, move in enumerate(FULL_GAME, start=1):
        assert SURVIVAL.to_act(state) == frozenset({(number - 1) % 2}), number
        assert SURVIVAL.result(state) is None
        play(move, state=state)
    assert len(state.board) == 19
    assert state.placed == [10, 9]
    assert SURVIVAL.to_act(state) == frozenset()
    assert SURVIVAL.result(state) == Outcome(winners=(OHS,))
    assert board(state).endswith("bob (X) cannot move: the board is full\n"
                                 "Pieces left: alice (O) 0, bob (X) 1\nGame won by alice.\n")


@pytest.mark.parametrize("loser, winner", [(OHS, EKS), (EKS, OHS)])
def test_resigning_ends_the_game_for_the_other_player(loser, winner):
    state = play("C3/NE")
    SURVIVAL.resign(state, loser)
    assert SURVIVAL.result(state) == Outcome(winners=(winner,))
    assert SURVIVAL.to_act(state) == frozenset()
    assert SURVIVAL.legal_moves(state, EKS) == []
    assert error(state, "A1/N", seat=EKS) == "the game is over"
    name = NAMES[loser]
    assert board(state).endswith(f"{name} ({'OX'[loser]}) resigned\n"
                                 f"Pieces left: alice (O) 9, bob (X) 10\nGame won by {NAMES[winner]}.\n")


def test_apply_refuses_an_illegal_move():
    with pytest.raises(ValueError):
        SURVIVAL.apply(play("C3/NE", "A1/S"), OHS, "C2/N", None)


# --- move text ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text", ["C3/NE", "C3 NE", "C3-NE", "c3ne", "c3/ne", "C3ne", " c3 - Ne\n", "C3 / NE", "\tc3  ne "]
)
def test_move_spellings(text):
    assert SURVIVAL.check(SURVIVAL.setup(2, {}, None), OHS, text).move == "C3/NE"


@pytest.mark.parametrize("direction", DIRECTIONS)
def test_every_direction_parses(direction):
    assert SURVIVAL.check(SURVIVAL.setup(2, {}, None), OHS, f"a1{direction.lower()}").move == f"A1/{direction}"


SHAPE = "(columns A–E; A and E have rows 1–3, B and D 1–4, C 1–5)"
NOT_A_MOVE = "is not a move; send a cell and the direction of its arrow, e.g. B3/NE"


@pytest.mark.parametrize(
    "text, message",
    [
        # Ohs's last piece is C4 pointing NW (ray B3, A2); Eks holds C3.
        ("B2/S", "B2 is not on the ray of your last piece (C4 pointing NW): you may place on B3 or A2"),
        ("b2 s", "B2 is not on the ray of your last piece (C4 pointing NW): you may place on B3 or A2"),
        ("C3/S", "C3 is taken"),
        ("C4/S", "C4 is taken"),
        ("B3/E", "there is no direction E: use N, NE, SE, S, SW or NW"),
        ("B3 w", "there is no direction W: use N, NE, SE, S, SW or NW"),
        ("B3/NEE", "there is no direction NEE: use N, NE, SE, S, SW or NW"),
        ("C3/E", "there is no direction E: use N, NE, SE, S, SW or NW"),
        ("F1/N", f"there is no cell F1 {SHAPE}"),
        ("f1 n", f"there is no cell F1 {SHAPE}"),
        ("A4/N", f"there is no cell A4 {SHAPE}"),
        ("C6/N", f"there is no cell C6 {SHAPE}"),
        ("C0/N", f"there is no cell C0 {SHAPE}"),
        ("C03/N", f"there is no cell C03 {SHAPE}"),
        ("F1", f"there is no cell F1 {SHAPE}"),
        ("B3", "B3 needs a direction for its arrow: use N, NE, SE, S, SW or NW, e.g. B3/NE"),
        ("b3/", "B3 needs a direction for its arrow: use N, NE, SE, S, SW or NW, e.g. B3/NE"),
        ("", "send a cell and the direction of its arrow, e.g. B3/NE"),
        (" \n", "send a cell and the direction of its arrow, e.g. B3/NE"),
        ("hello", f'"hello" {NOT_A_MOVE}'),
        ("NE C3", f'"NE C3" {NOT_A_MOVE}'),
        ("C3 N E", f'"C3 N E" {NOT_A_MOVE}'),
        ("C3//NE", f'"C3//NE" {NOT_A_MOVE}'),
        ("３C/N", f'"３C/N" {NOT_A_MOVE}'),
        ("C３/N", f'"C３/N" {NOT_A_MOVE}'),
        ("B3/N\x00", f'"B3/N?" {NOT_A_MOVE}'),
        ("a" * 100_000, f'"aaaaaaaaaaaaaaaaaaaa..." {NOT_A_MOVE}'),
    ],
)
def test_bad_moves_get_precise_errors(text, message):
    state = play("C4/NW", "C3/N")
    assert error(state, text) == message


def test_the_start_error_suggests_c3_ne():
    assert error(SURVIVAL.setup(2, {}, None), "") == "send a cell and the direction of its arrow, e.g. C3/NE"


def test_a_ray_with_one_free_cell_names_it_alone():
    state = play("C4/NW", "B3/N")
    assert error(state, "C5/N") == "C5 is not on the ray of your last piece (C4 pointing NW): you may place on A2"


def test_only_the_seat_to_move_may_move():
    state = SURVIVAL.setup(2, {}, None)
    assert error(state, "C3/N", seat=EKS) == "it is not your turn; {seat0} is to move"
    assert error(play("C3/N"), "C2/N", seat=OHS) == "it is not your turn; {seat1} is to move"


def test_every_legal_move_checks_as_itself():
    state = play("C1/S", "C2/N")
    for move in SURVIVAL.legal_moves(state, OHS):
        assert SURVIVAL.check(state, OHS, move.lower().replace("/", " ")).move == move


# --- the board in a mail --------------------------------------------------------------

FIGURE = """\
                 _______
                /       \\
          _____/         \\_____
         /         C1          \\
   _____/                       \\_____
  /         B1            D1          \\
 /                                     \\
/    A1            C2            E1     \\
\\                                       /
 \\          B2            D2           /
 /                                     \\
/    A2            C3            E2     \\
\\                                       /
 \\          B3            D3           /
 /                                     \\
/    A3            C4            E3     \\
\\                                       /
 \\          B4            D4           /
  \\_____                         _____/
        \\          C5           /
         \\_____           _____/
               \\         /
                \\_______/
"""


def test_figure_is_the_seeds():
    if not SEED.exists():
        pytest.skip("the seed is not beside this checkout")
    lines = [line.rstrip() for line in SEED.read_text().splitlines()]
    start = lines.index("                 _______")
    assert "\n".join(lines[start:start + 23]) + "\n" == FIGURE


def golden(name: str) -> str:
    return (GOLDEN / f"survival_{name}.txt").read_text()


def test_start_board_is_figure_1_for_every_viewer():
    state = SURVIVAL.setup(2, {}, None)
    text = golden("start")
    assert text.startswith(FIGURE + "\n")
    for seat in (None, OHS, EKS):
        assert board(state, seat) == text
    assert text.endswith(
        "\nalice (O) to move\n"
        "Pieces left: alice (O) 10, bob (X) 10\n"
        "alice may place on any cell, the arrow pointing in any direction\n"
    )


def test_second_move_board():
    assert board(play("C3/NE")) == golden("second")


def test_midgame_board():
    state = play(*FULL_GAME[:9])
    assert board(state) == golden("midgame")
    assert board(state, EKS) == board(state, OHS)


def test_full_board():
    assert board(play(*FULL_GAME)) == golden("full")


def test_boards_keep_the_outline_and_have_no_trailing_spaces():
    """Pieces replace names inside the figure: the outline characters never move."""
    outline = [re.sub(r"[A-E][1-5]", "  ", line) for line in FIGURE.splitlines()]
    for name in ("start", "second", "midgame", "full"):
        lines = golden(name).splitlines()
        assert all(line == line.rstrip() for line in lines)
        drawn = [re.sub(r"[OX] (NE|SE|SW|NW|N |S )|[A-E][1-5]|[OX] (N|S)$", lambda m: " " * len(m[0]), line)
                 for line in lines[:23]]
        assert [line.rstrip() for line in drawn] == [line.rstrip() for line in outline], name


def test_occupied_cells_show_owner_and_arrow_centred_on_the_name():
    text = board(play("A1/NE", "E3/NW", "B1/S"))
    lines = text.splitlines()
    assert lines[5] == "  /        O S            D1          \\"
    assert lines[7] == "/   O NE           C2            E1     \\"
    assert lines[15] == "/    A3            C4           X NW    \\"
    assert text.endswith(
        "\nbob (X) to move\n"
        "Pieces left: alice (O) 8, bob (X) 9\n"
        "bob may place on D3, C3 or B2, on the ray of E3 pointing NW\n"
    )


# --- random games ---------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(choices=st.lists(st.integers(min_value=0, max_value=10_000), min_size=19, max_size=19))
def test_random_games_end_within_19_moves_with_the_right_winner(choices):
    state = SURVIVAL.setup(2, {}, None)
    moves = 0
    while SURVIVAL.to_act(state):
        seat = state.to_move
        assert SURVIVAL.to_act(state) == frozenset({seat})
        legal = SURVIVAL.legal_moves(state, seat)
        assert legal, "a seat to act always has a legal move"
        assert SURVIVAL.legal_moves(state, 1 - seat) == []
        move = legal[choices[moves] % len(legal)]
        assert SURVIVAL.check(state, seat, move).move == move
        SURVIVAL.apply(state, seat, move, None)
        moves += 1
        data = SURVIVAL.serialise(state)
        restored = SURVIVAL.restore(json.loads(json.dumps(data)))
        assert SURVIVAL.serialise(restored) == data
        assert SURVIVAL.legal_moves(restored, restored.to_move) == SURVIVAL.legal_moves(state, state.to_move)
        assert board(restored) == board(state)
    assert moves <= 19
    assert len(state.board) == moves and sum(state.placed) == moves
    assert max(state.placed) <= 10
    loser = state.to_move  # the player who could not move
    assert SURVIVAL.allowed_cells(state, loser) == []
    assert SURVIVAL.result(state) == Outcome(winners=(1 - loser,))
    assert moves == 19 or loser == moves % 2
    assert board(state).endswith(f"Game won by {NAMES[1 - loser]}.\n")


# --- whole games by mail (random whole games: tests/test_replay.py) ---------------------


def test_the_full_board_game_by_mail_with_every_spelling_and_a_wrong_move(tmp_path, monkeypatch, capsys):
    from test_replay import replies

    monkeypatch.chdir(tmp_path)
    for name in ("PBMSERV_SERVER_SEED", "PBMSERV_DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PBMSERV_SECURITY_PASSWORD_COST", "fast")
    clock = datetime(2026, 11, 1, 9, 0, tzinfo=timezone.utc)
    mails = []

    def send(sender: str, subject: str) -> None:
        mails.append(mail(f"{sender}@example.org", subject, "", clock + timedelta(hours=len(mails)), len(mails) + 1))

    send("alice", "signup alice alice-secret")
    send("bob", "signup bob bob-secret")
    send("alice", "survival challenge alice alice-secret bob")
    spellings = [str.lower, lambda m: m.replace("/", "-"), lambda m: m.replace("/", ""), lambda m: m]
    for number, move in enumerate(FULL_GAME, start=1):
        userid = NAMES[(number - 1) % 2]
        if number == 4:  # bob's B2 points S: C3 is not on that ray
            send(userid, f"survival move 101 {userid} {userid}-secret C3/N")
        send(userid, f"survival move 101 {userid} {userid}-secret {spellings[number % 4](move)}")
    send("alice", "survival show 101")
    box = write_mbox(tmp_path / "game.mbox", mails)
    assert main(["replay", str(box), "--outbox", "out"]) == 0
    sent = replies(tmp_path / "out")
    errors = [body for _to, subject, body in sent if "rror" in subject]
    assert len(errors) == 1
    assert errors[0].startswith("Move C3/N is not legal on board 101: C3 is not on the ray of your last piece\n"
                                "(B2 pointing S): you may place on B3 or B4.\n")
    final = [body for _to, subject, body in sent if subject == "Survival Board 101"]
    assert len(final) == 3
    board_part = final[-1].split("\n-- \n")[0].rstrip("\n")
    assert golden("full").rstrip("\n") in board_part
    assert board_part.endswith("\nbob (X) cannot move: the board is full\n"
                               "Pieces left: alice (O) 0, bob (X) 1\nGame won by alice.")
