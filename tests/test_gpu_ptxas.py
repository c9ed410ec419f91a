"""CUDA schedules: compile each GPU layer pipeline for host-cuda-cuda_capability_80 (gpu/qrnn_aot, LLVM
assembly), extract its PTX and assemble it with ptxas for sm_90. Fails on any ptxas error; prints each
kernel's registers and spill bytes (figures for docs/schedules.md)."""
import os
import re
import subprocess
import sys
import tempfile
import unittest

BUILD = os.path.dirname(os.environ["QRNN_CLI"])
AOT = os.path.join(BUILD, "gpu", "qrnn_aot")
PTXAS = "/usr/local/cuda/bin/ptxas"
SCHEDULES = ["cuda-tiled", "cuda-fused", "cuda-auto-Li2018"]
POOLINGS = ["f", "fo", "ifo"]


def extract_ptx(ll_text):
    """The PTX Halide embeds in the host module as a private i8 array constant."""
    m = re.search(r'@cuda_gpu_source_kernels\.data = private constant \[\d+ x i8\] c"((?:[^"\\]|\\[0-9A-Fa-f]{2}|\\\\)*)"', ll_text)
    if not m:
        return None
    raw = re.sub(rb"\\([0-9A-Fa-f]{2})", lambda h: bytes([int(h.group(1), 16)]), m.group(1).encode("latin-1"))
    return raw.rstrip(b"\0").decode("latin-1")


class CudaPtxas(unittest.TestCase):
    def test_every_cuda_schedule_assembles_for_sm90(self):
        self.assertTrue(os.path.exists(PTXAS), PTXAS + " missing (CUDA Toolkit)")
        with tempfile.TemporaryDirectory() as tmp:
            for schedule in SCHEDULES:
                for pooling in POOLINGS:
                    with self.subTest(schedule=schedule, pooling=pooling):
                        prefix = os.path.join(tmp, schedule + "_" + pooling)
                        kernels = compile_and_assemble(self, ["layer", schedule, pooling], prefix, schedule, pooling)
                        self.assertGreater(len(kernels), 0)


def compile_and_assemble(test, aot_args, prefix, label, pooling):
    """qrnn_aot AOT_ARGS... for CUDA capability 80 as LLVM assembly, its PTX assembled by ptxas for sm_90;
    asserts every step, reports registers and spills, returns the kernel names."""
    fn = "qrnn_" + re.sub(r"\W", "_", label + "_" + pooling)
    aot = subprocess.run([AOT] + aot_args + ["host-cuda-cuda_capability_80", fn, prefix, "llvm_assembly"],
                         capture_output=True, text=True)
    test.assertEqual(aot.returncode, 0, aot.stderr)
    with open(prefix + ".ll", encoding="latin-1") as f:
        ptx = extract_ptx(f.read())
    test.assertIsNotNone(ptx, "no PTX in " + prefix + ".ll")
    test.assertIn(".target sm_80", ptx)
    with open(prefix + ".ptx", "w") as f:
        f.write(ptx)
    r = subprocess.run([PTXAS, "--gpu-name", "sm_90", "-v", prefix + ".ptx", "-o", prefix + ".cubin"],
                       capture_output=True, text=True)
    test.assertEqual(r.returncode, 0, r.stderr)
    test.assertNotIn("error", r.stderr.lower())
    report(label, pooling, r.stderr)
    return re.findall(r"\.entry\s+(\w+)", ptx)


def report(schedule, pooling, log):
    """One line per kernel: registers, spill stores/loads (bytes)."""
    kernel = None
    for line in log.splitlines():
        m = re.search(r"Compiling entry function '(\w+)'", line)
        if m:
            kernel = m.group(1)
        m = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m:
            spills = (int(m.group(1)), int(m.group(2)))
        m = re.search(r"Used (\d+) registers", line)
        if m and kernel:
            print(f"ptxas sm_90 {schedule:17s} {pooling:3s} {kernel:60s} registers={m.group(1):>3s} "
                  f"spill_stores={spills[0]}B spill_loads={spills[1]}B", file=sys.stderr)


if __name__ == "__main__":
    unittest.main()
