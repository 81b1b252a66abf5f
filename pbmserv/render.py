"""Jinja2 rendering: engines return data, templates draw the ASCII board and, for
mail clients with proportional fonts, the same board as an HTML table."""

from __future__ import annotations

import json
import re
from functools import cache, lru_cache
from typing import Any

import jinja2
from markupsafe import Markup, escape

from .mail.text import fit, wrap, wrap_items
from .resources import resource_dir


class Environment(jinja2.Environment):
    """Jinja's environment, but `view.rows` on a dict that has the key "rows" reads it
    at once. Jinja tries the attribute first and catches the AttributeError: our
    templates draw from views and contexts that are dicts, and that exception was a
    tenth of a text board's time in the worker's profile. A dict's methods stay
    reachable, as `key.update(...)` is, unless it holds a key of the same name."""

    def getattr(self, obj: Any, attribute: str) -> Any:
        if type(obj) is dict and attribute in obj:
            return obj[attribute]
        return super().getattr(obj, attribute)


@cache
def environment(html: bool = False) -> jinja2.Environment:
    """The text templates' environment, or with `html` the HTML templates' one, whose
    every value is escaped (a comment, a userid, a quoted subject is a stranger's)."""
    env = Environment(
        loader=jinja2.FileSystemLoader(str(resource_dir("templates"))),
        autoescape=html,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        auto_reload=False,  # the templates ship with the code: no stat of the file for each mail
    )
    env.filters["ljust"] = lambda text, width: str(text).ljust(width)
    env.filters["padded"] = padded
    env.filters["paragraphs"] = paragraphs
    # prose to the mail width: `wrap` fills a paragraph, `fill` only the lines that are
    # too long (a command kept whole), `wrap_items` a list such as the legal moves
    env.globals.update(wrap=wrap, fill=fill, wrap_items=wrap_items)
    return env


def padded(cells: list[Any], width: int) -> str:
    """The cells joined, each `width` wide: `map("ljust", width)|join` in one filter, which
    costs a fifth as much (the move table: 133 -> 30 us a board on this machine)."""
    return "".join(str(cell).ljust(width) for cell in cells)


def is_command(text: str) -> bool:
    """Whether `text` starts with a command (`superwari move 101 ...`, `GAME move ...`,
    `forgot bob`): what `fill` keeps whole on a line of its own."""
    from .commands.base import CommandError, resolve  # the commands render with this module

    words = text.split()
    if words[:1] == ["GAME"]:
        words[0] = "superwari"  # the placeholder of any game's name
    try:
        return resolve(words) is not None
    except CommandError:  # a family's unknown second word (`change colour`): still a command
        return True


def fill(text: str) -> str:
    """`text` with its over-long lines filled, a command after a colon kept whole and
    quoted lines kept: for a template's prose, and for every mail body queued."""
    return fit(text, is_command)


def compile_templates() -> None:
    """Compile every template now rather than for the first mail that needs it."""
    for name in environment().list_templates():
        loaded(name, name.endswith(".html"))


@cache  # called with both arguments given, so that each template has one entry
def loaded(name: str, html: bool) -> jinja2.Template:
    """A template, with its globals in one dict: Jinja keeps a template's globals and
    the environment's as a ChainMap, which every render copies key by key (a third of
    a board template's time); ours are all set when the environment is made."""
    template = environment(html).get_template(name)
    template.globals = dict(template.globals)
    return template


def render(template: str, **context: Any) -> str:
    return loaded(template, False).render(**context)


def render_html(template: str, **context: Any) -> Markup:
    """An HTML template's output, marked safe: one template may hold another's."""
    return Markup(loaded(template, True).render(**context))


def paragraphs(text: str, keep_lines: bool = False) -> list[Markup]:
    """Text for an HTML part, escaped: a paragraph at each blank line, whose lines,
    broken for 78 columns, are joined again; unless one is quoted or indented (the
    player's own mail, a list) or they are a player's own (`keep_lines`), and then
    the lines stay lines."""
    result = []
    for block in re.split(r"\n[ \t]*\n", text.strip("\n")):
        lines = block.split("\n")
        if keep_lines or any(line[:1] in (">", " ") for line in lines):
            result.append(Markup("<br>\n").join(
                Markup("&nbsp;" * (len(line) - len(line.lstrip(" ")))) + escape(line.lstrip(" ")) for line in lines))
        elif block.strip():
            result.append(escape(" ".join(line.strip() for line in lines)))
    return result


def render_board(game, view: dict[str, Any], names: list[str]) -> str:
    """A game's ASCII board: `templates/games/<game.template>` with the seat's view."""
    return render(f"games/{game.template}", view=view, names=names)


def render_board_html(game, view: dict[str, Any], names: list[str]) -> str:
    """The same board as an HTML table: `templates/games/<name>.html`, from the same
    view data as the text template. Drawn once for the readers who see the same
    board: the sender renders a move's board mails one after another, and in most
    games every player's view is the same (a Serpent board takes 0.5 to 0.8 ms to
    draw, its view 20 us to write as JSON)."""
    return drawing(game, json.dumps(view, sort_keys=True), tuple(names))


@lru_cache(maxsize=16)
def drawing(game, view: str, names: tuple[str, ...]) -> Markup:
    """`render_board_html` of a view written as JSON."""
    return render_html(f"games/{game.template.removesuffix('.txt')}.html", view=json.loads(view), names=list(names))


def board_html(game, view: dict[str, Any], context: dict[str, Any]) -> Markup:
    """A board mail's board as HTML (`templates/board.html`), from the same data as its
    text (`play.show_board`'s context) with the game's drawing of `view` in it."""
    return render_html("board.html", **context, drawing=render_board_html(game, view, context["names"]))
