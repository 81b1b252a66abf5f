"""Survive's HTML board (issue 18): the table of players and the reader's own hand with
its key, drawn from the same view as the text board and showing no more than it.

Real games by mail (the server's seed is fixed, so the deals are known) give the start,
a middle, an end and a mail with hostile table talk and comment, each as a player and
as an observer gets it, and a 7-player game for the largest mails. Each HTML part is
checked as text (escaping, header cells, nothing a mail client drops or fetches, size)
and in headless Chromium (aligned rows and columns, the text part's table and hand in
the cells, no script, no fetch, no scrolling at 375 px)."""

from __future__ import annotations

import email
import email.policy
import re

import pytest
from conftest import Server
from markupsafe import escape
from test_html_serpent import Tags, assert_mail_safe, html_part, shown_safely
from test_survive_mails import USERS, seven_player_game

from browser import assert_grid, page, requires_chromium, screenshot  # noqa: F401
from pbmserv.games import get_game
from pbmserv.render import render_board_html

SURVIVE = get_game("survive")
PLAYERS = ["alice", "bob", "carol"]
HOSTILE = ["<script>alert(1)</script>", '"><img src=x onerror=alert(1)>', "{{ 7*7 }}"]
COLUMNS = {"search": ["Player", "Lives", "Hand", "Beasts", "Order", "Stockpile"],
           "negotiation": ["Player", "Lives", "Hand", "Beasts", "Done", "Stockpile"]}
LIMIT = 40_000


def move(server: Server, user: str, text: str, comment: str = ""):
    replies = server.send(f"{user}@example.org", f"survive move 101 {user} {user}-pw {text}", comment)
    assert not [r.body for r in replies if "Error" in r.subject], text
    return replies


def to(replies, user: str):
    [reply] = [r for r in replies if r.to == [f"{user}@example.org"]]
    return reply


@pytest.fixture(scope="module")
def mails(tmp_path_factory):
    """Board 101 (alice, bob, carol; dave watching) at its start, in the middle of round 1's
    negotiation (stockpiles, offers, a weapon play pending, a done vote), after hostile
    table talk and comment, and at its end (bob and carol resign): as alice and dave get them."""
    server = Server(tmp_path_factory.mktemp("survive"))
    server.signup(*PLAYERS, "dave")
    start = server.send("alice@example.org", "survive challenge alice alice-pw bob carol -deadline=1d -window=3h")
    server.send("dave@example.org", "survive subscribe 101 dave dave-pw")
    for user in PLAYERS:
        move(server, user, "search stock W" if user != "carol" else "search")
    move(server, "alice", "offer carol give=W get=F")
    move(server, "carol", "offer alice give=S get=W")
    move(server, "carol", "give bob X")
    move(server, "bob", "give carol W,W")
    move(server, "carol", "done")
    middle = move(server, "bob", "weapon life alice")
    hostile = move(server, "alice", "say " + " ".join(HOSTILE), "\n".join(HOSTILE))
    server.send("bob@example.org", "survive resign 101 bob bob-pw")
    end = server.send("carol@example.org", "survive resign 101 carol carol-pw")
    server.sessions.kw["bind"].dispose()
    found = {"start": to(start, "alice"), "middle": to(middle, "alice"), "hostile": to(hostile, "alice"),
             "end": to(end, "alice"), "middle-observer": to(middle, "dave"), "middle-bob": to(middle, "bob")}
    for name, reply in found.items():
        assert "Survive Board 101" in reply.subject, (name, reply.body)
    return found


@pytest.fixture(scope="module")
def seven(tmp_path_factory):
    """Every HTML part of test_survive_mails' 7-player game, with the text part beside it."""
    server = Server(tmp_path_factory.mktemp("seven"))
    seven_player_game(server)
    server.sessions.kw["bind"].dispose()
    parts = []
    for recipients, raw in server.transport.delivered:
        message = email.message_from_bytes(raw, policy=email.policy.default)
        html = message.get_body(("html",))
        if html is not None and "\nSurvive, round " in message.get_body(("plain",)).get_content():
            parts.append((recipients, message["Subject"], message.get_body(("plain",)).get_content(),
                          html.get_content()))
    return parts


