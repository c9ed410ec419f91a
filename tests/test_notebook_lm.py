"""Executes notebooks/lm_training.ipynb on the results file of a short `qrnn train` run (an LSTM stack: no JIT
compilation), then on that file with a sweep of two seeds; fails if the notebook raises or its outputs lack the
summary lines (per run; the sweep's setting: mean over its 2 seeds), the time split or the figure."""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "support"))
from notebook_check import run_notebook  # noqa: E402

CLI = os.environ["QRNN_CLI"]
SOURCE = os.environ["QRNN_SOURCE_DIR"]
NOTEBOOK = os.path.join(SOURCE, "notebooks", "lm_training.ipynb")


def main():
    workdir = tempfile.mkdtemp(prefix="qrnn_notebook_lm_")
    try:
        lines = open(os.path.join(SOURCE, "data", "ptb", "ptb.valid.txt")).read().splitlines()
        train, valid = os.path.join(workdir, "train.txt"), os.path.join(workdir, "valid.txt")
        open(train, "w").write("\n".join(lines[:100]) + "\n")
        open(valid, "w").write("\n".join(lines[100:130]) + "\n")
        results = os.path.join(workdir, "lstm.h5")
        subprocess.run([CLI, "train", "--model", "lstm-onednn", "--train", train, "--valid", valid, "--emb", "16",
                        "--hidden", "16", "--batch", "4", "--bptt", "10", "--epochs", "2", "--max_batches", "5",
                        "--results", results], check=True, capture_output=True)
        run_notebook(NOTEBOOK, os.path.join(workdir, "executed.ipynb"), {"QRNN_LM_RESULTS": results},
                     ["lstm-onednn, best validation perplexity", "2 epochs", "lstm-onednn file=lstm.h5: 1 runs", "ms per batch"])
        sweep_yaml, sweep = os.path.join(workdir, "sweep.yaml"), os.path.join(workdir, "sweep.h5")
        open(sweep_yaml, "w").write(f"name: nb\nbase:\n  model: lstm-onednn\n  input: 16\n  hidden: 16\n  layers: 1\n"
                                    f"  batch: 4\n  seq: 10\n  train.epochs: 2\n  train.max_batches: 5\n"
                                    f"  train.train: {train}\n  train.valid: {valid}\ngrid:\n  seed: [1, 2]\n")
        subprocess.run([CLI, "sweep", sweep_yaml, "-o", sweep], check=True, capture_output=True)
        run_notebook(NOTEBOOK, os.path.join(workdir, "executed_sweep.ipynb"), {"QRNN_LM_RESULTS": results + "," + sweep},
                     ["run 0: lstm-onednn, best validation perplexity", "(seed 2)", "lstm-onednn file=lstm.h5: 1 runs",
                      "lstm-onednn: 2 runs, mean best validation"])
        print("lm notebook executed")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


main()
