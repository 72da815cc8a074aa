#!/usr/bin/env python3
"""One PyTorch GPU workload for fikit traces: a model with random weights
(nothing is downloaded), run for a fixed number of iterations.

    python3 scripts/workloads/workload.py --model resnet50 --batch 1 --mode eval --iters 100

Prints one JSON line last: {"model", "batch", "mode", "iters", "ms_per_iter", ...}.
`--torch-profiler` wraps the timed loop in torch.profiler with CUDA activity
(used by scripts/bench/overhead.py to compare tracers); `--chrome-trace PATH` also
exports it as Kineto Chrome-trace JSON (gzipped when PATH ends in .gz), which
`fikit-sim import` reads (scripts/capture/capture-kineto.sh).

Models: torchvision's ImageNet classifiers at 224x224 (resnet18, resnet50,
resnet101, mobilenet_v3_large, efficientnet_b0, convnext_tiny, densenet121,
shufflenet_v2_x1_0, regnet_y_800mf, vit_b_16, swin_t, resnet34,
resnext50_32x4d, wide_resnet50_2, mobilenet_v2, efficientnet_b2,
convnext_small, vgg16, vit_b_32), bert-base (transformers' BertModel built from a default BertConfig) and gpt2
(a transformer decoder: transformers' GPT2LMHeadModel from a default
GPT2Config, 124M parameters).
Modes: eval (inference under torch.inference_mode), train (forward,
backward and an SGD step) and, for gpt2, decode: each iteration is one
request that reads a prompt of --seq-len tokens and generates --new-tokens
more, greedily, one forward pass a token with the KV cache, the next token
chosen on the GPU (no host synchronization until the request ends).

Open loop (`--rate R`): the timed iterations are requests that arrive at R a
second, Poisson (`--arrivals poisson`, the default: the simulator's
`poisson_arrivals` draw from `--seed`, so a scenario with the same count,
rate and seed has the same arrival times) or evenly spaced (`fixed`). A
request waits until it has arrived and the one before it is done; its
latency runs from its arrival to its result on the host (queueing included),
and the JSON line adds its p50, p99 and p99.9 (nearest rank). Arrivals count
from the end of the warm-up, as a scenario's count from the end of the job's
set-up. In open loop
`ms_per_iter` is the span over the requests (idle included) and
`ms_per_iter_median` the median service time.
"""

import argparse
import json
import math
import os
import sys
import time

import torch

VISION = (
    "resnet18",
    "resnet50",
    "resnet101",
    "mobilenet_v3_large",
    "efficientnet_b0",
    "convnext_tiny",
    "densenet121",
    "shufflenet_v2_x1_0",
    "regnet_y_800mf",
    "vit_b_16",
    "swin_t",
    "resnet34",
    "resnext50_32x4d",
    "wide_resnet50_2",
    "mobilenet_v2",
    "efficientnet_b2",
    "convnext_small",
    "vgg16",
    "vit_b_32",
)


def build(model_name, batch, seq_len, device):
    """Returns (module, make_input, loss_fn) for a model with random weights."""
    if model_name in VISION:
        import torchvision

        m = getattr(torchvision.models, model_name)(weights=None)
        x = torch.randn(batch, 3, 224, 224, device=device)
        target = torch.randint(0, 1000, (batch,), device=device)

        def loss_fn(out):
            return torch.nn.functional.cross_entropy(out, target)

        return m.to(device), (lambda: (x,)), loss_fn
    if model_name == "bert-base":
        from transformers import BertConfig, BertModel

        cfg = BertConfig()  # bert-base-uncased shape: 12 layers, hidden 768
        m = BertModel(cfg)
        ids = torch.randint(0, cfg.vocab_size, (batch, seq_len), device=device)
        mask = torch.ones_like(ids)

        def loss_fn(out):
            return out.last_hidden_state.float().pow(2).mean()

        return m.to(device), (lambda: (ids, mask)), loss_fn
    if model_name == "gpt2":
        from transformers import GPT2Config, GPT2LMHeadModel

        cfg = GPT2Config()  # gpt2 shape: 12 layers, hidden 768, 124M parameters
        m = GPT2LMHeadModel(cfg)
        ids = torch.randint(0, cfg.vocab_size, (batch, seq_len), device=device)

        def loss_fn(out):
            return out.logits.float().pow(2).mean()

        return m.to(device), (lambda: (ids,)), loss_fn
    raise SystemExit(f"unknown model {model_name!r}; choose from {VISION + ('bert-base', 'gpt2')}")


def decode(model, prompt, new_tokens):
    """One generation request: the prompt's forward pass, then one pass per
    new token over the KV cache, each next token the argmax (on the GPU)."""
    out = model(prompt, use_cache=True)
    past = out.past_key_values
    tok = out.logits[:, -1:].argmax(-1)
    for _ in range(new_tokens - 1):
        out = model(tok, past_key_values=past, use_cache=True)
        past = out.past_key_values
        tok = out.logits[:, -1:].argmax(-1)
    return tok


MASK = (1 << 64) - 1


def poisson_arrivals_ns(count, rate_per_s, seed):
    """`count` Poisson arrivals at `rate_per_s`, ns from 0: the same draw as
    the simulator's `poisson_arrivals` (SplitMix64, 53-bit uniforms in (0, 1])."""
    state = seed & MASK
    mean_ns = 1e9 / rate_per_s
    t = 0.0
    out = []
    for _ in range(count):
        state = (state + 0x9E3779B97F4A7C15) & MASK
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        z ^= z >> 31
        u = ((z >> 11) + 1) / float(1 << 53)
        t += -math.log(u) * mean_ns
        out.append(int(math.floor(t + 0.5)))
    return out