def text_table(text: str) -> dict[str, list[str]]:
    """The table of players the text part draws: userid -> its columns (a stockpile that
    wraps joined into one), or [status] for a player out or resigned."""
    lines = text.split("\n")
    first = next(i for i, line in enumerate(lines) if line.startswith("Player "))
    rows: dict[str, list[str]] = {}
    last = ""
    for line in lines[first + 1:]:
        if not line:
            break
        words = line.split()
        if line.startswith(" "):
            rows[last][-1] += " " + " ".join(words)
        else:
            last = words[0]
            rows[last] = words[1:2] if len(words) == 2 else words[1:5] + [" ".join(words[5:])]
    return rows


def text_hand(text: str) -> tuple[list[str], dict[str, str]] | None:
    """The reader's hand in the text part, and its key (letter -> name); None if not shown."""
    match = re.search(r"\nYour hand \([^)]*\): (.*?)(?:  \((.*)\))?\n(?:  \((.*)\)\n)?", text)
    if match is None:
        return None
    key = match[2] or match[3] or ""
    names = dict(item.split(" ", 1) for item in key.split(", ") if item)
    return ([] if match[1] == "empty" else match[1].split()), names


def headers(tags: Tags, scope: str) -> list[str]:
    return [text for s, text in tags.headers if s == scope]


def cells(html: str) -> list[str]:
    return [attrs["data-cell"] for _, attrs in Tags(html).tags if "data-cell" in attrs]


# --- the template on the engine's views ---------------------------------------------------------


def test_the_fragment_uses_nothing_a_mail_client_drops_and_names_its_cells():
    state = SURVIVE.setup(3, {"deadline": 86400, "window": 3600, "first": 0}, None)
    html = render_board_html(SURVIVE, SURVIVE.view(state, 1), PLAYERS)
    for word in ("<style", "<script", "<svg", "src=", "url(", "<img", "class="):
        assert word not in html, word
    tags = assert_mail_safe(html)
    assert headers(tags, "col") == COLUMNS["search"]
    assert headers(tags, "row") == PLAYERS
    assert [attrs["data-board"] for _, attrs in tags.tags if "data-board" in attrs] == ["survive"]
    hand = state.hands[1]
    assert cells(html) == [f"{user}-{column}" for user in PLAYERS
                           for column in ("name", "lives", "hand", "beasts", "order", "stock")] + \
        ["deck", "trash"] + [f"hand-{k}" for k in range(1, len(hand) + 1)]
    for tag, attrs in tags.tags:  # every coloured element says both its text colour and its background
        style = attrs.get("style") or ""
        if re.search(r"(^|;)color:", style) or "background:" in style:
            assert re.search(r"(^|;)color:", style) and "background:" in style, (tag, style)


def test_the_public_view_shows_no_hand_and_a_seat_only_its_own():
    state = SURVIVE.setup(3, {"deadline": 86400, "window": 3600, "first": 0}, None)
    public = render_board_html(SURVIVE, SURVIVE.view(state, None), PLAYERS)
    assert not [name for name in cells(public) if name.startswith("hand-")]
    assert "Your hand" not in public
    for seat in range(3):
        html = render_board_html(SURVIVE, SURVIVE.view(state, seat), PLAYERS)
        assert [name for name in cells(html) if name.startswith("hand-")] == \
            [f"hand-{k}" for k in range(1, len(state.hands[seat]) + 1)]
        assert f"Your hand ({PLAYERS[seat]})" in html


def test_player_names_are_escaped():
    """Userids cannot hold these, but the template must not trust that."""
    state = SURVIVE.setup(3, {"deadline": 86400, "window": 3600, "first": 0}, None)
    html = render_board_html(SURVIVE, SURVIVE.view(state, 0), HOSTILE)
    for text in HOSTILE[:2]:
        assert text not in html and str(escape(text)) in html
    assert_mail_safe(html)


# --- the real mails ---------------------------------------------------------------------------------


