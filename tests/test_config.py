"""Configuration: defaults, the TOML file, environment overrides, and the example."""

import re
import tomllib
from pathlib import Path

import pytest

from conftest import deployment_block
from pbmserv.config import DEFAULTS, ConfigError, load_config

EXAMPLE = Path(__file__).parent.parent / "config.example.toml"


def test_defaults_are_design_md_values():
    config = load_config(environ={})
    assert config.server.address == "pbmserv@localhost"
    assert config.server.admins == []
    assert config.smtp.host == "127.0.0.1" and config.smtp.port == 2525
    assert config.smtp.max_message_size == 1048576
    assert config.database.url == "sqlite:///var/pbmserv.db"
    assert config.outbound.transport == "maildir" and config.outbound.maildir == "var/outbox"
    assert (config.outbound.relay_host, config.outbound.relay_port) == ("localhost", 25)
    assert config.security.password_cost == "standard"
    assert config.domain == "localhost"


def test_example_documents_every_key_with_its_default():
    with open(EXAMPLE, "rb") as handle:
        example = tomllib.load(handle)
    assert example == DEFAULTS


def test_file_then_environment(tmp_path):
    path = tmp_path / "pbmserv.toml"
    path.write_text('[server]\naddress = "games@example.org"\nadmins = ["root"]\n[smtp]\nport = 2626\n')
    config = load_config(path, environ={"PBMSERV_SMTP_PORT": "2727", "PBMSERV_SERVER_ADMINS": "ann, bob",
                                        "PBMSERV_DATABASE_URL": "sqlite:///x.db", "OTHER": "ignored"})
    assert config.server.address == "games@example.org"
    assert config.server.admins == ["ann", "bob"]
    assert config.smtp.port == 2727
    assert config.database.url == "sqlite:///x.db"
    assert config.domain == "example.org"


@pytest.mark.parametrize("text, message", [
    ("[nosuch]\nx = 1\n", "unknown section [nosuch]"),
    ("[smtp]\nbogus = 1\n", "[smtp] bogus: unknown key"),
    ("[smtp]\nport = 'many'\n", "[smtp] port: expected a whole number, not 'many'"),
    ("[outbound]\ntransport = 'pigeon'\n", "[outbound] transport must be one of maildir, smtp, memory"),
    ("[server]\naddress = 'nobody'\n", "[server] address must be an e-mail address"),
    ("[server\n", "is not valid TOML"),
])
def test_bad_files_name_the_problem(tmp_path, text, message):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("]", r"\]")):
        load_config(path, environ={})


def test_bad_environment_and_missing_file(tmp_path):
    with pytest.raises(ConfigError, match="PBMSERV_SMTP_COLOUR names no configuration key"):
        load_config(environ={"PBMSERV_SMTP_COLOUR": "red"})
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "absent.toml", environ={})


@pytest.mark.parametrize("markers, expected", [
    (("[server]", "admins"), {("server", "address"): "pbmserv@games.example.org", ("smtp", "port"): 25,
                              ("outbound", "transport"): "smtp",
                              ("database", "url"): "sqlite:////srv/pbmserv/var/pbmserv.db"}),
    (('protocol = "lmtp"',), {("smtp", "host"): "127.0.0.1", ("smtp", "port"): 2525, ("smtp", "protocol"): "lmtp"}),
    (("[database]", "postgresql+psycopg"),
     {("database", "url"): "postgresql+psycopg://pbmserv:SECRET@db.example.org/pbmserv"}),
])
def test_the_configurations_of_the_deployment_guide_load(tmp_path, markers, expected):
    """Every pbmserv configuration docs/deployment.md gives is valid and means what it says."""
    block = deployment_block(*markers)
    path = tmp_path / "pbmserv.toml"
    path.write_text(block[re.search(r"^\[", block, re.M).start():])  # from its first section on
    config = load_config(path, environ={})
    assert {(section, key): getattr(getattr(config, section), key) for section, key in expected} == expected
