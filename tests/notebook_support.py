"""Shared by the notebook tests: execute a notebook (jupyter nbconvert --execute, Debian's python3) with extra
environment variables and collect the text of its outputs and the number of figures."""
import json
import os
import subprocess
import sys

SOURCE = os.environ["QRNN_SOURCE_DIR"]


def execute_notebook(name, env_extra, workdir):
    """Runs notebooks/<name> from the notebooks directory; exits the test with its stderr if it fails.
    Returns (text of every output, number of PNG figures)."""
    out = os.path.join(workdir, "executed.ipynb")
    env = dict(os.environ, PYDEVD_DISABLE_FILE_VALIDATION="1", **env_extra)
    proc = subprocess.run(["/usr/bin/python3", "-m", "jupyter", "nbconvert", "--execute", "--to", "notebook",
                           "--output", out, os.path.join(SOURCE, "notebooks", name)], env=env,
                          cwd=os.path.join(SOURCE, "notebooks"), capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        sys.exit(f"notebook failed:\n{proc.stderr[-4000:]}")
    text, images = "", 0
    for cell in json.load(open(out))["cells"]:
        for o in cell.get("outputs", []):
            text += "".join(o.get("text", ""))
            images += "image/png" in o.get("data", {})
    return text, images
