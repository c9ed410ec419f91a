"""CUDA training schedule: compile the forward-with-tape and backward pipelines of "cuda-tiled" for
host-cuda-cuda_capability_80 (gpu/qrnn_aot training-forward|training-backward, LLVM assembly) for every
pooling, extract the PTX and assemble it with ptxas for sm_90. Fails on any ptxas error; prints each
kernel's registers and spill bytes. (No GPU here: the kernels are compiled and assembled, not run.)"""
import os
import re
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_gpu_ptxas import AOT, PTXAS, POOLINGS, extract_ptx, report  # noqa: E402


class CudaTrainingPtxas(unittest.TestCase):
    def test_training_pipelines_assemble_for_sm90(self):
        self.assertTrue(os.path.exists(PTXAS), PTXAS + " missing (CUDA Toolkit)")
        with tempfile.TemporaryDirectory() as tmp:
            for kind in ["training-forward", "training-backward"]:
                for pooling in POOLINGS:
                    with self.subTest(kind=kind, pooling=pooling):
                        prefix = os.path.join(tmp, kind + "_" + pooling)
                        fn = "qrnn_" + re.sub(r"\W", "_", kind + "_" + pooling)
                        aot = subprocess.run([AOT, kind, "cuda-tiled", pooling, "host-cuda-cuda_capability_80", fn,
                                              prefix, "llvm_assembly"], capture_output=True, text=True)
                        self.assertEqual(aot.returncode, 0, aot.stderr)
                        with open(prefix + ".ll", encoding="latin-1") as f:
                            ptx = extract_ptx(f.read())
                        self.assertIsNotNone(ptx, "no PTX in " + prefix + ".ll")
                        kernels = re.findall(r"\.entry\s+(\w+)", ptx)
                        if kind == "training-backward":  # every backward stage runs on the device
                            for stage in ["dcell", "dpre", "dweights_acc", "dinput", "dbias_acc", "dx", "dc0"]:
                                self.assertTrue(any(stage in k for k in kernels), (stage, kernels))
                        with open(prefix + ".ptx", "w") as f:
                            f.write(ptx)
                        r = subprocess.run([PTXAS, "--gpu-name", "sm_90", "-v", prefix + ".ptx", "-o", prefix + ".cubin"],
                                           capture_output=True, text=True)
                        self.assertEqual(r.returncode, 0, r.stderr)
                        self.assertNotIn("error", r.stderr.lower())
                        report(kind, pooling, r.stderr)


if __name__ == "__main__":
    unittest.main()
