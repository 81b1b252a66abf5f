"""Run the benchmarks and print each result as a ratio against its baseline.

    .venv/bin/python bench/run.py            # everything, full size (several minutes)
    .venv/bin/python bench/run.py --quick    # small sizes: a smoke run
    .venv/bin/python bench/run.py engines replay   # some of them
    TEST_DATABASE_URL=postgresql+psycopg://... .venv/bin/python bench/run.py cluster   # with PostgreSQL

Each benchmark module has `run(quick: bool) -> list[Result]`.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time

import common

BENCHMARKS = ["engines", "replay", "smtp", "scale", "cluster", "hostile", "robots"]  # bench_<name>.py


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help=f"benchmarks to run (default: all of {', '.join(BENCHMARKS)})")
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    args = parser.parse_args(argv)
    unknown = [name for name in args.names if name not in BENCHMARKS]
    if unknown:
        parser.error(f"no benchmark {', '.join(unknown)}; choose from {', '.join(BENCHMARKS)}")
    for name in args.names or BENCHMARKS:
        start = time.perf_counter()
        print(f"== {name}", flush=True)
        results = importlib.import_module(f"bench_{name}").run(quick=args.quick)
        common.report(results)
        print(f"   ({time.perf_counter() - start:.1f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
