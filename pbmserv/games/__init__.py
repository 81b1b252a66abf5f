"""The registry of game engines: a game joins by calling `register` at import time.

Every module in this package is imported by `load_games`, so adding a game is adding
its module (plus its template, rules page and tests) and nothing else.
"""

from __future__ import annotations

import importlib
import pkgutil
import threading

from .base import Game, Outcome, Param, State, Verdict

__all__ = ["Game", "Outcome", "Param", "State", "Verdict", "register", "games", "game_words", "get_game"]

_registry: dict[str, Game] = {}
_words: dict[str, Game] = {}  # game_words(), made once all games are loaded ({}: not yet)
_loaded = False  # loading begun
_ready = False  # loading done
_loading = threading.RLock()  # the worker, the scheduler and the listener may ask at once


def register(game: Game) -> Game:
    """Add a game instance under its command name; a duplicate name is a start-up error."""
    if game.name in _registry:
        raise RuntimeError(f"two games are registered as {game.name!r}")
    global _words
    _registry[game.name] = game
    _words = {}
    return game


def load_games() -> None:
    """Import every game module, once; another thread asking meanwhile waits for all (a
    module imported here may ask again: it goes on)."""
    global _loaded, _ready
    with _loading:
        if _loaded:
            return
        _loaded = True
        for module in pkgutil.iter_modules(__path__):
            if module.name != "base":
                importlib.import_module(f"{__name__}.{module.name}")
        _ready = True


def games() -> dict[str, Game]:
    """Every registered game by command name, in name order."""
    if not _ready:
        load_games()
    return dict(sorted(_registry.items()))


def get_game(name: str) -> Game | None:
    """The game a word names: its command name or its title (`superwari`, `Super-Wari`,
    `super-wari`), in any case."""
    return game_words().get(name.lower())


def game_words() -> dict[str, Game]:
    """Every word that names a game, lower case: its name, and its title written as one
    word (`super-wari`, `superwari`)."""
    global _words
    words = _words
    if not words:  # made whole, then published: another thread never sees half of it
        words = {}
        for game in games().values():
            title = game.title.lower()
            for word in (title, title.replace("-", ""), title.replace(" ", "-"), title.replace(" ", "")):
                words.setdefault(word, game)
        words.update(games())  # a name wins over a title
        _words = words
    return words
