#include "tests/support/precision_case.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "runtime/amd_isa_check.h"
#include "schedules/schedule.h"

namespace qrnn::test {

ModelConfig precision_config(const std::string &precision, const std::string &pooling, int64_t k, const LayerCase &s,
                             const std::string &schedule) {
    ModelConfig c;
    c.pooling = pooling, c.schedule = schedule, c.precision = precision;
    c.window = k, c.seq = s.T, c.batch = s.B, c.input = s.n, c.hidden = s.m;
    return c;
}

double max_abs(const Tensor<double> &a) {
    double worst = 0;
    for (double e : a.data) worst = std::max(worst, std::fabs(e));
    return worst;
}

std::string assembly_of(Halide::Pipeline p, const std::vector<Halide::Argument> &args, const Halide::Target &target,
                        const std::string &name) {
    const std::string path = ::testing::TempDir() + name + "_" + std::to_string(target.has_feature(Halide::Target::AVX512)) + ".s";
    p.compile_to_assembly(path, args, name, target);
    std::ifstream f(path);
    std::stringstream text;
    text << f.rdbuf();
    if (target.has_feature(Halide::Target::AVX512_SapphireRapids)) {
        const std::vector<std::string> lacking = instructions_amd_lacks(text.str());
        EXPECT_TRUE(lacking.empty()) << name << " holds " << lacking.size() << " instructions AMD's Zen 4 and 5 lack (SIGILL there), first "
                                     << (lacking.empty() ? "" : lacking[0]);
    }
    return text.str();
}

size_t count_of(const std::string &text, const std::string &word) {
    size_t n = 0;
    for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) n++;
    return n;
}

std::string layer_assembly(Precision precision, const std::string &target_name) {
    const Halide::Target target(target_name);
    const LayerSchedule &s = find_layer_schedule("tuned");
    LayerInputs in;
    in.precision = precision;
    Halide::Pipeline p = build_layer_pipeline(s, in, find_pooling("fo"), target, merge_knobs(s, {}, target), {});
    return assembly_of(p, in.arguments(), target, std::string(precision_name(precision)) + "_layer");
}

}  // namespace qrnn::test
