#!/usr/bin/env python3
"""An out-of-sample set's rule, read from a `fikit-run summary` over all its
rows, a pair with fewer repetitions than the set asks for included (the
summary's own fits leave such a pair out; here it counts, and its rows'
repetitions are printed, so the reading says what it rests on).

    python3 lab/analysis/set-rule.py SUMMARY.json [--only-complete]

Per policy: the slowdown's median and worst |simulated - real| / real over
the shared rows (both jobs of every pair), the latency-critical (priority
0) job's p99 iteration latency the same way (exclusive included), and the
rows whose real median lies inside fikit-sim's range. Then issue 45's
bounds: slowdown 5% / 15%, p99 10% / 25% per policy, range in at least 80%
of the shared rows. `--only-complete` leaves out the summary's incomplete
pairs, which must reproduce its own fits (a check of this reading).
"""
import argparse
import statistics

from summaries import summary

SHARED = ("timeslice", "mps", "fikit")
BOUNDS = {"slowdown": (0.05, 0.15), "p99": (0.10, 0.25)}
RANGE_SHARE = 0.80


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("summary", help="a fikit-run summary.json")
    ap.add_argument("--only-complete", action="store_true",
                    help="leave out the pairs the summary names incomplete")
    args = ap.parse_args()
    s = summary(args.summary, "set-rule")
    rows = s["rows"]
    incomplete = set(s.get("incomplete") or [])
    if args.only_complete:
        rows = [r for r in rows if r["pair"] not in incomplete]
    elif incomplete:
        for r in rows:
            if r["pair"] in incomplete and r["policy"] in SHARED:
                print(f"counted, incomplete: {r['pair']} {r['policy']} {r['job']}: "
                      f"{r['co_runs']} co-runs of {r['runs']} repetitions")
    verdict = True
    in_range, with_range = 0, 0
    print(f"{'policy':<10} {'measure':<9} {'rows':>4} {'median':>8} {'worst':>8}  bound")
    for policy in ("exclusive",) + SHARED:
        mine = [r for r in rows if r["policy"] == policy]
        measures = []
        if policy in SHARED:
            slow = [abs(r["error"]) for r in mine if r.get("error") is not None]
            measures.append(("slowdown", slow))
            for r in mine:
                if r.get("sim_slowdown_range") is not None and r.get("in_sim_range") is not None:
                    with_range += 1
                    in_range += bool(r["in_sim_range"])
        p99 = [abs(r["sim_p99_ms"] - r["p99_ms"]) / r["p99_ms"]
               for r in mine if r["priority"] == 0 and r.get("sim_p99_ms") and r.get("p99_ms")]
        measures.append(("p99", p99))
        for name, errs in measures:
            if not errs:
                continue
            med, worst = statistics.median(errs), max(errs)
            bmed, bworst = BOUNDS[name]
            ok = med <= bmed and worst <= bworst
            verdict &= ok
            print(f"{policy:<10} {name:<9} {len(errs):>4} {med:>7.1%} {worst:>7.1%}  "
                  f"{bmed:.0%} / {bworst:.0%}: {'pass' if ok else 'FAIL'}")
    share = in_range / with_range if with_range else 0.0
    ok = share >= RANGE_SHARE
    verdict &= ok
    print(f"real median inside fikit-sim's range: {in_range} of {with_range} shared rows "
          f"({share:.0%}; bound {RANGE_SHARE:.0%}): {'pass' if ok else 'FAIL'}")
    print(f"rule: {'pass' if verdict else 'FAIL'}")


if __name__ == "__main__":
    main()
