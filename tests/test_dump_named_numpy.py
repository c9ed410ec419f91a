"""Reads `qrnn run --pass training --dump` files of the named layout (runtime/hdf5_dump.h) with h5py and checks
every gradient in numpy: the LSTM baselines, the CNN and the dense QRNN stack.

Each stack recomputed in numpy float64 from the dumped input, weights and initial state (the LSTMs' equations
and layouts: runtime/lstm_params.h; the CNN: tanh of the QRNN's masked conv, zeros before the sequence; the
dense stack: the QRNN layer of test_dump_h5py.py over concat(x, h_0 .. h_{j-1})), loss = sum(dh * h) with the
dumped /output/dh, and central finite differences of that loss for every element of the input and every
parameter and initial state, against the dumped (float32) gradients. Run by ctest with Debian's /usr/bin/python3.
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


def cnn_layer(x, weights, bias):
    """x [T][B][n], weights [1][k][n][m], bias [1][m]: y[t] = tanh(bias + sum_j x[t - (k-1) + j] W[j])."""
    k, T = weights.shape[1], x.shape[0]
    padded = np.concatenate([np.zeros((k - 1,) + x.shape[1:]), x])
    return np.tanh(bias[0] + sum(padded[j:j + T] @ weights[0, j] for j in range(k)))


def lstm_items(layers):
    return [f"/layer_{l}/{item}" for l in range(layers) for item in ["w_input", "w_recurrent", "bias", "state/h", "state/c"]]


def lstm_stack(v, x, layers, gates):
    for l in range(layers):
        g = f"/layer_{l}/"
        x = lstm_layer(x, v[g + "w_input"], v[g + "w_recurrent"], v[g + "bias"], v[g + "state/h"], v[g + "state/c"])
    return x


def cnn_stack(v, x, layers, gates):
    for l in range(layers):
        x = cnn_layer(x, v[f"/layer_{l}/weights"], v[f"/layer_{l}/bias"])
    return x


def dense_items(layers):  # one stack entry (/layer_0) holding every layer j
    return [f"/layer_0/{item}_{j}" if item.startswith("state") else f"/layer_0/layer_{j}/{item}"
            for j in range(layers) for item in ["weights", "bias", "state/history", "state/c"]]


def dense_stack(v, x, layers, gates):
    """Layer j reads concat(x, h_0 .. h_{j-1}); the output is the last layer's h (the QRNN layer of
    test_dump_h5py.py)."""
    inputs = x
    for j in range(layers):
        g = "/layer_0/"
        h, _ = layer(inputs, v[g + f"state/history_{j}"], v[g + f"layer_{j}/weights"], v[g + f"layer_{j}/bias"],
                     v[g + f"state/c_{j}"], gates)
        inputs = np.concatenate([inputs, h], axis=2)
    return h


MODELS = {"lstm-onednn": (lstm_items, lstm_stack), "lstm-halide": (lstm_items, lstm_stack),
          "cnn": (lambda layers: [f"/layer_{l}/{item}" for l in range(layers) for item in ["weights", "bias"]], cnn_stack),
          "qrnn-dense": (dense_items, dense_stack)}


def check(model, layers):
    items, stack = MODELS[model]
    cli = os.environ["QRNN_CLI"]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "dump.h5")
        subprocess.run([cli, "run", "--model", model, "--pass", "training", "--layers", str(layers), "--batch", "2",
                        "--seq", "3", "--input", "5", "--hidden", "6", "--repeats", "1", "--warmup", "0",
                        "--dump", path], check=True, stdout=subprocess.DEVNULL)
        with h5py.File(path, "r") as f:
            text = lambda name: f.attrs[name].decode() if isinstance(f.attrs[name], bytes) else f.attrs[name]  # noqa: E731
            assert text("layout") == "named", text("layout")
            gates = text("gates") if "gates" in f.attrs else None
            read = lambda name: f[name][()].astype(np.float64)  # noqa: E731
            values, grads = {"/input/x": read("/input/x")}, {"/input/x": read("/input/dx")}
            for name in items(layers):
                values[name] = read(name)
                _, entry, rest = name.split("/", 2)  # "/layer_<l>/<rest>" -> "/layer_<l>/grad/<rest>"
                grads[name] = read(f"/{entry}/grad/{rest}")
            dh, h_out = read("/output/dh"), read("/output/h")

    def forward():
        return stack(values, values["/input/x"], layers, gates)

    out_err = np.abs(forward() - h_out).max() / np.abs(h_out).max()
    assert out_err < 1e-5, (model, "output", out_err)
    worst = worst_gradient_error(values, grads, lambda: float((dh * forward()).sum()), (model, layers))
    print(f"{model} L={layers}: output rel err {out_err:.1e}, {len(values)} gradients, worst rel err vs numpy "
          f"finite differences {worst:.2e}")


if __name__ == "__main__":
    for model in MODELS:
        check(model, 2)
    sys.exit(0)
