// `qrnn run --pass training`: verified against the reference gradients on awkward shapes (stacked, masks on),
// refused with a clear error for a schedule or pooling variant without a backward, a bad --pass value.
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/support/cli.h"

namespace qrnn::test {
namespace {
void expect_error(const std::string &args, const std::string &message) {
    CliResult r = run_cli(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << "want: " << message << "\ngot: " << r.output;
}
}  // namespace

TEST(TrainingCli, VerifiesEveryGradient) {
    CliResult r = run_cli("run --pass training --verify --pooling f,ifo --window 3 --layers 2 --seq 1,6 --batch 1,3 "
                          "--input 5 --hidden 17 --mode train --zoneout 0.3 --dropout 0.2 --repeats 1 --warmup 0");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("verify: all within"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("training"), std::string::npos) << r.output;  // the pass column
}

TEST(TrainingCli, BaselinesVerifyEveryGradient) {
    // Two layers (the LSTM's carried h, c per layer; the CNN's window > T), against reference/baselines_backward.
    CliResult r = run_cli("run --pass training --verify --model lstm-onednn,lstm-halide,cnn --layers 2 --seq 1,6 --batch 3 "
                          "--input 5 --hidden 17 --window 3 --repeats 1 --warmup 0");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("verify: all within"), std::string::npos) << r.output;
    r = run_cli("run --pass training --verify --tolerance 1e-12 --model lstm-onednn,cnn --seq 5 --batch 2 --input 4 "
                "--hidden 9 --repeats 1 --warmup 0");
    EXPECT_EQ(r.exit_code, 1) << r.output;  // the comparison is not vacuous
}

// The paper grid's largest cell (B=256 T=512, 320 units) runs: a dX schedule whose block size made bounds inference
// size dpre at 6x its extent failed there ("Total allocation for buffer dpre is 3048376320"); ~3 GB, ~15 s.
TEST(TrainingCli, PaperGridLargestCellRuns) {
    CliResult r = run_cli("run --pass training --batch 256 --seq 512 --repeats 1 --warmup 0");
    EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST(TrainingCli, TightToleranceFails) {
    CliResult r = run_cli("run --pass training --verify --tolerance 1e-12 --seq 9 --batch 2 --input 16 --hidden 16 "
                          "--repeats 1 --warmup 0");
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find("FAIL"), std::string::npos) << r.output;
}

TEST(TrainingCli, BadPassAndForwardOnlyPiecesAreRefused) {
    expect_error("run --pass backward", "--pass must be inference or training (got 'backward')");
    expect_error("run --pass training --schedule fused --seq 2 --batch 1", "schedule 'fused' has no training (backward) schedule");
    const std::string plugin =
        (std::filesystem::path(QRNN_CLI).parent_path() / "plugins" / "test-fixtures" / "libqrnn_test_forward_only.so").string();
    expect_error("--plugin " + plugin + " run --pass training --pooling fo-tanh-forward-only --seq 2 --batch 1",
                 "pooling variant 'fo-tanh-forward-only' has no backward pass");
}

}  // namespace qrnn::test
