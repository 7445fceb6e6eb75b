#!/usr/bin/env python3
"""Each memory ceiling of a reference folder from its timed results alone (no premises file: what a
run sees where counters are refused) against the premise-checked one, and the difference.

usage: PYTHONPATH=analysis python3 scripts/dev/ceilings_without_counters.py reports/h100 [reports/h100x2 ...]
A folder holds results.json.gz + premises.json.gz, or ceilings.json.gz + ceiling_premises.json.gz.
Exit 1 when a ceiling without counters is more than 3 % off the checked one (or only one side has it).
"""
import os
import sys

from gpuprobe_analysis import results
from gpuprobe_analysis.sections import results_of

TOLERANCE = 0.03
PAIRS = (("results.json.gz", "premises.json.gz"), ("ceilings.json.gz", "ceiling_premises.json.gz"))


def ceilings(paths):
    return results_of(results.load(paths))["bandwidth"].bandwidth.ceilings


def main(folders):
    bad = 0
    for folder in folders:
        timed, checked = next(((os.path.join(folder, t), os.path.join(folder, p)) for t, p in PAIRS
                               if os.path.exists(os.path.join(folder, p))), (None, None))
        if timed is None:
            print(f"{folder}: no premises file, skipped")
            continue
        without, with_ = ceilings([timed]), ceilings([timed, checked])
        print(f"\n{folder}\n{'ceiling':<14}{'without counters':>18}{'with counters':>15}{'difference':>12}")
        for name in sorted(set(without) | set(with_)):
            a, b = without.get(name), with_.get(name)
            if a is None or b is None:
                bad += 1
                print(f"{name:<14}{a.gbps if a else '-':>18}{b.gbps if b else '-':>15}{'one side only':>12}")
                continue
            d = a.gbps / b.gbps - 1
            bad += abs(d) > TOLERANCE
            print(f"{name:<14}{a.gbps:>18,.0f}{b.gbps:>15,.0f}{d:>+11.1%}{'  > 3 %' if abs(d) > TOLERANCE else ''}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
