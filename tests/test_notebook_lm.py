"""Executes notebooks/lm_training.ipynb on the results file of a short `qrnn train` run (an LSTM stack: no JIT
compilation); fails if the notebook raises or its outputs lack the summary line, the time split or the figure."""
import os
import shutil
import subprocess
import sys
import tempfile

from notebook_support import execute_notebook

CLI = os.environ["QRNN_CLI"]
SOURCE = os.environ["QRNN_SOURCE_DIR"]


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
        text, images = execute_notebook("lm_training.ipynb", {"QRNN_LM_RESULTS": results}, workdir)
        for want in ["lstm-onednn, best validation perplexity", "2 epochs", "lstm-onednn: "]:
            if want not in text:
                sys.exit(f"FAIL: '{want}' not in the notebook's output:\n{text}")
        if images != 1:
            sys.exit(f"FAIL: expected one figure, got {images}")
        print("lm notebook executed")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


main()