@pytest.mark.parametrize("which", ["start", "middle", "end", "hostile", "middle-observer", "middle-bob"])
def test_the_mail_html_is_safe_small_and_headed(mails, which):
    reply = mails[which]
    html = html_part(reply)
    assert len(html.encode()) < LIMIT
    tags = assert_mail_safe(html)
    phase = "search" if which == "start" else "negotiation"
    assert headers(tags, "col")[-6:] == COLUMNS[phase]
    assert set(PLAYERS) <= set(headers(tags, "row"))
    hand = text_hand(reply.body)
    assert (hand is None) == (which == "middle-observer")
    assert len([name for name in cells(html) if name.startswith("hand-")]) == (len(hand[0]) or 1 if hand else 0)


def test_hostile_table_talk_and_comment_are_shown_as_text_never_as_markup(mails):
    html = html_part(mails["hostile"])
    for text in HOSTILE[:2]:
        assert text not in html
        assert html.count(str(escape(text))) >= 2  # the table talk in the round log, and the comment
    assert html.count("{{ 7*7 }}") >= 2


def test_every_mail_of_a_seven_player_game_stays_under_40_kb(seven):
    assert len(seven) > 300
    sizes = sorted((len(html.encode()), subject) for _, subject, _, html in seven)
    assert sizes[-1][0] < LIMIT, sizes[-1]
    for _, subject, text, html in seven[::25]:
        assert_mail_safe(html)
        assert set(USERS) <= set(headers(Tags(html), "row")), subject


def compare(shown, text: str):
    """The table and hand in the browser are those of the text part."""
    table = text_table(text)
    rows = []
    for user, columns in table.items():
        if len(columns) == 1:
            assert shown.cells[f"{user}-status"].text == columns[0]
            rows.append([f"{user}-name", f"{user}-status"])
            continue
        lives, hand, beasts, flag, stock = columns
        seen = {column: shown.cells[f"{user}-{column}"].text for column in ("lives", "hand", "beasts", "stock")}
        assert seen["lives"].count("♥") == int(lives) and len(seen["lives"]) == 3, (user, seen)
        assert (seen["hand"], seen["beasts"], seen["stock"]) == (hand, beasts, stock), (user, seen)
        column = "order" if f"{user}-order" in shown.cells else "done"
        assert shown.cells[f"{user}-{column}"].text == flag
        rows.append([f"{user}-{c}" for c in ("name", "lives", "hand", "beasts", column, "stock")])
    assert [shown.cells[row[0]].text for row in rows] == list(table)
    assert_grid(shown.cells, rows)
    names = [shown.cells[row[0]] for row in rows]  # the userids line up, whatever their rows hold
    assert len({(cell.x, cell.width) for cell in names}) == 1, names
    hand = text_hand(text)
    drawn = sorted(name for name in shown.cells if name.startswith("hand-"))
    if hand is None:
        assert drawn == []
        return
    letters, key = hand
    if not letters:
        assert [shown.cells[name].text for name in drawn] == ["empty"]
        return
    assert [shown.cells[f"hand-{k}"].text.split("\n") for k in range(1, len(letters) + 1)] == \
        [[letter, key[letter]] for letter in letters]
    assert len(drawn) == len(letters)
    assert_grid(shown.cells, [[f"hand-{k}" for k in range(1, len(letters) + 1)]])


@requires_chromium
@pytest.mark.parametrize("which", ["start", "middle", "end", "hostile", "middle-observer", "middle-bob"])
def test_the_board_in_a_browser(page, mails, which):
    reply = mails[which]
    shown = shown_safely(page, html_part(reply), "survive")
    compare(shown, reply.body)
    if which == "hostile":
        body = page.inner_text("body")
        assert all(body.count(text) >= 2 for text in HOSTILE)
    if which == "middle":
        screenshot(shown, "survive")


@requires_chromium
def test_the_largest_mails_in_a_browser(page, seven):
    """The biggest HTML parts of the 7-player game (long userids' stockpiles, long talk)."""
    for _, subject, text, html in sorted(seven, key=lambda part: -len(part[3]))[:3]:
        compare(shown_safely(page, html, "survive"), text)
