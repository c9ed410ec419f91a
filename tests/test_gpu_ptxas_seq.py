"""CUDA schedule of the variable-length / bidirectional layer: compile its forward and backward pipelines
("cuda-tiled", schedules/seq_cuda.cpp) for host-cuda-cuda_capability_80 (gpu/qrnn_aot seq-forward|seq-backward,
LLVM assembly) for one direction, two concatenated and two summed, extract the PTX and assemble it with
ptxas for sm_90. Fails on any ptxas error; prints each kernel's registers and spill bytes. (No GPU here:
the kernels are compiled and assembled, not run.)"""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_gpu_ptxas import PTXAS, compile_and_assemble  # noqa: E402


class CudaSeqPtxas(unittest.TestCase):
    def test_seq_pipelines_assemble_for_sm90(self):
        self.assertTrue(os.path.exists(PTXAS), PTXAS + " missing (CUDA Toolkit)")
        with tempfile.TemporaryDirectory() as tmp:
            for kind in ["seq-forward", "seq-backward"]:
                for directions, pooling in [("1", "fo"), ("2", "ifo"), ("2sum", "f")]:
                    with self.subTest(kind=kind, directions=directions):
                        prefix = os.path.join(tmp, kind + "_" + directions)
                        kernels = compile_and_assemble(self, [kind, "cuda-tiled", pooling, directions], prefix,
                                                       kind + "_" + directions, pooling)
                        wanted = ["rev_cell"] if kind == "seq-forward" else ["dcell", "dpre", "dweights_acc", "dinput", "dx"]
                        if kind == "seq-backward" and directions != "1":
                            wanted.append("rev_dcell")
                        if kind == "seq-forward" and directions == "1":
                            wanted = ["cell"]
                        for stage in wanted:
                            self.assertTrue(any(stage in k for k in kernels), (stage, kernels))


if __name__ == "__main__":
    unittest.main()
