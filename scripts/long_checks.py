"""The long versions of test checks that CI runs at a smaller size (to keep ``pytest
--runslow`` within its time): each runs the same test, with the environment variable
that the test documents set, through pytest.

    python scripts/long_checks.py            # every long check
    python scripts/long_checks.py --list     # what they are
    python scripts/long_checks.py oracles    # one (or several) by name

Exit status: pytest's (0 when every check passes).
"""
import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: name -> (environment variable set to 1, pytest node ids, what it checks beyond CI)
CHECKS = {
    "oracles": ("IRSCALE_ORACLE_EVERY_RB", ["tests/test_oracles.py::test_oracle_equals_table_at_n20"],
                "rank oracles equal tables at N = 20 for every recall base 1..21 (CI: 1, 2, 10, 19, 20, 21)"),
    "mitm": ("IRSCALE_MITM_EVERY_VECTOR", ["tests/test_graded_mitm.py::test_count_vectors_with_6_levels_at_n4",
                                           "tests/test_graded_mitm.py::test_count_vectors_with_6_levels_at_n5",
                                           "tests/test_graded_mitm.py::test_random_count_vectors_at_n9_n10"],
             "the graded oracle equals the reference for every count vector with 6 levels at N = 4 and 5, and on "
             "random vectors at N = 10 (CI: samples, and N = 9)"),
    "rprec": ("IRSCALE_RPREC_EVERY_RB", ["tests/test_rprec.py::test_transform_with_tables_on_trec8_n20"],
              "Rprec@20 through stored tables of all 44 recall bases of TREC-8 (CI: 8 of them, 12 topics)"),
}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help=f"checks to run (default: all): {', '.join(CHECKS)}")
    parser.add_argument("--list", action="store_true", help="list the checks and exit")
    args = parser.parse_args(argv)
    if args.list:
        for name, (env, nodes, what) in CHECKS.items():
            print(f"{name}: {what}\n    {env}=1 pytest --runslow {' '.join(nodes)}")
        return 0
    unknown = [n for n in args.names if n not in CHECKS]
    if unknown:
        parser.error(f"unknown check(s) {', '.join(unknown)}; known: {', '.join(CHECKS)}")
    chosen = args.names or list(CHECKS)
    env = dict(os.environ)
    nodes = []
    for name in chosen:
        var, ids, _ = CHECKS[name]
        env[var] = "1"
        nodes += ids
    return subprocess.run([sys.executable, "-m", "pytest", "--runslow", "-q", "-p", "no:cacheprovider", *nodes],
                          cwd=ROOT, env=env).returncode


if __name__ == "__main__":
    sys.exit(main())
