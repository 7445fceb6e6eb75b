"""A second kind of application: a 3-D complex FFT and its inverse (cuFFT through torch.fft) and a sort of
random floats with their indices (PyTorch's radix sort, CUB), for profiling under Nsight Compute with
scripts/profile_app.sh (docs/app-profiling.md). Warm-up runs outside NVTX; the profiled run is inside the
range "profiled_run" with "fft" and "sort" inside it:

    bash scripts/profile_app.sh -o OUT --nvtx-include 'profiled_run/' -- python3 examples/apps/fft_sort.py
"""
import argparse

import torch


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fft-n", type=int, default=256, help="edge of the cubic complex64 FFT")
    ap.add_argument("--sort-n", type=int, default=1 << 26, help="float32 keys to sort")
    ap.add_argument("--warmup", type=int, default=2)
    args = ap.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("fft_sort.py: no CUDA device visible to PyTorch")
    torch.manual_seed(0)
    dev = torch.device("cuda")
    n = args.fft_n
    field = torch.randn(n, n, n, device=dev, dtype=torch.complex64)
    keys = torch.rand(args.sort_n, device=dev, dtype=torch.float32)

    def run() -> None:
        with torch.cuda.nvtx.range("fft"):
            back = torch.fft.ifftn(torch.fft.fftn(field))
        with torch.cuda.nvtx.range("sort"):
            torch.sort(keys)
        return back

    for _ in range(args.warmup):
        run()
    torch.cuda.synchronize()
    with torch.cuda.nvtx.range("profiled_run"):
        back = run()
    torch.cuda.synchronize()
    err = (back - field).abs().max().item() / field.abs().max().item()
    print(f"fft_sort.py: FFT {n}^3 complex64 forward+inverse (round-trip error {err:.2e}), sort of {args.sort_n} "
          f"float32 keys, {torch.cuda.get_device_name()}")


if __name__ == "__main__":
    main()
