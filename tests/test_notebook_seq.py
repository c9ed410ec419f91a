"""`qrnn train --task reverse` and `--task classify` end to end at small sizes (a few steps each), then `qrnn report`
on both results files (accuracy curves, the attention heatmap) and notebooks/seq_tasks.ipynb executed on them; fails
if a run, the report or the notebook fails, or their outputs lack the summary lines, the curves, the heatmap or the
figure."""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "support"))
from notebook_check import run_notebook  # noqa: E402

CLI = os.environ["QRNN_CLI"]
SOURCE = os.environ["QRNN_SOURCE_DIR"]
NOTEBOOK = os.path.join(SOURCE, "notebooks", "seq_tasks.ipynb")
SMALL = ["--hidden", "16", "--layers", "1", "--window", "2", "--batch", "8", "--epochs", "2", "--max_batches", "4",
         "--eval_size", "16", "--min_len", "3", "--max_len", "8", "--log_seconds", "1000"]


def expect(text, wants, what):
    for want in wants:
        if want not in text:
            sys.exit(f"FAIL: '{want}' not in the {what}:\n{text}")


def main():
    workdir = tempfile.mkdtemp(prefix="qrnn_notebook_seq_")
    try:
        reverse, classify = os.path.join(workdir, "reverse.h5"), os.path.join(workdir, "classify.h5")
        runs = [subprocess.Popen([CLI, "train", "--task", task, *SMALL, *extra, "--results", path], stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True)
                for task, path, extra in [("reverse", reverse, []), ("classify", classify, ["--model", "qrnn-bidir", "--emb", "8"])]]
        for run, want in zip(runs, ["final: exact_match=", "final: accuracy="]):
            out = run.communicate(timeout=600)[0]
            if run.returncode != 0:
                sys.exit(f"FAIL: qrnn train exited {run.returncode}:\n{out}")
            expect(out, [want, "after 8 steps", "epoch 2 done: step 8"], "qrnn train output")
        report = subprocess.run([CLI, "report", reverse, classify], capture_output=True, text=True)
        if report.returncode != 0:
            sys.exit(f"FAIL: qrnn report exited {report.returncode}:\n{report.stdout}{report.stderr}")
        expect(report.stdout, ["task reverse, model encdec, attention on", "task classify, model qrnn-bidir",
                               "1:exact_match", "2:accuracy", "attention heatmap of held-out example 0 (reverse)",
                               "<- source", "chance 0.50"], "qrnn report output")
        run_notebook(NOTEBOOK, os.path.join(workdir, "executed.ipynb"), {"QRNN_SEQ_RESULTS": f"{reverse},{classify}"},
                     ["reverse encdec attention on, final held-out exact_match", "classify qrnn-bidir, final held-out accuracy",
                      "2 epochs", "heatmap: " + reverse])
        print("seq tasks: qrnn train, qrnn report and the notebook ok")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


main()
