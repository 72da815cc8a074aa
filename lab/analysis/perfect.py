"""Trials of a prediction that is exactly the truth against a rule whose
real side is the median of k noisy repetitions (rule-noise.py,
serve-noise.py)."""

import math
import statistics


def trials(groups, k, bounds, n_trials, rng):
    """(share of trials passing, median of the trials' median error, median
    of their worst error). `groups`: (pool of one repetition's log
    deviations, rows drawn from it) pairs; each row's real value is the exp
    of the median of k draws, scored |1 / real - 1|; `bounds`: (median,
    worst) the rule allows."""
    passed, medians, worsts = 0, [], []
    for _ in range(n_trials):
        errs = []
        for pool, n_rows in groups:
            for _ in range(n_rows):
                real = math.exp(statistics.median(rng.choice(pool) for _ in range(k)))
                errs.append(abs(1 / real - 1))
        m, w = statistics.median(errs), max(errs)
        medians.append(m)
        worsts.append(w)
        passed += m <= bounds[0] and w <= bounds[1]
    return passed / n_trials, statistics.median(medians), statistics.median(worsts)
