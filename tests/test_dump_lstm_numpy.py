"""Reads the LSTM baselines' `qrnn run --pass training --dump` files (layout "named", runtime/hdf5_dump.h) with
h5py and checks every gradient in numpy.

The LSTM stack recomputed in numpy float64 from the dumped input, weights and initial state (equations and
layouts: runtime/lstm_params.h), loss = sum(dh * h) with the dumped /output/dh, and central finite differences
of that loss for every element of the input, w_input, w_recurrent, bias and the initial h and c of every
layer, against the dumped (float32) gradients of oneDNN's and the Halide LSTM. Run by ctest with Debian's
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


def sigmoid(v):
    return 1 / (1 + np.exp(-v))


def lstm_layer(x, w_input, w_recurrent, bias, h, c):
    """x [T][B][n], w_input [n][4][m], w_recurrent [m][4][m], bias [4][m], h, c [B][m]; gates i, f, g, o."""
    out = []
    for x_t in x:
        pre = np.einsum("bn,ngm->bgm", x_t, w_input) + np.einsum("bk,kgm->bgm", h, w_recurrent) + bias
        i, f, g, o = sigmoid(pre[:, 0]), sigmoid(pre[:, 1]), np.tanh(pre[:, 2]), sigmoid(pre[:, 3])
        c = f * c + i * g
        h = o * np.tanh(c)
        out.append(h)
    return np.stack(out)


def check(model, layers):
    cli = os.environ["QRNN_CLI"]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "dump.h5")
        subprocess.run([cli, "run", "--model", model, "--pass", "training", "--layers", str(layers), "--batch", "2",
                        "--seq", "3", "--input", "5", "--hidden", "6", "--repeats", "1", "--warmup", "0",
                        "--dump", path], check=True, stdout=subprocess.DEVNULL)
        with h5py.File(path, "r") as f:
            layout = f.attrs["layout"]
            assert (layout.decode() if isinstance(layout, bytes) else layout) == "named", layout
            read = lambda name: f[name][()].astype(np.float64)  # noqa: E731
            values, grads = {"/input/x": read("/input/x")}, {"/input/x": read("/input/dx")}
            for l in range(layers):
                for item in ["w_input", "w_recurrent", "bias", "state/h", "state/c"]:
                    values[f"/layer_{l}/{item}"] = read(f"/layer_{l}/{item}")
                    grads[f"/layer_{l}/{item}"] = read(f"/layer_{l}/grad/{item}")
            dh, h_out = read("/output/dh"), read("/output/h")

    def forward():
        x = values["/input/x"]
        for l in range(layers):
            g = f"/layer_{l}/"
            x = lstm_layer(x, values[g + "w_input"], values[g + "w_recurrent"], values[g + "bias"],
                           values[g + "state/h"], values[g + "state/c"])
        return x

    out_err = np.abs(forward() - h_out).max() / np.abs(h_out).max()
    assert out_err < 1e-5, (model, "output", out_err)
    worst = worst_gradient_error(values, grads, lambda: float((dh * forward()).sum()), (model, layers))
    print(f"{model} L={layers}: output rel err {out_err:.1e}, {len(values)} gradients, worst rel err vs numpy "
          f"finite differences {worst:.2e}")


if __name__ == "__main__":
    for model in ["lstm-onednn", "lstm-halide"]:
        check(model, 2)
    sys.exit(0)
