"""Where the templates and migrations are: inside an installed package, or at the top
of a source checkout (they live there and are mapped into the wheel at build time)."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def resource_dir(name: str) -> Path:
    for candidate in (_PACKAGE / name, _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"pbmserv cannot find its {name}/ folder (looked beside {_PACKAGE})")
