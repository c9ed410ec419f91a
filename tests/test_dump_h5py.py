"""Reads a `qrnn run --dump` file with h5py (the documented layout) and recomputes the layer in numpy.

An independent check in another framework: numpy float64 from the dumped inputs and weights must
reproduce /output/h and /output/c_T. Run by ctest with Debian's /usr/bin/python3.
"""
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np


def sigmoid(v):
    return 1.0 / (1.0 + np.exp(-v))


def layer(x, history, W, bias, c0, gates):
    """x [T][B][n], history [k-1][B][n], W [G][k][n][m], bias [G][m], c0 [B][m] -> h, c [T][B][m]."""
    k = W.shape[1]
    padded = np.concatenate([history, x]) if k > 1 else x
    T = x.shape[0]
    conv = np.stack([bias[g] + sum(padded[j:j + T] @ W[g, j] for j in range(k)) for g in range(len(gates))])
    act = {name: (np.tanh(conv[i]) if name == "z" else sigmoid(conv[i])) for i, name in enumerate(gates)}
    c, hs, cs = c0, [], []
    for t in range(T):
        f, z = act["f"][t], act["z"][t]
        c = f * c + (act["i"][t] if "i" in act else 1 - f) * z
        cs.append(c)
        hs.append(act["o"][t] * c if "o" in act else c)
    return np.array(hs), np.array(cs)


def check(pooling, window, layers):
    cli = os.environ["QRNN_CLI"]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "dump.h5")
        subprocess.run([cli, "run", "--pooling", pooling, "--window", str(window), "--layers", str(layers),
                        "--batch", "3", "--seq", "6", "--input", "5", "--hidden", "11", "--repeats", "1",
                        "--dump", path], check=True, stdout=subprocess.DEVNULL)
        with h5py.File(path, "r") as f:
            assert f.attrs["format"] == b"qrnn-dump" or f.attrs["format"] == "qrnn-dump", f.attrs["format"]
            assert f.attrs["pooling"] in (pooling, pooling.encode())
            gates = f.attrs["gates"]
            gates = gates.decode() if isinstance(gates, bytes) else gates
            x = f["/input/x"][()].astype(np.float64)
            c_T = []
            for l in range(layers):
                g = f[f"/layer_{l}"]
                W = g["weights"][()].astype(np.float64)
                hist = g["history"][()].astype(np.float64) if window > 1 else np.zeros((0,) + x.shape[1:])
                x, c = layer(x, hist, W, g["bias"][()].astype(np.float64), g["c0"][()].astype(np.float64), gates)
                c_T.append(c[-1])
            err_h = np.abs(f["/output/h"][()] - x).max() / np.abs(x).max()
            err_c = np.abs(f["/output/c_T"][()] - np.array(c_T)).max() / np.abs(np.array(c_T)).max()
    assert err_h < 1e-5 and err_c < 1e-5, (pooling, window, err_h, err_c)
    print(f"{pooling} k={window} L={layers}: rel err h {err_h:.2e}, c_T {err_c:.2e}")


if __name__ == "__main__":
    for pooling, window, layers in [("f", 1, 1), ("fo", 2, 2), ("ifo", 4, 1)]:
        check(pooling, window, layers)
    sys.exit(0)
