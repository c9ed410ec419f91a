// The `qrnn` CLI end to end: verify passes and can fail, dump/load round trip, and every bad input gives
// a one-line error naming the problem with a non-zero exit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>

#include "runtime/hdf5_dump.h"
#include "tests/support/cli.h"

using namespace qrnn;
using qrnn::test::run_cli;
using qrnn::test::scratch_path;

namespace {
const std::string kSmall = "--window 3 --batch 2 --seq 5 --input 7 --hidden 19 --repeats 1 --warmup 0";

void expect_error(const std::string &args, const std::string &message) {
    auto r = run_cli(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << args << "\n" << r.output;
}
std::string read_file(const std::string &path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
}
}  // namespace

TEST(Cli, VerifyPassesForEveryPooling) {
    auto r = run_cli("run --pooling f,fo,ifo " + kSmall + " --verify");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("verify: all within"), std::string::npos) << r.output;
}

TEST(Cli, VerifyFailsAboveTolerance) {
    auto r = run_cli("run " + kSmall + " --verify --tolerance 1e-12");
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find("FAIL"), std::string::npos) << r.output;
}

TEST(Cli, HelpOnEveryCommand) {
    EXPECT_EQ(run_cli("--help").exit_code, 0);
    auto r = run_cli("run --help");
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_NE(r.output.find("--verify"), std::string::npos);
    EXPECT_NE(r.output.find("--dump"), std::string::npos);
}

TEST(Cli, BadInputNamesTheProblem) {
    expect_error("run --window 0", "--window must be >= 1 (got 0)");
    expect_error("run --batch -3", "--batch must be >= 1 (got -3)");
    expect_error("run --seq 0", "--seq must be >= 1 (got 0)");
    expect_error("run --hidden 8,0", "--hidden must be >= 1 (got 0)");
    expect_error("run --batch abc", "--batch: 'abc' is not an integer");
    expect_error("run --pooling fo,xyz", "unknown pooling 'xyz'");
    expect_error("run --schedule nope", "unknown schedule 'nope'");
    expect_error("run --mode test", "--mode must be eval or train (got 'test')");
    expect_error("run --zoneout 1.5 --mode train", "--zoneout must be in [0, 1) (got 1.5)");
    expect_error("run --frobnicate", "unrecognised option '--frobnicate'");
    expect_error("run --repeats 0", "--repeats must be >= 1 (got 0)");
    expect_error("run --knob tile_t", "--knob: 'tile_t' is not NAME=VALUE");
    expect_error("run --knob warp=3 " + kSmall, "schedule 'tuned' has no knob 'warp'");
    expect_error("nosuchcommand", "unknown command 'nosuchcommand'");
}

TEST(Cli, ThreadPoolChoice) {  // QRNN_THREAD_POOL (runtime/static_thread_pool.h), inherited by the child
    setenv("QRNN_THREAD_POOL", "halide", 1);
    auto r = run_cli("run " + kSmall + " --verify");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    setenv("QRNN_THREAD_POOL", "bogus", 1);
    expect_error("run " + kSmall, "QRNN_THREAD_POOL must be 'static' or 'halide', got 'bogus'");
    unsetenv("QRNN_THREAD_POOL");
}

TEST(Cli, ThreadPoolPause) {  // QRNN_POOL_PAUSE_US: 0 (yield at once) runs; not a number, or out of range, is an error
    setenv("QRNN_POOL_PAUSE_US", "0", 1);
    auto r = run_cli("run " + kSmall + " --verify");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    for (const char *bad : {"abc", "-1", "100001", "20us"}) {
        setenv("QRNN_POOL_PAUSE_US", bad, 1);
        expect_error("run " + kSmall, std::string("QRNN_POOL_PAUSE_US must be an integer from 0 to 100000 (microseconds), got '") + bad + "'");
    }
    unsetenv("QRNN_POOL_PAUSE_US");
}

TEST(Cli, DumpLoadRoundTrip) {
    const std::string dump = scratch_path("roundtrip.h5");
    auto r = run_cli("run --pooling ifo --layers 2 " + kSmall + " --dump " + dump);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    ModelConfig cfg;
    cfg.pooling = "ifo", cfg.layers = 2, cfg.window = 3, cfg.batch = 2, cfg.seq = 5, cfg.input = 7, cfg.hidden = 19;
    RunData d = read_dump(dump, cfg);
    EXPECT_EQ(d.x.data, init_input(cfg).data);
    EXPECT_EQ(d.params[1].weights.data, init_params(cfg)[1].weights.data);

    r = run_cli("run --pooling ifo --layers 2 " + kSmall + " --load " + dump + " --verify");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    expect_error("run --pooling ifo --layers 2 --window 3 --batch 2 --seq 5 --input 7 --hidden 18 --load " + dump,
                 dump + ": dataset /layer_0/weights has shape [4][3][7][19], expected [4][3][7][18]");
    expect_error("run " + kSmall + " --load " + scratch_path("missing.h5"), "missing.h5: no such file");
}

TEST(Cli, NanInLoadedInputIsRejectedByVerify) {
    ModelConfig cfg;
    cfg.window = 3, cfg.batch = 2, cfg.seq = 5, cfg.input = 7, cfg.hidden = 19;
    RunData d{init_input(cfg), init_params(cfg), initial_state<float>(cfg), Tensor<float>({5, 2, 19}),
              Tensor<float>({1, 2, 19})};
    d.x(3, 1, 4) = NAN;
    const std::string path = scratch_path("nan.h5");
    write_dump(path, cfg, d);
    expect_error("run " + kSmall + " --load " + path + " --verify", "input x (in " + path + ") contains NaN at [3][1][4]");
}

TEST(Cli, FailedRunLeavesExistingDumpIntact) {
    const std::string path = scratch_path("precious.h5");
    std::ofstream(path) << "previous results";
    expect_error("run " + kSmall + " --load " + scratch_path("absent.h5") + " --dump " + path, "absent.h5: no such file");
    const std::string text = scratch_path("text.h5");
    std::ofstream(text) << "not hdf5";
    expect_error("run " + kSmall + " --load " + text + " --dump " + path, "text.h5: not an HDF5 file");
    expect_error("run --window 0 --dump " + path, "--window must be >= 1");
    EXPECT_EQ(read_file(path), "previous results");
}
