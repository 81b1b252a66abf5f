"""The registry of game engines: a game joins by calling `register` at import time.

Every module in this package is imported by `load_games`, so adding a game is adding
its module (plus its template, rules page and tests) and nothing else.
"""

from __future__ import annotations

import importlib
import pkgutil

from .base import Game, Outcome, Param, State, Verdict

__all__ = ["Game", "Outcome", "Param", "State", "Verdict", "register", "games", "get_game"]

_registry: dict[str, Game] = {}
_loaded = False


def register(game: Game) -> Game:
    """Add a game instance under its command name; a duplicate name is a start-up error."""
    if game.name in _registry:
        raise RuntimeError(f"two games are registered as {game.name!r}")
    _registry[game.name] = game
    return game


def load_games() -> None:
    global _loaded
    _loaded = True
    for module in pkgutil.iter_modules(__path__):
        if module.name != "base":
            importlib.import_module(f"{__name__}.{module.name}")


def games() -> dict[str, Game]:
    """Every registered game by command name, in name order."""
    if not _loaded:
        load_games()
    return dict(sorted(_registry.items()))


def get_game(name: str) -> Game | None:
    """The game a word names: its command name or its title (`superwari`, `Super-Wari`,
    `super-wari`), in any case."""
    word = name.lower()
    found = games().get(word)
    if found is None:
        found = next((game for game in _registry.values() if word in title_words(game)), None)
    return found


def title_words(game: Game) -> set[str]:
    """The ways a game's title is written as one word: `super-wari`, `superwari`."""
    title = game.title.lower()
    return {title, title.replace("-", ""), title.replace(" ", "-"), title.replace(" ", "")}
