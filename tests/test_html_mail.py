"""The HTML part of mails that show a board (outbound.html_body, templates/board.html
and frame.html): every such mail is multipart/alternative with the text part first and
unchanged; the HTML part holds the status, the deadlines, the numbered recent moves,
the comments and how to answer; every player text in it is escaped; it asks nothing of
the mail client but inline styles (no <style>, scripts, SVG or anything fetched); and
its bytes, like the text's, are the same every time (replays)."""

from __future__ import annotations

import html
import re
from datetime import timedelta

import pytest
from markupsafe import escape

from conftest import body_of
from pbmserv.config import load_config
from pbmserv.mail.outbound import compose

ALICE, BOB, CAROL = "alice@example.org", "bob@example.org", "carol@example.org"
HOSTILE = ["<script>alert(1)</script>", '"><img src=x onerror=alert(1)>', "{{ 7*7 }}"]
FORBIDDEN = re.compile(r"<(script|style|svg|img|link|iframe|object|embed|base|form)\b"
                       r"|<[^>]*\b(src|href|on\w+|background)\s*=|<[^>]*url\(", re.IGNORECASE)


def html_part(reply) -> str:
    assert reply.message.get_content_type() == "multipart/alternative", reply.subject
    plain, rich = reply.message.iter_parts()
    assert (plain.get_content_type(), rich.get_content_type()) == ("text/plain", "text/html")
    assert plain.get_content() == reply.body  # the text part is the mail as it always was
    return rich.get_content()


def assert_clean(page: str) -> None:
    assert FORBIDDEN.findall(page) == []  # in tags: the same words as text, escaped, are harmless
    assert "49" not in page  # a player's {{ 7*7 }} is text, never a template


@pytest.fixture
def game(server):
    server.signup("alice", "bob", "carol")
    server.send(ALICE, "superwari challenge alice alice-pw bob")
    server.one(CAROL, "superwari subscribe 101 carol carol-pw")
    return server


def test_a_board_mail_has_both_parts_with_the_status_moves_comments_and_reply_hint(game):
    game.send(ALICE, "superwari move 101 alice alice-pw c", "Your go, Bob.")
    replies = game.send(BOB, "superwari move 101 bob bob-pw d", "Thanks!\nSee you.")
    assert sorted(r.to for r in replies) == [[ALICE], [BOB], [CAROL]]
    for reply in replies:
        page = html_part(reply)
        assert_clean(page)
        assert "<h2 " in page and ">Super-Wari Board 101</h2>" in page
        assert ">It is alice&#39;s turn.</p>" in page
        assert "Next move: #3<br>" in page
        assert '<th scope="col"' in page and ">#1 c</td>" in page and ">#2 d</td>" in page
        assert "bob writes:</p>" in page and ">Thanks!<br>\nSee you.</p>" in page
        assert 'data-board="superwari"' in page
        answer = "reply to this mail with just your move" in page
        assert answer == (reply.to != [CAROL])  # observers have no seat to play
        assert 'pbmserv at pbmserv@localhost: send "help" for the commands.' in html.unescape(page)


def test_every_mail_that_shows_a_board_has_an_html_part(game):
    game.send(ALICE, "superwari move 101 alice alice-pw c")
    shows = {
        "show": game.one(CAROL, "superwari show 101"),
        "show legal": game.one(CAROL, "superwari show 101 legal"),
        "show #1": game.one(CAROL, "superwari show 101#1"),
        "showas": game.one(BOB, "superwari showas 101 bob bob-pw"),
        "preview": game.one(BOB, "superwari preview 101 bob bob-pw d"),
        "submit": game.one(BOB, "superwari submit 101 bob bob-pw d"),
        "error": game.one(ALICE, "superwari move 101 alice alice-pw d"),  # not alice's turn
    }
    for kind, reply in shows.items():
        page = html_part(reply)
        assert_clean(page)
        assert 'data-board="superwari"' in page, kind
    legal = html.unescape(html_part(shows["show legal"]))
    assert "Legal moves" in shows["show legal"].body and "Legal moves" in legal
    error = html.unescape(html_part(shows["error"]))
    assert error.index("It is not alice's turn") < error.index('data-board="superwari"') < error.index("Your message:")
    assert "alice-pw" not in error
    # the game's end: the final record of every move
    final = game.send(BOB, "superwari resign 101 bob bob-pw")
    assert sorted(r.to for r in final) == [[ALICE], [BOB], [CAROL]]
    assert all("Game won by alice." in html.unescape(html_part(r)) for r in final)


def test_nags_have_an_html_part_and_mails_without_a_board_do_not(server):
    server.signup("alice", "bob")
    server.send(ALICE, "superwari challenge alice alice-pw bob -nagtime=1d")
    [nag] = server.wait(timedelta(days=1, minutes=1))
    assert nag.subject == "Nag: Super-Wari Board 101 alice"
    assert "Reminder: it has been alice&#39;s turn" in html_part(nag)
    for reply in (server.one(ALICE, "help"), server.one(ALICE, "superwari games"), server.one(ALICE, "list")):
        assert reply.message.get_content_type() == "text/plain"


@pytest.mark.parametrize("hostile", HOSTILE)
def test_player_texts_are_escaped_in_the_html_part(game, hostile):
    replies = game.send(ALICE, "superwari move 101 alice alice-pw c", f"Look: {hostile}")
    for reply in replies:
        page = html_part(reply)
        assert_clean(page)
        assert escape(f"Look: {hostile}") in page
    # a Subject quoted back in an error that shows the board
    error = game.one(ALICE, f"superwari move 101 alice alice-pw {hostile}")
    page = html_part(error)
    assert_clean(page)
    assert escape(hostile.split()[0]) in page


def test_the_html_part_stays_within_78_columns_on_the_wire_and_repeats_byte_for_byte(tmp_path):
    config = load_config(environ={}).with_overrides(server={"seed": "test"})
    page = "<p>" + "x" * 500 + " &amp; é</p>\n" * 3
    raws = [compose(config.server.address, [ALICE], "Super-Wari Board 101", "Board\n", "<a.1@localhost>", config_time(), None,
                    None, page) for _ in range(2)]
    assert raws[0] == raws[1]  # the boundary comes from the Message-ID: a replay writes the same mail
    assert max(len(line) for line in raws[0].split(b"\n")) <= 78
    boundary = re.search(rb'boundary="([^"]+)"', raws[0])[1]
    assert raws[0].count(b"--" + boundary) == 3  # two parts and the closing line


def config_time():
    from conftest import CLOCK_START
    return CLOCK_START


def test_the_html_part_of_a_digest_draws_each_board(game):
    game.send(BOB, "superwari challenge bob bob-pw alice")  # board 102: alice must act on both
    game.one(ALICE, "set alice alice-pw mail digest")
    game.send(BOB, "superwari move 102 bob bob-pw c", "<b>bold</b>")
    [digest] = game.wait(timedelta(days=1))
    page = html_part(digest)
    assert_clean(page)
    assert page.count('data-board="superwari"') == 2
    assert "&lt;b&gt;bold&lt;/b&gt;" in page
    assert body_of(digest).startswith("Your daily digest, alice: your move on Super-Wari 101, Super-Wari 102.\n")
