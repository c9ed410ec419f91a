"""CUDA training schedule: compile the forward-with-tape and backward pipelines of "cuda-tiled" for
host-cuda-cuda_capability_80 (gpu/qrnn_aot training-forward|training-backward, LLVM assembly) for every
pooling, extract the PTX and assemble it with ptxas for sm_90. Fails on any ptxas error; prints each
kernel's registers and spill bytes. (No GPU here: the kernels are compiled and assembled, not run.)"""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_gpu_ptxas import PTXAS, POOLINGS, compile_and_assemble  # noqa: E402


class CudaTrainingPtxas(unittest.TestCase):
    def test_training_pipelines_assemble_for_sm90(self):
        self.assertTrue(os.path.exists(PTXAS), PTXAS + " missing (CUDA Toolkit)")
        with tempfile.TemporaryDirectory() as tmp:
            for kind in ["training-forward", "training-backward"]:
                for pooling in POOLINGS:
                    with self.subTest(kind=kind, pooling=pooling):
                        prefix = os.path.join(tmp, kind + "_" + pooling)
                        kernels = compile_and_assemble(self, [kind, "cuda-tiled", pooling], prefix, kind, pooling)
                        if kind == "training-backward":  # every backward stage runs on the device
                            for stage in ["dcell", "dpre", "dweights_acc", "dinput", "dbias_acc", "dx", "dc0"]:
                                self.assertTrue(any(stage in k for k in kernels), (stage, kernels))


if __name__ == "__main__":
    unittest.main()
