#!/usr/bin/python3
"""PyTorch anchor for the QRNN speed figures: a QRNN layer as pytorch-qrnn's CPU path runs it (one nn.Linear over
[x_{t-1}, x_t] for the k=2 masked convolution, then fo-pooling in a Python loop over time), Debian's python3-torch
with 2 threads, eval mode, no autograd. Timed side by side with `qrnn run` on the same shapes: for each cell,
rounds alternate between the two (medians over all rounds), so both see the same machine state.

  /usr/bin/python3 experiments/anchors/pytorch_qrnn.py --qrnn build/qrnn --batch 8,32 --seq 64,256 [--json out.json]

Prints one row per cell (PyTorch ms, qrnn ms, speed-up of qrnn over PyTorch) and the CPU it ran on.
"""
import argparse
import json
import re
import statistics
import subprocess
import sys
import time

import torch


def qrnn_fo_torch(x, linear, hidden):
    """x [T][B][n] -> h [T][B][m]: conv over [x_{t-1}, x_t] as one Linear, then fo-pooling step by step."""
    T, B, n = x.shape
    x_prev = torch.cat([x.new_zeros(1, B, n), x[:-1]], 0)
    gates = linear(torch.cat([x_prev, x], 2))  # [T][B][3m]
    z, f, o = gates.chunk(3, 2)
    z, f, o = torch.tanh(z), torch.sigmoid(f), torch.sigmoid(o)
    c = x.new_zeros(B, hidden)
    hs = []
    for t in range(T):
        c = f[t] * c + (1 - f[t]) * z[t]
        hs.append(o[t] * c)
    return torch.stack(hs)


def self_check():
    """The anchor computes a QRNN: compare with the recurrence written out in float64 on a tiny shape."""
    torch.manual_seed(0)
    T, B, n, m = 5, 2, 3, 4
    lin = torch.nn.Linear(2 * n, 3 * m).double()
    x = torch.randn(T, B, n, dtype=torch.float64)
    h = qrnn_fo_torch(x, lin, m)
    W, b = lin.weight.detach(), lin.bias.detach()
    c = torch.zeros(B, m, dtype=torch.float64)
    for t in range(T):
        prev = x[t - 1] if t > 0 else torch.zeros(B, n, dtype=torch.float64)
        g = torch.cat([prev, x[t]], 1) @ W.T + b
        z, f, o = torch.tanh(g[:, :m]), torch.sigmoid(g[:, m:2 * m]), torch.sigmoid(g[:, 2 * m:])
        c = f * c + (1 - f) * z
        assert torch.allclose(h[t], o * c, atol=1e-12), "anchor QRNN disagrees with the recurrence"


def time_torch(B, T, n, m, repeats):
    lin = torch.nn.Linear(2 * n, 3 * m)
    x = torch.rand(T, B, n) * 2 - 1
    times = []
    with torch.no_grad():
        qrnn_fo_torch(x, lin, m)  # warm-up
        for _ in range(repeats):
            start = time.perf_counter()
            qrnn_fo_torch(x, lin, m)
            times.append((time.perf_counter() - start) * 1e3)
    return times


def time_qrnn(binary, B, T, n, m, repeats):
    cmd = [binary, "run", "--model", "qrnn", "--pooling", "fo", "--window", "2", "--batch", str(B), "--seq", str(T),
           "--input", str(n), "--hidden", str(m), "--warmup", "1", "--repeats", str(repeats)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    header, row = [line.split() for line in out.strip().splitlines()[-2:]]
    return float(row[header.index("median_ms")])


def cpu_name():
    with open("/proc/cpuinfo") as f:
        text = f.read()
    model = re.search(r"model name\s*:\s*(.*)", text)
    isa = "avx512" if " avx512f " in text else "avx2" if " avx2 " in text else "other"
    return f"{model.group(1) if model else 'unknown'} ({isa})"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--qrnn", default="build/qrnn")
    ap.add_argument("--batch", default="8,16,32,64,128,256")
    ap.add_argument("--seq", default="32,64,128,256,512")
    ap.add_argument("--hidden", type=int, default=320)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds per cell")
    ap.add_argument("--repeats", type=int, default=3, help="timed runs per side per round")
    ap.add_argument("--json")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    self_check()
    rows = []
    print(f"PyTorch {torch.__version__} anchor, {a.threads} threads, on {cpu_name()}; medians of {a.rounds} x {a.repeats}")
    print(f"{'B':>5} {'T':>5} {'pytorch_ms':>11} {'qrnn_ms':>9} {'speed-up':>9}")
    for B in [int(v) for v in a.batch.split(",")]:
        for T in [int(v) for v in a.seq.split(",")]:
            torch_ms, qrnn_ms = [], []
            for _ in range(a.rounds):
                torch_ms += time_torch(B, T, a.hidden, a.hidden, a.repeats)
                qrnn_ms.append(time_qrnn(a.qrnn, B, T, a.hidden, a.hidden, a.repeats))
            tm, qm = statistics.median(torch_ms), statistics.median(qrnn_ms)
            rows.append({"batch": B, "seq": T, "hidden": a.hidden, "pytorch_ms": tm, "qrnn_ms": qm, "speedup": tm / qm})
            print(f"{B:>5} {T:>5} {tm:>11.3f} {qm:>9.3f} {tm / qm:>8.2f}x", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"cpu": cpu_name(), "torch": torch.__version__, "threads": a.threads, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
