"""Configuration: embedded defaults, then a TOML file, then `PBMSERV_<SECTION>_<KEY>`.

The defaults here are the documented ones (config.example.toml mirrors them and a test
keeps the two in step), so the server runs with no file at all.
"""

from __future__ import annotations

import copy
import os
import tomllib
from pathlib import Path
from typing import Any

from .games.base import duration_seconds

DEFAULTS: dict[str, dict[str, Any]] = {
    "server": {
        "address": "pbmserv@localhost",
        "admins": [],
        "seed": "",
    },
    "smtp": {
        "host": "127.0.0.1",
        "port": 2525,
        "max_message_size": 1048576,
        "max_recipients": 100,
        "protocol": "smtp",
        "spool": "",
    },
    "database": {
        "url": "sqlite:///var/pbmserv.db",
        "busy_timeout": 30,
    },
    "outbound": {
        "transport": "maildir",
        "maildir": "var/outbox",
        "relay_host": "localhost",
        "relay_port": 25,
    },
    "security": {
        "password_cost": "standard",
        "trust_from": False,
    },
    "limits": {
        "commands_per_mail": 20,
        "unregistered_errors_per_day": 3,
        "broadcasts_per_day": 1,
        "recent_moves": 10,
        "wrong_passwords_per_hour": 5,
        "errors_per_day": 20,
        "unconfirmed_replies_per_day": 10,
        "addresses_per_account": 5,
        "confirmations_per_address": 2,
        "confirmations_per_sender": 10,
        "message_recipients": 10,
        "messages_per_day": 30,
        "keep_raw_days": 14,
    },
    "games": {
        "nag_time": "7d",
        "forfeit_time": "21d",
        "vacation_days": 30,
        "downtime_grace": "1h",
        "seek_days": 7,
    },
}

TRANSPORTS = ("maildir", "smtp", "memory")
PROTOCOLS = ("smtp", "lmtp")
PASSWORD_COSTS = ("standard", "fast")
MAX_SEEK_DAYS = 365  # an open challenge (`GAME seek`) waits at most this long


class ConfigError(Exception):
    """A configuration that cannot be used; the message names the key and the fix."""


class Config:
    """Read-only access as `config.section.key` or `config["section"]["key"]`."""

    def __init__(self, values: dict[str, dict[str, Any]], given: frozenset[tuple[str, str]] = frozenset()):
        self._values = values
        self.given = given  # (section, key) set by the file or the environment, not defaulted

    def __getitem__(self, section: str) -> dict[str, Any]:
        return self._values[section]

    def __getattr__(self, section: str) -> Any:
        try:
            return _Section(self._values[section])
        except KeyError:
            raise AttributeError(section) from None

    def with_overrides(self, **sections: dict[str, Any]) -> "Config":
        """A copy with some keys replaced, e.g. `with_overrides(database={"url": u})`."""
        values = copy.deepcopy(self._values)
        for section, keys in sections.items():
            values[section].update(keys)
        return Config(values, self.given | {(section, key) for section, keys in sections.items() for key in keys})

    @property
    def domain(self) -> str:
        return self.server.address.rpartition("@")[2] or "localhost"


class _Section:
    def __init__(self, values: dict[str, Any]):
        self._values = values

    def __getattr__(self, key: str) -> Any:
        try:
            return self._values[key]
        except KeyError:
            raise AttributeError(key) from None


def load_config(path: str | Path | None = None, environ: dict[str, str] | None = None) -> Config:
    values = copy.deepcopy(DEFAULTS)
    given: set[tuple[str, str]] = set()
    if path is not None:
        try:
            with open(path, "rb") as handle:
                loaded = tomllib.load(handle)
        except FileNotFoundError:
            raise ConfigError(f"configuration file {path} does not exist") from None
        except tomllib.TOMLDecodeError as error:
            raise ConfigError(f"configuration file {path} is not valid TOML: {error}") from None
        for section, keys in loaded.items():
            if section not in values or not isinstance(keys, dict):
                raise ConfigError(f"{path}: unknown section [{section}]")
            for key, value in keys.items():
                values[section][key] = _coerce(section, key, value, f"{path}: [{section}] {key}")
                given.add((section, key))
    environ = os.environ if environ is None else environ
    for name, text in environ.items():
        if not name.startswith("PBMSERV_"):
            continue
        section, key = _split_env_name(name)
        values[section][key] = _coerce(section, key, text, name)
        given.add((section, key))
    _validate(values)
    return Config(values, frozenset(given))


def _split_env_name(name: str) -> tuple[str, str]:
    rest = name[len("PBMSERV_"):].lower()
    for section in DEFAULTS:
        if rest.startswith(section + "_") and rest[len(section) + 1:] in DEFAULTS[section]:
            return section, rest[len(section) + 1:]
    raise ConfigError(f"environment variable {name} names no configuration key")


def _coerce(section: str, key: str, value: Any, where: str) -> Any:
    """Give `value` the type of the key's default; strings from the environment convert."""
    if key not in DEFAULTS[section]:
        raise ConfigError(f"{where}: unknown key")
    default = DEFAULTS[section][key]
    if isinstance(default, list):
        if isinstance(value, str):
            return [item.strip() for item in value.split(",") if item.strip()]
        if isinstance(value, list) and all(isinstance(item, str) for item in value):
            return value
        raise ConfigError(f"{where}: expected a list of strings")
    if isinstance(default, bool):
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in ("true", "false", "1", "0", "yes", "no"):
            return value.strip().lower() in ("true", "1", "yes")
        raise ConfigError(f"{where}: expected true or false, not {value!r}")
    if isinstance(default, int):
        try:
            if isinstance(value, bool):
                raise ValueError
            return int(value)
        except (TypeError, ValueError):
            raise ConfigError(f"{where}: expected a whole number, not {value!r}") from None
    if not isinstance(value, str):
        raise ConfigError(f"{where}: expected a string, not {value!r}")
    return value


def _validate(values: dict[str, dict[str, Any]]) -> None:
    if values["outbound"]["transport"] not in TRANSPORTS:
        raise ConfigError(f"[outbound] transport must be one of {', '.join(TRANSPORTS)}")
    if values["smtp"]["protocol"] not in PROTOCOLS:
        raise ConfigError(f"[smtp] protocol must be one of {', '.join(PROTOCOLS)}")
    if values["security"]["password_cost"] not in PASSWORD_COSTS:
        raise ConfigError(f"[security] password_cost must be one of {', '.join(PASSWORD_COSTS)}")
    for key in ("nag_time", "forfeit_time", "downtime_grace"):
        text = values["games"][key]
        if duration_seconds(text) is None and not (key != "downtime_grace" and text == "off"):
            also = "" if key == "downtime_grace" else ', or "off"'
            raise ConfigError(f'[games] {key} must be a duration such as "90m", "72h" or "7d"{also}, not {text!r}')
    if not 1 <= values["games"]["seek_days"] <= MAX_SEEK_DAYS:
        raise ConfigError(f"[games] seek_days must be a whole number of days from 1 to {MAX_SEEK_DAYS}, "
                          f"not {values['games']['seek_days']}")
    nag, forfeit = (duration_seconds(values["games"][key]) for key in ("nag_time", "forfeit_time"))
    if nag and forfeit and nag >= forfeit:
        raise ConfigError("[games] nag_time must be shorter than forfeit_time: the reminder comes before the forfeit")
    if "@" not in values["server"]["address"]:
        raise ConfigError("[server] address must be an e-mail address such as pbmserv@example.org")
