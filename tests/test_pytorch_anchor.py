"""The PyTorch anchor of the LM step (experiments/anchors/pytorch_lm.py) at a tiny configuration (2 x 16 units,
vocabulary 50, 3 batches): its results file has lm/step_timing.h's layout (qrnn, torch-qrnn, torch-lstm; every part
a series per timed batch, the parts adding up to the total), the torch QRNN LM has as many parameters as ours,
`qrnn report` prints the torch rows with paired ratios (same rounds) and, beside a file of a separate run, says
that those ratios come from separate runs; the Fig. 4 notebook draws the anchor (QRNN_FIG4_ANCHOR)."""
import os
import shutil
import subprocess
import sys
import tempfile

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "support"))
from notebook_check import run_notebook  # noqa: E402

CLI = os.environ["QRNN_CLI"]
SOURCE = os.environ["QRNN_SOURCE_DIR"]
ANCHOR = os.path.join(SOURCE, "experiments", "anchors", "pytorch_lm.py")
PARTS = ["rnn_ms", "softmax_ms", "optim_ms", "other_ms", "total_ms"]


def check(cond, what):
    if not cond:
        sys.exit(f"FAIL: {what}")


def run(cmd, cwd):
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=600)
    check(r.returncode == 0, f"{' '.join(cmd)} exited {r.returncode}:\n{r.stdout}{r.stderr}")
    return r.stdout


def main():
    work = tempfile.mkdtemp(prefix="qrnn_pytorch_anchor_")
    try:
        # 40 words over 30 lines: 41 with <eos>, 42 with <unk>; the vocabulary padded to 50.
        train = os.path.join(work, "tiny.txt")
        rng = np.random.default_rng(0)
        with open(train, "w") as f:
            for _ in range(30):
                f.write(" ".join(f"w{i}" for i in rng.integers(0, 40, 20)) + "\n")
        tiny = ["--train", train, "--vocab", "50", "--emb", "16", "--hidden", "16", "--layers", "2", "--batch", "4",
                "--bptt", "10", "--warmup", "1", "--batches", "3"]
        config = os.path.join(SOURCE, "experiments", "paper_fig4_left.yaml")
        paired = os.path.join(work, "paired.h5")
        out = run(["/usr/bin/python3", ANCHOR, config] + tiny + ["--per-round", "3", "--qrnn", CLI, "--results", paired], work)
        check("torch-qrnn / qrnn, paired (same rounds)" in out, f"no paired ratio printed:\n{out}")

        with h5py.File(paired, "r") as f:
            check(f.attrs["format"] == "qrnn-lm-step-timing", "format attribute")
            check(f.attrs["models"] == "qrnn,torch-qrnn,torch-lstm", f"models attribute {f.attrs['models']}")
            for key in ["config", "vocab", "vocab_file", "warmup", "batches", "host", "cpu_model", "cores", "target",
                        "environment"]:
                check(key in f.attrs, f"root attribute {key} missing")
            check(int(f.attrs["vocab"]) == 50 and int(f.attrs["vocab_file"]) == 42, "vocab, vocab_file")
            check(int(f.attrs["batches"]) == 3 and int(f.attrs["warmup"]) == 1, "batches, warmup")
            check("hidden: 16" in f.attrs["config"], "config text")
            params = {}
            for m in ["qrnn", "torch-qrnn", "torch-lstm"]:
                g = f["models"][m]
                s = {p: g[p][:] for p in PARTS}
                for p in PARTS:
                    check(s[p].dtype == np.float64 and s[p].shape == (3,), f"{m}/{p}: {s[p].dtype} {s[p].shape}")
                check((s["rnn_ms"] > 0).all() and (s["softmax_ms"] > 0).all() and (s["optim_ms"] > 0).all(), f"{m}: times > 0")
                check(np.allclose(s["rnn_ms"] + s["softmax_ms"] + s["optim_ms"] + s["other_ms"], s["total_ms"]), f"{m}: parts")
                params[m] = int(g.attrs["parameters"])
            # Embedding 50 x 16, two layers of one Linear (2 x 16 -> 3 x 16), decoder 16 -> 50: as ours.
            want = 50 * 16 + 2 * (32 * 48 + 48) + 16 * 50 + 50
            check(params["qrnn"] == want and params["torch-qrnn"] == want, f"QRNN parameters {params} (want {want})")
            check(params["torch-lstm"] > want, f"LSTM parameters {params}")

        report = run([CLI, "report", paired], work)
        for want in ["torch-qrnn", "torch-lstm", "ratios to the QRNN", "against PyTorch",
                     "faster than torch-qrnn (target >= 1.5x", "faster than torch-lstm (target >= 4.0x", "paired, same rounds"]:
            check(want in report, f"'{want}' not in `qrnn report {paired}`:\n{report}")
        rows = [line.split() for line in report.splitlines() if line.strip().startswith("torch-qrnn ") and "|" in line]
        check(len(rows) == 3, f"torch-qrnn rows (times, bar, ratios):\n{report}")
        check(rows[2][-2].endswith("x") and rows[2][-1].endswith("x"), f"paired ratios of torch-qrnn: {rows[2]}")

        # Torch alone, reported beside the first file: a separate run, its ratios said to be so.
        alone = os.path.join(work, "torch.h5")
        run(["/usr/bin/python3", ANCHOR, config] + tiny + ["--qrnn", "none", "--models", "torch-qrnn", "--results", alone], work)
        with h5py.File(alone, "r") as f:
            check(f.attrs["models"] == "torch-qrnn", f"models attribute {f.attrs['models']}")
        both = run([CLI, "report", paired, alone], work)
        for want in [f"with {alone} (a separate run): torch-qrnn#2", "torch-qrnn#2", "qrnn, separate run",
                     "their ratios come from separate runs"]:
            check(want in both, f"'{want}' not in `qrnn report {paired} {alone}`:\n{both}")

        # The notebook: ours from a file of the QRNN alone, the anchor's file beside it (paired with its own QRNN).
        ours = os.path.join(work, "ours.h5")
        shutil.copy(paired, ours)
        with h5py.File(ours, "a") as f:
            f.attrs["models"] = "qrnn"
            del f["models"]["torch-qrnn"], f["models"]["torch-lstm"]
        run_notebook(os.path.join(SOURCE, "notebooks", "paper_fig4_left.ipynb"), os.path.join(work, "executed.ipynb"),
                     {"QRNN_FIG4_RESULTS": ours, "QRNN_FIG4_ANCHOR": paired},
                     ["qrnn: rnn ", "torch-qrnn: rnn ", "torch-lstm: rnn ", "our QRNN timed in the same rounds",
                      "torch-qrnn / qrnn step: ", "(paired, same rounds)"])
        print("pytorch anchor: results file, report and notebook checked")
    finally:
        shutil.rmtree(work, ignore_errors=True)


main()
