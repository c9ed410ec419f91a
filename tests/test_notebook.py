"""Executes notebooks/speed_grid.ipynb (jupyter nbconvert --execute) on results files a test sweep produced:
one as measured (QRNN only on this build), and the same with synthetic baseline rows added, so that the
speed-up heatmap path runs too. Fails if the notebook raises or its outputs lack the expected content."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import h5py
import numpy as np

CLI = os.environ["QRNN_CLI"]
SOURCE = os.environ["QRNN_SOURCE_DIR"]
NOTEBOOK = os.path.join(SOURCE, "notebooks", "speed_grid.ipynb")
SWEEP = """name: notebook_test
base: {pooling: fo, input: 320, hidden: 320, warmup: 0, repeats: 1}
grid:
  batch: [1, 2]
  seq: [2, 3]
"""
TRAINING_SWEEP = SWEEP.replace("repeats: 1}", "repeats: 1, pass: training}")


def add_synthetic_baseline(path):
    """Appends a copy of every row as model 'lstm-synthetic', 3x slower, with fresh run ids."""
    with h5py.File(path, "r+") as f:
        runs = f["runs"]
        for name in runs.attrs["columns"].split(","):
            data = runs[name].asstr()[:] if h5py.check_string_dtype(runs[name].dtype) else runs[name][:]
            extra = data.copy()
            if name == "model":
                extra[:] = "lstm-synthetic"
            elif name == "run_id":
                extra = np.array([s + "-lstm" for s in data], dtype=object)
            elif name == "median_ms":
                extra = data * 3
            dtype = runs[name].dtype
            del runs[name]
            runs.create_dataset(name, data=np.concatenate([data, extra]).astype(dtype) if not h5py.check_string_dtype(dtype)
                                else np.concatenate([data, extra]).astype(object), dtype=dtype)


def execute(results, workdir, name, inference=None):
    out = os.path.join(workdir, name)
    env = dict(os.environ, QRNN_RESULTS=results, PYDEVD_DISABLE_FILE_VALIDATION="1")
    if inference:
        env["QRNN_RESULTS_INFERENCE"] = inference
    proc = subprocess.run(["/usr/bin/python3", "-m", "jupyter", "nbconvert", "--execute", "--to", "notebook",
                           "--output", out, NOTEBOOK], env=env, cwd=os.path.join(SOURCE, "notebooks"),
                          capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        sys.exit(f"notebook failed on {results}:\n{proc.stderr[-4000:]}")
    nb = json.load(open(out))
    text, images = "", 0
    for cell in nb["cells"]:
        for o in cell.get("outputs", []):
            text += "".join(o.get("text", ""))
            images += "image/png" in o.get("data", {})
    return text, images


def check(condition, message):
    if not condition:
        sys.exit("FAIL: " + message)


def main():
    workdir = tempfile.mkdtemp(prefix="qrnn_notebook_")
    try:
        sweep = os.path.join(workdir, "sweep.yaml")
        open(sweep, "w").write(SWEEP)
        measured = os.path.join(workdir, "measured.h5")
        subprocess.run([CLI, "sweep", sweep, "-o", measured], check=True, capture_output=True)

        text, images = execute(measured, workdir, "measured.ipynb")
        check("sweep notebook_test: 4 runs" in text, "machine/sweep summary missing:\n" + text)
        check("no QRNN/baseline pair in this file" in text, "expected the QRNN-only fallback:\n" + text)
        check(re.search(r"qrnn fo k=2 schedule=tuned +4 +[0-9.]+ +[0-9.]+ +[0-9.]+\n", text), "GFLOP/s table missing:\n" + text)
        check(images == 1, f"expected one figure, got {images}")

        paired = os.path.join(workdir, "paired.h5")
        shutil.copy(measured, paired)
        add_synthetic_baseline(paired)
        text, images = execute(paired, workdir, "paired.ipynb")
        check("1 QRNN/baseline pairs: ['qrnn fo k=2 schedule=tuned vs lstm-synthetic']" in text, text)
        check("median 3.00x over 4 cells" in text, "speed-up of the synthetic 3x baseline not found:\n" + text)
        check("lstm-synthetic" in text.split("model ")[-1], "GFLOP/s table lacks the baseline:\n" + text)
        check(images == 1, f"expected one figure, got {images}")

        # Training steps (pass: training), paired the same way, beside the inference grid of `paired`.
        training_yaml = os.path.join(workdir, "training.yaml")
        open(training_yaml, "w").write(TRAINING_SWEEP)
        training = os.path.join(workdir, "training.h5")
        subprocess.run([CLI, "sweep", training_yaml, "-o", training], check=True, capture_output=True)
        add_synthetic_baseline(training)
        text, images = execute(training, workdir, "training.ipynb", inference=paired)
        check("'qrnn fo k=2 schedule=tuned vs lstm-synthetic (training step)'" in text, text)
        check("over lstm-synthetic (training step): median 3.00x over 4 cells" in text, "training grid not found:\n" + text)
        check("beside it, inference: median 3.00x over 4 cells" in text, "inference grid beside it not found:\n" + text)
        check(images == 1, f"expected one figure, got {images}")
        print("notebook executed on measured, paired and training results")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


main()
