#!/usr/bin/env python3
"""Observational, not the designed test (lab/validate/host-corun.json is):
each job's sampled launch-call time per call in a shared round over the
median of its rounds alone in the same run.json, per policy, for the
latency-critical job (the round's first) and its partner, over every
run.json below the given folders (a run seen twice counted once).

    lab/analysis/launch-calls-shared.py DIR [DIR ...]

(fikit-run's rounds record `launch_call_ns` over `launch_calls` sampled
launch calls of each job.) Lab log 2026-11-29.
"""
import sys
import json,glob,statistics as st,collections
# per (file) round: for the priority-0 job (first job), launch call us per call, in exclusive vs shared of same repetition
ratios=collections.defaultdict(list)
seen=set()
if len(sys.argv) < 2:
    sys.exit(__doc__)
for rj in [f for d in sys.argv[1:] for f in glob.glob(d + '/**/run.json', recursive=True)]:
    try: r=json.load(open(rj))
    except Exception: continue
    rounds=r.get('rounds',[])
    key=json.dumps([ (rd['policy'],rd['repetition'],rd['jobs'][0].get('first_launch_ns')) for rd in rounds])[:400]
    if key in seen: continue
    seen.add(key)
    alone={}
    for rd in rounds:
        for j in rd['jobs']:
            if rd['policy']=='exclusive' and j.get('launch_calls'):
                alone.setdefault(j['job'],[]).append(j['launch_call_ns']/j['launch_calls'])
    # The yardstick: each round alone over the median of the job's others alone.
    for job, v in alone.items():
        for i, x in enumerate(v):
            if len(v) >= 3:
                ratios[('exclusive', 'vs its others')].append(x / st.median(v[:i] + v[i + 1:]))
    for rd in rounds:
        if rd['policy']=='exclusive' or len(rd['jobs'])<2: continue
        for pos,j in enumerate(rd['jobs']):
            if not j.get('launch_calls') or j['job'] not in alone: continue
            a=st.median(alone[j['job']])
            ratios[(rd['policy'],'first' if pos==0 else 'other')].append(j['launch_call_ns']/j['launch_calls']/a)
for k,v in sorted(ratios.items()):
    v.sort(); q=lambda p:v[int(p*(len(v)-1))]
    print(k,len(v),'median %.3f  q25 %.3f q75 %.3f'%(st.median(v),q(.25),q(.75)), 'frac>1.05 %.2f'%(sum(x>1.05 for x in v)/len(v)))
