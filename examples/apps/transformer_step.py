"""A BF16 training step of torch.nn.TransformerEncoderLayer (forward, backward, optimizer), for profiling
under Nsight Compute with scripts/profile_app.sh (docs/app-profiling.md).

The warm-up steps run outside any NVTX range; the profiled steps run inside the push/pop range
"profiled_step", with "forward", "backward" and "optimizer" inside it, so that

    bash scripts/profile_app.sh -o OUT --nvtx-include 'profiled_step/' -- python3 examples/apps/transformer_step.py

profiles only the steady steps and gives every kernel its phase. The inputs are random (never zeros: they
run faster than real data).
"""
import argparse

import torch


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seq", type=int, default=2048)
    ap.add_argument("--d-model", type=int, default=1024)
    ap.add_argument("--heads", type=int, default=16)
    ap.add_argument("--ffn", type=int, default=4096)
    ap.add_argument("--warmup", type=int, default=3, help="steps before the profiled ones (outside NVTX)")
    ap.add_argument("--steps", type=int, default=1, help="profiled steps (inside the NVTX range profiled_step)")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("transformer_step.py: no CUDA device visible to PyTorch")
    torch.manual_seed(0)
    dev, dt = torch.device("cuda"), torch.bfloat16
    layer = torch.nn.TransformerEncoderLayer(args.d_model, args.heads, args.ffn, batch_first=True,
                                             device=dev, dtype=dt)
    opt = torch.optim.AdamW(layer.parameters(), lr=1e-4)
    x = torch.randn(args.batch, args.seq, args.d_model, device=dev, dtype=dt)

    def step() -> None:
        with torch.cuda.nvtx.range("forward"):
            loss = layer(x).float().square().mean()
        with torch.cuda.nvtx.range("backward"):
            loss.backward()
        with torch.cuda.nvtx.range("optimizer"):
            opt.step()
            opt.zero_grad(set_to_none=True)

    # PyTorch runs the backward pass on its own autograd thread, outside the main thread's push/pop ranges:
    # profiled through --nvtx-include 'profiled_step/', its kernels would be left out (the 2026-12-05 profile
    # in reports/apps-h100 has 1 backward launch of the step for that reason). On the calling thread, they
    # are inside "profiled_step" > "backward"; the kernels are the same.
    torch.autograd.set_multithreading_enabled(False)
    for _ in range(args.warmup):
        step()
    torch.cuda.synchronize()
    for _ in range(args.steps):
        with torch.cuda.nvtx.range("profiled_step"):
            step()
    torch.cuda.synchronize()
    tokens = args.batch * args.seq
    print(f"transformer_step.py: {args.steps} profiled step(s) of TransformerEncoderLayer(d_model={args.d_model}, "
          f"nhead={args.heads}, dim_feedforward={args.ffn}) on {tokens} BF16 tokens, {torch.cuda.get_device_name()}")


if __name__ == "__main__":
    main()
