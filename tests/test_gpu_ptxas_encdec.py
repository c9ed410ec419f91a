"""CUDA pipelines of the encoder-decoder: the attention layer's training pipelines ("cuda-tiled" with the
batch_bias input, the dgates input and dbatch_bias output, h = c), the attention forward and backward and the
conditioning (V_l h~^l) forward and backward,
compiled for host-cuda-cuda_capability_80 (gpu/qrnn_aot, LLVM assembly), their PTX assembled by ptxas for
sm_90. Fails on any ptxas error; prints each kernel's registers and spills. Every stage runs on the device."""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_gpu_ptxas import PTXAS, POOLINGS, compile_and_assemble  # noqa: E402



class CudaEncDecPtxas(unittest.TestCase):
    def test_decoder_layer_pipelines_assemble_for_sm90(self):
        self.assertTrue(os.path.exists(PTXAS), PTXAS + " missing (CUDA Toolkit)")
        with tempfile.TemporaryDirectory() as tmp:
            for kind in ["decoder-forward", "decoder-backward"]:
                for pooling in POOLINGS:
                    with self.subTest(kind=kind, pooling=pooling):
                        prefix = os.path.join(tmp, kind + "_" + pooling)
                        kernels = compile_and_assemble(self, [kind, "cuda-tiled", pooling], prefix, kind, pooling)
                        if kind == "decoder-backward":
                            self.assertTrue(any("dbatch_bias" in k for k in kernels), kernels)

    def assemble_stages(self, stages):
        """Each pipeline kind (qrnn_aot KIND) compiled and assembled, a kernel for each of its named stages."""
        self.assertTrue(os.path.exists(PTXAS), PTXAS + " missing (CUDA Toolkit)")
        with tempfile.TemporaryDirectory() as tmp:
            for kind, names in stages.items():
                with self.subTest(kind=kind):
                    kernels = compile_and_assemble(self, [kind], os.path.join(tmp, kind), kind, "")
                    for stage in names:
                        self.assertTrue(any(stage in k for k in kernels), (stage, kernels))

    def test_attention_pipelines_assemble_for_sm90(self):
        self.assemble_stages({"attention-forward": ["enc_t", "score", "score_max", "weight_sum", "alpha", "context_acc",
                                                    "context", "mix_acc", "mixed", "att_out"],
                              "attention-backward": ["dmixed", "dweights", "dkc", "dalpha",
                                                     "alpha_dot", "dscore", "dcell_acc", "att_dcell", "denc_acc",
                                                     "att_denc", "att_dgate_o"]})

    def test_condition_pipelines_assemble_for_sm90(self):
        self.assemble_stages({"condition-forward": ["cond_bias_acc", "cond_bias"],
                              "condition-backward": ["cond_dv_acc", "cond_dv", "cond_v_t", "cond_dlast_acc",
                                                     "cond_dlast"]})

if __name__ == "__main__":
    unittest.main()
