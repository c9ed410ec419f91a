"""Executes notebooks/paper_fig4_left.ipynb on the results file of a tiny `qrnn train-speed` run of the Fig. 4 left
experiment (qrnn and lstm-onednn at 16 units, 3 batches); fails if the notebook raises or its outputs lack the summary lines, the ratios or
the figure."""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "support"))
from notebook_check import run_notebook  # noqa: E402

CLI = os.environ["QRNN_CLI"]
SOURCE = os.environ["QRNN_SOURCE_DIR"]


def main():
    workdir = tempfile.mkdtemp(prefix="qrnn_notebook_fig4_")
    try:
        results = os.path.join(workdir, "fig4.h5")
        subprocess.run([CLI, "train-speed", os.path.join(SOURCE, "experiments", "paper_fig4_left.yaml"), "--models",
                        "qrnn,lstm-onednn", "--emb", "16", "--hidden", "16", "--batch", "4", "--bptt", "10", "--warmup",
                        "0", "--batches", "3", "--results", results], check=True, capture_output=True, cwd=SOURCE)
        run_notebook(os.path.join(SOURCE, "notebooks", "paper_fig4_left.ipynb"), os.path.join(workdir, "executed.ipynb"),
                     {"QRNN_FIG4_RESULTS": results},
                     ["medians of 3 timed batches", "vocabulary 10000", "qrnn: rnn ", "lstm-onednn: rnn ",
                      "lstm-onednn / qrnn rnn: ours ", "paper 4.25x", "lstm-onednn / qrnn step: ours "])
        print("fig4 notebook executed")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


main()
