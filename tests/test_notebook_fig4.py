"""Executes notebooks/paper_fig4_left.ipynb on the results file of a tiny `qrnn train-speed` run of the Fig. 4 left
experiment (qrnn and lstm-onednn at 16 units, 3 batches); fails if the notebook raises or its outputs lack the summary lines, the ratios or
the figure."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

CLI = os.environ["QRNN_CLI"]
SOURCE = os.environ["QRNN_SOURCE_DIR"]
NOTEBOOK = os.path.join(SOURCE, "notebooks", "paper_fig4_left.ipynb")


def main():
    workdir = tempfile.mkdtemp(prefix="qrnn_notebook_fig4_")
    try:
        results = os.path.join(workdir, "fig4.h5")
        subprocess.run([CLI, "train-speed", os.path.join(SOURCE, "experiments", "paper_fig4_left.yaml"), "--models",
                        "qrnn,lstm-onednn", "--emb", "16", "--hidden", "16", "--batch", "4", "--bptt", "10", "--warmup",
                        "0", "--batches", "3", "--results", results], check=True, capture_output=True, cwd=SOURCE)
        out = os.path.join(workdir, "executed.ipynb")
        env = dict(os.environ, QRNN_FIG4_RESULTS=results, PYDEVD_DISABLE_FILE_VALIDATION="1")
        proc = subprocess.run(["/usr/bin/python3", "-m", "jupyter", "nbconvert", "--execute", "--to", "notebook",
                               "--output", out, NOTEBOOK], env=env, cwd=os.path.join(SOURCE, "notebooks"),
                              capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            sys.exit(f"notebook failed:\n{proc.stderr[-4000:]}")
        text, images = "", 0
        for cell in json.load(open(out))["cells"]:
            for o in cell.get("outputs", []):
                text += "".join(o.get("text", ""))
                images += "image/png" in o.get("data", {})
        for want in ["medians of 3 timed batches", "vocabulary 10000", "qrnn: rnn ", "lstm-onednn: rnn ",
                     "lstm-onednn / qrnn rnn: ours ", "paper 4.25x", "lstm-onednn / qrnn step: ours "]:
            if want not in text:
                sys.exit(f"FAIL: '{want}' not in the notebook's output:\n{text}")
        if images != 1:
            sys.exit(f"FAIL: expected one figure, got {images}")
        print("fig4 notebook executed")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


main()
