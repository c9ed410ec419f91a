// GPU schedules run for correctness on OpenCL (PoCL, on the CPU): AOT-compiled by gpu/CMakeLists.txt and run
// by qrnn_opencl_runner in its own process (it must not link libHalide); compared here with the reference.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/hash_rng.h"
#include "reference/reference.h"
#include "harness/autotuner.h"
#include "runtime/compare.h"
#include "runtime/params.h"
#include "tests/support/cli.h"
#include "tests/support/param_name.h"

namespace qrnn {
namespace {

std::string runner_path() { return (std::filesystem::path(QRNN_CLI).parent_path() / "gpu" / "qrnn_opencl_runner").string(); }

std::string run_command(const std::string &command, int &exit_code) {
    FILE *pipe = popen((command + " 2>&1").c_str(), "r");
    std::string out;
    char buf[4096];
    size_t got;
    while (pipe && (got = fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, got);
    int status = pipe ? pclose(pipe) : -1;
    exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return out;
}

template <class T>
void put(std::ofstream &f, const T &v) { f.write(reinterpret_cast<const char *>(&v), sizeof v); }
void put_tensor(std::ofstream &f, const Tensor<float> &t) {
    f.write(reinterpret_cast<const char *>(t.data.data()), static_cast<std::streamsize>(t.size() * sizeof(float)));
}

struct Case {
    int64_t T, B, n, m, k;
    bool masks;
};

// Runs one case on OpenCL and returns the max relative error of c and h against the double reference.
double opencl_error(const std::string &schedule, const std::string &pooling, const Case &cs) {
    ModelConfig cfg = layer_config(pooling, {cs.T, cs.B, cs.n, cs.m, cs.k});
    cfg.validate();
    Tensor<float> x = init_input(cfg);
    LayerParams<float> p = init_params(cfg)[0];
    LayerState<float> state = initial_state<float>(cfg).layers[0];
    for (size_t i = 0; i < state.c.size(); i++) state.c.data[i] = 0.5f * std::sin(0.37 * i);  // non-zero c0
    for (size_t i = 0; i < state.history.size(); i++) state.history.data[i] = 0.25f * std::cos(0.11 * i);
    LayerMasks masks;
    int64_t time_offset = cs.masks ? 5 : 0;
    if (cs.masks) masks = {stream_key(3, 2), drop_threshold(0.2), 1.25, stream_key(3, 3), drop_threshold(0.3)};

    std::string in_path = test::scratch_path(schedule + pooling + "_in.bin"), out_path = test::scratch_path(schedule + pooling + "_out.bin");
    {
        std::ofstream f(in_path, std::ios::binary);
        int64_t G = p.weights.dim(0);
        for (int64_t v : {cs.T, cs.B, cs.n, cs.m, cs.k, G, time_offset}) put(f, v);
        put(f, masks.dropout_key);
        put(f, masks.dropout_threshold);
        put(f, static_cast<float>(masks.dropout_scale));
        put(f, masks.zoneout_key);
        put(f, masks.zoneout_threshold);
        for (const Tensor<float> *t : {&x, &state.history, &p.weights, &p.bias, &state.c}) put_tensor(f, *t);
    }
    int code = 0;
    std::string out = run_command(runner_path() + " " + schedule + " " + pooling + " " + in_path + " " + out_path, code);
    EXPECT_EQ(code, 0) << out;
    if (code != 0) return 1e9;
    Tensor<float> c({cs.T, cs.B, cs.m}), h({cs.T, cs.B, cs.m});
    std::ifstream f(out_path, std::ios::binary);
    f.read(reinterpret_cast<char *>(c.data.data()), static_cast<std::streamsize>(c.size() * sizeof(float)));
    f.read(reinterpret_cast<char *>(h.data.data()), static_cast<std::streamsize>(h.size() * sizeof(float)));
    EXPECT_TRUE(f.good()) << "short output from the runner";

    ref::LayerOutput ref = ref::layer_forward(find_pooling(pooling), convert<double>(x), convert<double>(state),
                                              convert<double>(p), masks, time_offset);
    Comparison cmp = compare(h, ref.h);
    cmp.merge(compare(c, ref.c));
    EXPECT_TRUE(cmp.finite);
    return cmp.rel();
}

TEST(GpuOpenCl, RunnerDoesNotLinkLibHalide) {
    int code = 0;
    std::string libs = run_command("ldd " + runner_path(), code);
    ASSERT_EQ(code, 0) << libs;
    EXPECT_EQ(libs.find("libHalide"), std::string::npos) << libs;
    EXPECT_EQ(libs.find("libqrnn"), std::string::npos) << libs;
}

class GpuSchedule : public ::testing::TestWithParam<std::string> {};

TEST_P(GpuSchedule, MatchesReferenceOnAwkwardShapes) {
    const std::string schedule = GetParam();
    // T = 1, B = 1, widths off the thread/tile sizes, k > T, masks with a time offset. The autoscheduled
    // pipeline is compiled per shape (gpu/CMakeLists.txt estimate_shape) and checked on that shape.
    std::vector<Case> cases{{37, 3, 17, 70, 2, true}, {37, 3, 17, 70, 2, false}};
    if (schedule.rfind("cuda-auto-", 0) != 0) cases = {{1, 1, 5, 7, 1, false}, {3, 2, 9, 23, 4, false}, {37, 3, 17, 70, 2, true}};
    for (const char *pooling : {"f", "fo", "ifo"})
        for (const Case &cs : cases)
            EXPECT_LT(opencl_error(schedule, pooling, cs), 1e-4)
                << schedule << " " << pooling << " T=" << cs.T << " B=" << cs.B << " m=" << cs.m << " k=" << cs.k;
}

INSTANTIATE_TEST_SUITE_P(OpenCl, GpuSchedule, ::testing::Values("cuda-tiled", "cuda-fused", "cuda-auto-Li2018"),
                         test::param_name);

TEST(GpuOpenCl, UnknownLayerIsAnError) {
    int code = 0;
    std::string out = run_command(runner_path() + " no-such fo a b", code);
    EXPECT_EQ(code, 2);
    EXPECT_NE(out.find("no AOT layer"), std::string::npos) << out;
}

}  // namespace
}  // namespace qrnn
