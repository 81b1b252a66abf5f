"""Smoke run of the several-servers benchmark (bench/bench_cluster.py) at its quick
size: one serve on SQLite, then one, two and three on a PostgreSQL database of their
own; every case plays every move without an error reply, and the results are
well-formed. Runs when TEST_DATABASE_URL names a PostgreSQL server. No timing is
asserted."""

from __future__ import annotations

import math
import os
import re
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

import bench_cluster  # noqa: E402
from common import Result  # noqa: E402

pytestmark = pytest.mark.skipif(not os.environ.get("TEST_DATABASE_URL"),
                                reason="no PostgreSQL: set TEST_DATABASE_URL to run the cluster benchmark")


def test_cluster_quick_run_plays_every_move_in_every_case():
    results = bench_cluster.run(quick=True)
    assert [r.name for r in results] == [
        "cluster: serve x1 on SQLite (baseline)",
        "cluster: serve x1 on PostgreSQL vs x1 on SQLite",
        "cluster: serve x2 on PostgreSQL vs x1 on SQLite",
        "cluster: serve x3 on PostgreSQL vs x1 on SQLite"]
    baseline = results[0].value
    for result in results:
        assert isinstance(result, Result)
        assert result.unit == "moves/s" and result.goal == "" and result.met is None
        assert math.isfinite(result.value) and result.value > 0
        assert result.baseline == baseline and math.isfinite(result.ratio)
        played = re.match(r"(\d+)/(\d+) moves played, 0 error replies, ", result.note)
        assert played and played[1] == played[2] and int(played[2]) > 0, result.note
        assert "last board mail at" in result.note and "CPU serve" in result.note
    assert len({re.match(r"\d+/(\d+)", r.note)[1] for r in results}) == 1  # the same moves in every case
    assert results[0].ratio == 1.0
    assert all("postgres fsync=" in r.note for r in results[1:])
    # every database a case made was dropped
    from sqlalchemy import text
    admin = bench_cluster.admin_engine()
    with admin.connect() as connection:
        left = list(connection.execute(text("SELECT datname FROM pg_database WHERE datname LIKE :pattern"),
                                       {"pattern": f"pbmserv_bench_{os.getpid()}_%"}).scalars())
    admin.dispose()
    assert left == []
