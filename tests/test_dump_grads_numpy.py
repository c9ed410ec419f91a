"""Reads a `qrnn run --pass training --dump` file with h5py and checks every gradient in numpy.

An independent check in another framework: the QRNN stack recomputed in numpy float64 from the dumped
inputs, weights and initial state (layer() of test_dump_h5py.py), loss = sum(dh * h) with the dumped
/output/dh, and central finite differences of that loss for every element of the input, the weights, bias,
c0 and history of every layer, against the dumped (float32, Halide) gradients. Run by ctest with Debian's
/usr/bin/python3.
"""
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fd_check import worst_gradient_error  # noqa: E402
from test_dump_h5py import layer  # noqa: E402


def check(pooling, window, layers):
    cli = os.environ["QRNN_CLI"]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "dump.h5")
        subprocess.run([cli, "run", "--pass", "training", "--pooling", pooling, "--window", str(window),
                        "--layers", str(layers), "--batch", "2", "--seq", "4", "--input", "5", "--hidden", "6",
                        "--repeats", "1", "--warmup", "0", "--dump", path], check=True, stdout=subprocess.DEVNULL)
        with h5py.File(path, "r") as f:
            gates = f.attrs["gates"]
            gates = gates.decode() if isinstance(gates, bytes) else gates
            read = lambda name: f[name][()].astype(np.float64)  # noqa: E731
            values = {"/input/x": read("/input/x")}
            names = {"/input/x": "/input/dx"}
            for l in range(layers):
                for item in ["weights", "bias", "c0"] + (["history"] if window > 1 else []):
                    values[f"/layer_{l}/{item}"] = read(f"/layer_{l}/{item}")
                    names[f"/layer_{l}/{item}"] = f"/layer_{l}/grad/{item}"
            dh = read("/output/dh")
            grads = {name: read(names[name]) for name in values}

    def loss():
        x = values["/input/x"]
        for l in range(layers):
            g = f"/layer_{l}/"
            hist = values[g + "history"] if window > 1 else np.zeros((0,) + x.shape[1:])
            x, _ = layer(x, hist, values[g + "weights"], values[g + "bias"], values[g + "c0"], gates)
        return float((dh * x).sum())

    worst = worst_gradient_error(values, grads, loss, (pooling, window, layers))
    print(f"{pooling} k={window} L={layers}: {len(values)} gradients, worst rel err vs numpy finite differences {worst:.2e}")


if __name__ == "__main__":
    for pooling, window, layers in [("f", 1, 1), ("fo", 2, 2), ("ifo", 3, 2)]:
        check(pooling, window, layers)
    sys.exit(0)