def fixed_arrivals_ns(count, rate_per_s):
    """`count` arrivals evenly spaced at `rate_per_s`, ns from 0, the first
    one period in."""
    return [int(math.floor((i + 1) * 1e9 / rate_per_s + 0.5)) for i in range(count)]


def nearest_rank(sorted_values, q):
    """The `q` quantile of sorted values, nearest rank (as the simulator's)."""
    if not sorted_values:
        return None
    k = max(1, math.ceil(q * len(sorted_values)))
    return sorted_values[min(k, len(sorted_values)) - 1]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--mode", choices=("eval", "train", "decode"), default="eval")
    ap.add_argument("--iters", type=int, default=100, help="timed iterations")
    ap.add_argument("--warmup", type=int, default=10, help="untimed iterations first")
    ap.add_argument("--seq-len", type=int, default=128, help="sequence length (bert-base; gpt2's prompt)")
    ap.add_argument("--new-tokens", type=int, default=32, help="tokens generated per request (--mode decode)")
    ap.add_argument("--sleep-ms", type=float, default=0.0,
                    help="host think time after each iteration (request inter-arrival gap)")
    ap.add_argument("--rate", type=float, default=0.0,
                    help="open loop: timed iterations are requests arriving at this many a second "
                         "(0: closed loop, one straight after another)")
    ap.add_argument("--arrivals", choices=("poisson", "fixed"), default="poisson",
                    help="with --rate: Poisson arrivals from --seed, or evenly spaced")
    ap.add_argument("--torch-profiler", action="store_true",
                    help="run the timed loop under torch.profiler with CUDA activity")
    ap.add_argument("--chrome-trace", metavar="PATH",
                    help="export the torch.profiler trace of the timed loop as Chrome-trace JSON "
                         "(Kineto; gzipped when PATH ends in .gz); implies --torch-profiler")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    if a.chrome_trace:
        a.torch_profiler = True
    if a.mode == "decode" and a.model != "gpt2":
        raise SystemExit("--mode decode needs --model gpt2 (a decoder)")
    if not (math.isfinite(a.rate) and a.rate >= 0):
        raise SystemExit(f"--rate must be a finite number of requests a second, at least 0; found {a.rate}")
    if a.rate > 0 and a.sleep_ms > 0:
        raise SystemExit("--rate and --sleep-ms exclude each other: arrivals set the idle time")
    arrivals_ns = None
    if a.rate > 0:
        if a.arrivals == "poisson":
            arrivals_ns = poisson_arrivals_ns(a.iters, a.rate, a.seed)
        else:
            arrivals_ns = fixed_arrivals_ns(a.iters, a.rate)

    torch.manual_seed(a.seed)
    device = torch.device("cuda")
    model, make_input, loss_fn = build(a.model, a.batch, a.seq_len, device)
    opt = None
    if a.mode == "train":
        model.train()
        opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    else:
        model.eval()

    def step():
        inp = make_input()
        if a.mode == "decode":
            with torch.inference_mode():
                decode(model, inp[0], a.new_tokens)
        elif opt is None:
            with torch.inference_mode():
                out = model(*inp)
        else:
            opt.zero_grad(set_to_none=True)
            out = model(*inp)
            loss_fn(out).backward()
            opt.step()
        # A latency-critical request returns its result to the host.
        torch.cuda.synchronize()
        if a.sleep_ms > 0:
            time.sleep(a.sleep_ms / 1000.0)

    for _ in range(a.warmup):
        step()
    torch.cuda.synchronize()

    prof = None
    if a.torch_profiler:
        from torch.profiler import ProfilerActivity, profile

        prof = profile(activities=[ProfilerActivity.CUDA])
        prof.__enter__()
    t0 = time.perf_counter()
    per_iter = []
    latencies = []
    for i in range(a.iters):
        if arrivals_ns is not None:
            due = t0 + arrivals_ns[i] / 1e9
            ahead = due - time.perf_counter()
            if ahead > 0:
                time.sleep(ahead)
        ti = time.perf_counter()
        step()
        done = time.perf_counter()
        per_iter.append(done - ti)
        if arrivals_ns is not None:
            latencies.append(done - due)
    torch.cuda.synchronize()
    elapsed = time.perf_counter() - t0
    per_iter.sort()
    if prof is not None:
        prof.__exit__(None, None, None)
        if a.chrome_trace:
            prof.export_chrome_trace(a.chrome_trace)
        n_events = len(prof.events())
    else:
        n_events = None

    res = {
        "model": a.model,
        "batch": a.batch,
        "mode": a.mode,
        "iters": a.iters,
        "warmup": a.warmup,
        "ms_per_iter": elapsed * 1000.0 / a.iters,
        # Each iteration ends in a synchronize, so its wall time is its latency;
        # the median is robust to the host's occasional stalls.
        "ms_per_iter_median": per_iter[len(per_iter) // 2] * 1000.0,
        "torch_profiler_events": n_events,
        "rate_per_s": a.rate if a.rate > 0 else None,
        "arrivals": a.arrivals if a.rate > 0 else None,
        "latency_ms": None if arrivals_ns is None else {
            name: nearest_rank(sorted(latencies), q) * 1000.0
            for name, q in (("p50", 0.5), ("p99", 0.99), ("p99.9", 0.999))
        },
        # The share of the timed span the requests were being served.
        "busy_share": sum(per_iter) / elapsed if elapsed > 0 else None,
        "pid": os.getpid(),
        "torch": torch.__version__,
        "gpu": torch.cuda.get_device_name(0),
    }
    print(json.dumps(res), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
