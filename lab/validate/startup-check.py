#!/usr/bin/env python3
"""Where a set job's start-up time goes: times each step before the timed
loop of scripts/workloads/workload.py (imports, building the model with random
weights on the host, moving it to the GPU, the first iterations) for one
model, so the set's rounds can be made shorter without touching what they
measure. Prints one JSON line.

    python3 lab/validate/startup-check.py --model bert-base --batch 1
"""

import argparse
import json
import time

T0 = time.perf_counter()
marks = {}


def mark(name):
    marks[name] = round(time.perf_counter() - T0, 3)


import torch  # noqa: E402

mark("import_torch")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--mode", choices=("eval", "train"), default="eval")
    a = ap.parse_args()
    dev = torch.device("cuda")
    if a.model in ("resnet50", "mobilenet_v3_large", "vit_b_16"):
        import torchvision

        mark("import_model_lib")
        m = getattr(torchvision.models, a.model)(weights=None)
        mark("build_on_host")
        torch.cuda.init()
        torch.zeros(1, device=dev)
        mark("cuda_context")
        m = m.to(dev)
        x = (torch.randn(a.batch, 3, 224, 224, device=dev),)
    else:
        if a.model == "gpt2":
            from transformers import GPT2Config as C, GPT2LMHeadModel as M
        else:
            from transformers import BertConfig as C, BertModel as M
        mark("import_model_lib")
        cfg = C()
        m = M(cfg)
        mark("build_on_host")
        torch.cuda.init()
        torch.zeros(1, device=dev)
        mark("cuda_context")
        m = m.to(dev)
        x = (torch.randint(0, cfg.vocab_size, (a.batch, 128), device=dev),)
    torch.cuda.synchronize()
    mark("to_gpu")
    if a.mode == "train":
        m.train()
        opt = torch.optim.SGD(m.parameters(), lr=1e-3)
    else:
        m.eval()
        opt = None

    def step():
        if opt is None:
            with torch.inference_mode():
                m(*x)
        else:
            opt.zero_grad(set_to_none=True)
            out = m(*x)
            out = out if torch.is_tensor(out) else out[0]
            out.float().pow(2).mean().backward()
            opt.step()
        torch.cuda.synchronize()

    step()
    mark("first_iteration")
    for _ in range(9):
        step()
    mark("next_9_iterations")
    print(json.dumps({"model": a.model, "batch": a.batch, "mode": a.mode, "s_since_start": marks}), flush=True)


if __name__ == "__main__":
    main()
