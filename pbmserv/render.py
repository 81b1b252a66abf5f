"""Jinja2 text rendering: engines return data, templates draw the ASCII."""

from __future__ import annotations

from functools import cache
from typing import Any

import jinja2

from .mail.text import fit, wrap, wrap_items
from .resources import resource_dir


@cache
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(resource_dir("templates"))),
        autoescape=False,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["ljust"] = lambda text, width: str(text).ljust(width)
    # prose to the mail width: `wrap` fills a paragraph, `fill` only the lines that are
    # too long (a command kept whole), `wrap_items` a list such as the legal moves
    env.globals.update(wrap=wrap, fill=fill, wrap_items=wrap_items)
    return env


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


def render(template: str, **context: Any) -> str:
    return environment().get_template(template).render(**context)


def render_board(game, view: dict[str, Any], names: list[str]) -> str:
    """A game's ASCII board: `templates/games/<game.template>` with the seat's view."""
    return render(f"games/{game.template}", view=view, names=names)
