"""Jinja2 text rendering: engines return data, templates draw the ASCII."""

from __future__ import annotations

from functools import cache
from typing import Any

import jinja2

from .mail.text import fit, wrap
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
    env.globals.update(wrap=wrap, fill=fit)  # prose to the mail width
    return env


def render(template: str, **context: Any) -> str:
    return environment().get_template(template).render(**context)


def render_board(game, view: dict[str, Any], names: list[str]) -> str:
    """A game's ASCII board: `templates/games/<game.template>` with the seat's view."""
    return render(f"games/{game.template}", view=view, names=names)
