# Pilot (not a calibration), from the repository root on a GPU machine: tiny kernels' CUPTI durations alone and beside
# another MPS client. Usage: mps-pilot.py victim OUT.json | tiny
import json, sys, time, statistics, torch
mode = sys.argv[1]
x = torch.randn(1024, device="cuda"); a = torch.randn(256, 256, device="cuda"); big = torch.randn(1 << 22, device="cuda")
if mode == "tiny":
    t0 = time.time()
    while time.time() - t0 < float(sys.argv[2]):
        for _ in range(200):
            big.mul_(1.0000001)
        torch.cuda.synchronize()
    sys.exit(0)
for _ in range(200):
    x.mul_(1.0001); a @ a
torch.cuda.synchronize()
from torch.profiler import profile, ProfilerActivity
with profile(activities=[ProfilerActivity.CUDA]) as prof:
    for i in range(4000):
        x.mul_(1.0001); a @ a
        if i % 50 == 49:
            torch.cuda.synchronize()
    torch.cuda.synchronize()
prof.export_chrome_trace("/tmp/pilot-trace.json")
ev = json.load(open("/tmp/pilot-trace.json"))["traceEvents"]
by = {}
for e in ev:
    if e.get("cat") == "kernel":
        by.setdefault(e["name"][:60], []).append(e["dur"])
out = {n: {"n": len(v), "median_us": statistics.median(v), "p90_us": sorted(v)[int(0.9 * len(v))]} for n, v in by.items()}
json.dump(out, open(sys.argv[2], "w"), indent=1)
print(json.dumps(out))
