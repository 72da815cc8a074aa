#!/usr/bin/env python3
"""One PyTorch GPU workload for fikit traces: a model with random weights
(nothing is downloaded), run for a fixed number of iterations.

    python3 scripts/workloads/workload.py --model resnet50 --batch 1 --mode eval --iters 100

Prints one JSON line last: {"model", "batch", "mode", "iters", "ms_per_iter", ...}.
`--torch-profiler` wraps the timed loop in torch.profiler with CUDA activity
(used by scripts/bench/overhead.py to compare tracers); `--chrome-trace PATH` also
exports it as Kineto Chrome-trace JSON (gzipped when PATH ends in .gz), which
`fikit-sim import` reads (scripts/capture/capture-kineto.sh).

Models: resnet50, mobilenet_v3_large, efficientnet_b0, vit_b_16 (torchvision),
bert-base (transformers' BertModel built from a default BertConfig) and gpt2
(a transformer decoder: transformers' GPT2LMHeadModel from a default
GPT2Config, 124M parameters).
Modes: eval (inference under torch.inference_mode), train (forward,
backward and an SGD step) and, for gpt2, decode: each iteration is one
request that reads a prompt of --seq-len tokens and generates --new-tokens
more, greedily, one forward pass a token with the KV cache, the next token
chosen on the GPU (no host synchronization until the request ends).
"""

import argparse
import json
import os
import sys
import time

import torch

VISION = ("resnet50", "mobilenet_v3_large", "efficientnet_b0", "vit_b_16")


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
    for _ in range(a.iters):
        ti = time.perf_counter()
        step()
        per_iter.append(time.perf_counter() - ti)
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
        "pid": os.getpid(),
        "torch": torch.__version__,
        "gpu": torch.cuda.get_device_name(0),
    }
    print(json.dumps(res), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
