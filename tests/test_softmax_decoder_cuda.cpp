// The softmax decoder's CUDA schedule (schedules/cuda_softmax.cpp): both pipelines (evaluation, training)
// compiled for host-cuda-cuda_capability_80 as LLVM assembly, their PTX extracted and assembled by ptxas for
// sm_90 (no GPU here: compiled and assembled, not run). Fails on any ptxas error or a stage left on the host.
#include <gtest/gtest.h>

#include <fstream>
#include <iostream>
#include <sstream>

#include "schedules/softmax_schedule.h"
#include "tests/support/cli.h"

namespace qrnn::test {
namespace {
const char *kPtxas = "/usr/local/cuda/bin/ptxas";

// The PTX Halide embeds in the host module: the string constant @cuda_gpu_source_kernels.data, \XX escaped.
std::string extract_ptx(const std::string &ll) {
    const std::string marker = "@cuda_gpu_source_kernels.data = private constant [";
    size_t at = ll.find(marker);
    if (at == std::string::npos) return "";
    at = ll.find("c\"", at);
    std::string ptx;
    for (size_t i = at + 2; i < ll.size() && ll[i] != '"'; i++) {
        if (ll[i] == '\\' && ll[i + 1] == '\\') ptx += '\\', i++;
        else if (ll[i] == '\\') ptx += static_cast<char>(std::stoi(ll.substr(i + 1, 2), nullptr, 16)), i += 2;
        else ptx += ll[i];
    }
    while (!ptx.empty() && ptx.back() == '\0') ptx.pop_back();
    return ptx;
}

// Compiles, assembles, prints ptxas's register/spill report; returns the PTX.
std::string assemble(Halide::Pipeline p, const std::vector<Halide::Argument> &args, const std::string &name) {
    const Halide::Target target("host-cuda-cuda_capability_80");
    const std::string prefix = scratch_path(name);
    p.compile_to_llvm_assembly(prefix + ".ll", args, name, target);
    std::stringstream ll;
    ll << std::ifstream(prefix + ".ll").rdbuf();
    const std::string ptx = extract_ptx(ll.str());
    EXPECT_NE(ptx.find(".target sm_80"), std::string::npos) << "no PTX in " << prefix << ".ll";
    std::ofstream(prefix + ".ptx") << ptx;
    CliResult r = run_shell(std::string(kPtxas) + " --gpu-name sm_90 -v " + prefix + ".ptx -o " + prefix + ".cubin 2>&1");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(r.output.find("error"), std::string::npos) << r.output;
    std::cout << r.output;
    return ptx;
}
}  // namespace

TEST(SoftmaxDecoderCuda, PipelinesAssembleForSm90) {
    ASSERT_TRUE(std::ifstream(kPtxas).good()) << kPtxas << " missing (CUDA Toolkit)";
    const Halide::Target target("host-cuda-cuda_capability_80");
    DecoderInputs eval_in, train_in;
    DecoderFuncs eval_f = define_softmax_decoder(eval_in, kDecoderVocabBlock);
    DecoderFuncs train_f = define_softmax_decoder(train_in, kDecoderVocabBlock);
    schedule_softmax_decoder_cuda(eval_f, target);
    schedule_softmax_decoder_cuda(train_f, target);
    std::string ptx = assemble(Halide::Pipeline(eval_f.row_loss), eval_in.eval_arguments(), "decoder_eval");
    for (const char *stage : {"decoder_logits", "decoder_row_max", "decoder_row_sum", "decoder_row_loss"})
        EXPECT_NE(ptx.find(stage), std::string::npos) << stage << " is not a kernel";
    ptx = assemble(Halide::Pipeline({train_f.row_loss, train_f.dhidden, train_f.dweights, train_f.dbias}),
                   train_in.training_arguments(), "decoder_train");
    for (const char *stage : {"decoder_logits", "decoder_dlogits", "decoder_dhidden", "decoder_dweights", "decoder_dbias"})
        EXPECT_NE(ptx.find(stage), std::string::npos) << stage << " is not a kernel";
}

}  // namespace qrnn::test
