"""Shared by the notebook tests (tests/test_notebook*.py): execute a notebook with jupyter nbconvert and check its
text outputs and figures."""
import json
import os
import subprocess
import sys


def run_notebook(notebook, out, env_vars, wants, figures=1):
    """Executes `notebook` (from its directory) into `out` with env_vars set; exits with a FAIL line if it raises,
    its text outputs lack one of `wants`, or it does not draw exactly `figures` figures. Returns the text."""
    env = dict(os.environ, PYDEVD_DISABLE_FILE_VALIDATION="1", **env_vars)
    proc = subprocess.run(["/usr/bin/python3", "-m", "jupyter", "nbconvert", "--execute", "--to", "notebook",
                           "--output", out, notebook], env=env, cwd=os.path.dirname(notebook),
                          capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        sys.exit(f"notebook failed:\n{proc.stderr[-4000:]}")
    text, images = "", 0
    for cell in json.load(open(out))["cells"]:
        for o in cell.get("outputs", []):
            text += "".join(o.get("text", ""))
            images += "image/png" in o.get("data", {})
    for want in wants:
        if want not in text:
            sys.exit(f"FAIL: '{want}' not in the notebook's output:\n{text}")
    if images != figures:
        sys.exit(f"FAIL: expected {figures} figure(s), got {images}")
    return text
