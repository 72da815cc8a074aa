"""Trials of a prediction that is exactly the truth against a rule whose
real side is the median of k noisy repetitions (rule-noise.py,
serve-noise.py)."""

import math
import statistics


def trials(groups, k, bounds, n_trials, rng):
    """(share of trials passing, median of the trials' median error, median
    of their worst error). `groups`: (pool of one repetition's log
    deviations, rows drawn from it) pairs, or (pool, rows, prediction pool,
    prediction draws): each row's real value is the exp of the median of k
    draws from its pool, its prediction 1 (the truth) or, with a prediction
    pool, the exp of the median of that many draws from it (a model as right
    as can be that reads the job from that many noisy runs); scored
    |prediction / real - 1|; `bounds`: (median, worst) the rule allows."""
    passed, medians, worsts = 0, [], []
    for _ in range(n_trials):
        errs = []
        for pool, n_rows, *given in groups:
            for _ in range(n_rows):
                real = math.exp(statistics.median(rng.choice(pool) for _ in range(k)))
                pred = math.exp(statistics.median(rng.choice(given[0]) for _ in range(given[1]))) if given else 1.0
                errs.append(abs(pred / real - 1))
        m, w = statistics.median(errs), max(errs)
        medians.append(m)
        worsts.append(w)
        passed += m <= bounds[0] and w <= bounds[1]
    return passed / n_trials, statistics.median(medians), statistics.median(worsts)


def pair_deviations(xs):
    """One repetition's log deviations from a row's repetitions `xs`: over
    each pair, (ln x_i - ln x_j) / sqrt 2, both signs (the difference of two
    repetitions has twice one's variance)."""
    out = []
    for i, a in enumerate(xs):
        for b in xs[i + 1:]:
            d = math.log(a / b) / math.sqrt(2)
            out += [d, -d]
    return out
