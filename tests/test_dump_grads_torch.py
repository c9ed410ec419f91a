"""Reads a `qrnn run --pass training --dump` file with h5py and recomputes every gradient with torch autograd.

An independent check in another framework: the QRNN stack written in torch float64 from the dumped inputs,
weights and initial state; loss = sum(dh * h) with the dumped /output/dh; autograd's gradients of the input,
weights, bias, c0 and history must match the dumped ones. Run by ctest with Debian's /usr/bin/python3.
"""
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np
import torch


def layer(x, history, W, bias, c0, gates):
    """x [T][B][n], history [k-1][B][n] (or None), W [G][k][n][m], bias [G][m], c0 [B][m] -> h, c [T][B][m]."""
    k, T = W.shape[1], x.shape[0]
    padded = torch.cat([history, x]) if k > 1 else x
    act = {}
    for g, name in enumerate(gates):
        pre = bias[g] + sum(padded[j:j + T] @ W[g, j] for j in range(k))
        act[name] = torch.tanh(pre) if name == "z" else torch.sigmoid(pre)
    c, hs, cs = c0, [], []
    for t in range(T):
        f, z = act["f"][t], act["z"][t]
        c = f * c + (act["i"][t] if "i" in act else 1 - f) * z
        cs.append(c)
        hs.append(act["o"][t] * c if "o" in act else c)
    return torch.stack(hs), torch.stack(cs)


def tensor(f, name):
    return torch.tensor(f[name][()].astype(np.float64), requires_grad=True)


def check(pooling, window, layers):
    cli = os.environ["QRNN_CLI"]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "dump.h5")
        subprocess.run([cli, "run", "--pass", "training", "--pooling", pooling, "--window", str(window),
                        "--layers", str(layers), "--batch", "3", "--seq", "5", "--input", "7", "--hidden", "9",
                        "--repeats", "1", "--warmup", "0", "--dump", path], check=True, stdout=subprocess.DEVNULL)
        with h5py.File(path, "r") as f:
            gates = f.attrs["gates"]
            gates = gates.decode() if isinstance(gates, bytes) else gates
            x0 = tensor(f, "/input/x")
            x, leaves = x0, {"/input/dx": x0}
            for l in range(layers):
                g = f"/layer_{l}"
                W, b, c0 = tensor(f, g + "/weights"), tensor(f, g + "/bias"), tensor(f, g + "/c0")
                hist = tensor(f, g + "/history") if window > 1 else None
                leaves.update({g + "/grad/weights": W, g + "/grad/bias": b, g + "/grad/c0": c0})
                if hist is not None:
                    leaves[g + "/grad/history"] = hist
                x, _ = layer(x, hist, W, b, c0, gates)
            loss = (torch.tensor(f["/output/dh"][()].astype(np.float64)) * x).sum()
            loss.backward()
            worst = 0.0
            for name, leaf in leaves.items():
                got, want = f[name][()].astype(np.float64), leaf.grad.numpy()
                rel = np.abs(got - want).max() / max(np.abs(want).max(), 1e-30)
                assert rel < 1e-4, (pooling, window, layers, name, rel)
                worst = max(worst, rel)
    print(f"{pooling} k={window} L={layers}: {len(leaves)} gradients, worst rel err {worst:.2e}")


if __name__ == "__main__":
    for pooling, window, layers in [("f", 1, 1), ("fo", 2, 2), ("ifo", 3, 2)]:
        check(pooling, window, layers)
    sys.exit(0)
