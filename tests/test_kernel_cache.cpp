// The disk cache of compiled kernels (runtime/kernel_cache.h, runtime/kernel.h): a kernel is compiled once and
// loaded by later builds of the same key, gives the JIT's results bit for bit, keys and signatures keep entries
// apart, a foreign key file is a miss, errors inside a loaded kernel throw, the size limit keeps the newest entry,
// a kernel holding instructions AMD's Zen 4/5 lack is stored compiled without them, and a cache turned off, an
// uncacheable build or a build outside the pipeline cache JIT-compile instead.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "runtime/amd_isa_check.h"
#include "runtime/compiled_layer.h"
#include "runtime/kernel.h"
#include "runtime/kernel_cache.h"
#include "schedules/kernel_key.h"

namespace qrnn {
namespace {
namespace fs = std::filesystem;

// out(x) = in(x) * scale + offset (+ extra when with_extra): a small vectorized, parallel pipeline.
struct Scale {
    Halide::ImageParam in{Halide::Float(32), 1, "in"};
    Halide::Param<float> scale{"scale", 1.0f}, extra{"extra", 0.0f};
    Halide::Var x{"x"}, xo{"xo"};
    Halide::Func out{"out"};
    Kernel kernel;
    Scale(float offset, bool with_extra) {
        out(x) = in(x) * scale + offset + (with_extra ? Halide::Expr(extra) : Halide::Expr(0.0f));
        out.split(x, xo, x, 64, Halide::TailStrategy::GuardWithIf).vectorize(x, 8, Halide::TailStrategy::GuardWithIf).parallel(xo);
        kernel = Halide::Pipeline(out);
    }
    std::vector<float> run(std::vector<float> input, int outputs) {
        Halide::Buffer<float> in_buf(input.data(), static_cast<int>(input.size())), out_buf(outputs);
        in.set(in_buf);
        scale.set(2.5f);
        kernel.realize(out_buf);
        return std::vector<float>(out_buf.data(), out_buf.data() + outputs);
    }
};

class KernelCache : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("qrnn_kernel_cache_" + std::to_string(::getpid()) + "_" +
                                            ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        ::setenv("QRNN_CACHE_DIR", dir_.c_str(), 1);
    }
    void TearDown() override {
        if (!std::getenv("KEEP")) fs::remove_all(dir_);
        ::unsetenv("QRNN_CACHE_MAX_MB");
    }
    // Compiles s under build key `key` ("" = outside any build).
    static void compile(Scale &s, const std::string &key) {
        if (key.empty()) return compile_kernels({&s.kernel}, Halide::get_jit_target_from_environment());
        KernelBuildScope scope(key);
        compile_kernels({&s.kernel}, Halide::get_jit_target_from_environment());
    }
    size_t entries() const { return kernel_cache_entries(dir_.string()).size(); }
    fs::path dir_;
};

// The inode of a file: a new one when the file was written again (renamed over) rather than left in place.
ino_t inode(const std::string &path) {
    struct stat st {};
    EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
    return st.st_ino;
}

std::vector<float> ramp(int n) {
    std::vector<float> v(n);
    for (int i = 0; i < n; i++) v[i] = 0.37f * i - 3.0f;
    return v;
}

TEST_F(KernelCache, CompilesOnceThenLoadsTheEntry) {
    Scale first(1.0f, false);
    compile(first, "test|scale|1");
    ASSERT_TRUE(first.kernel.from_disk_cache());
    ASSERT_EQ(entries(), 1u);
    const ino_t before = inode(kernel_cache_entries(dir_.string())[0].path);
    Scale second(1.0f, false);
    compile(second, "test|scale|1");
    EXPECT_TRUE(second.kernel.from_disk_cache());
    EXPECT_EQ(entries(), 1u);
    EXPECT_EQ(inode(kernel_cache_entries(dir_.string())[0].path), before) << "the entry was written again instead of loaded";
    EXPECT_EQ(first.run(ramp(300), 300), second.run(ramp(300), 300));
}

// A kernel compiled for avx512_sapphirerapids that holds an instruction AMD's Zen 4/5 lack (runtime/amd_isa_check.h:
// here a gather of 16-bit lanes, which LLVM starts with vmovw) is stored compiled without the feature, and gives the
// same values (run where the host has AVX-512).
TEST_F(KernelCache, AKernelWithInstructionsAmdLacksIsStoredWithoutTheDotProduct) {
    Halide::ImageParam in(Halide::UInt(16), 1, "in");
    Halide::Var x("x");
    Halide::Func out("gathered");
    out(x) = in((x * 7) % in.dim(0).extent());
    out.vectorize(x, 16, Halide::TailStrategy::GuardWithIf);
    const Halide::Target dot("x86-64-linux-avx-avx2-avx512-avx512_cannonlake-avx512_sapphirerapids-avx512_skylake-f16c-fma-sse41");
    const std::string object = (fs::temp_directory_path() / ("qrnn_gather_" + std::to_string(::getpid()) + ".o")).string();
    Halide::Pipeline(out).compile_to_object(object, {in}, "gathered", dot);
    const std::string direct = first_instruction_amd_lacks(object);
    fs::remove(object);
    ASSERT_EQ(direct, "vmovw") << "the case no longer holds vmovw (or objdump is missing)";
    Kernel kernel{Halide::Pipeline(out)};
    {
        KernelBuildScope scope("test|gather|1");
        compile_kernels({&kernel}, dot);
    }
    ASSERT_TRUE(kernel.from_disk_cache());
    EXPECT_EQ(first_instruction_amd_lacks(kernel_cache_entries(dir_.string())[0].path), "");
    if (!Halide::get_host_target().has_feature(Halide::Target::AVX512_Skylake)) return;
    std::vector<uint16_t> values(37);
    for (size_t i = 0; i < values.size(); i++) values[i] = static_cast<uint16_t>(1000 + i);
    Halide::Buffer<uint16_t> in_buf(values.data(), 37), out_buf(50);
    in.set(in_buf);
    kernel.realize(out_buf);
    for (int i = 0; i < 50; i++) EXPECT_EQ(out_buf(i), values[(i * 7) % 37]) << i;
}

TEST_F(KernelCache, GivesTheJitResultsBitForBit) {
    Scale cached(0.5f, false), jit(0.5f, false);
    compile(cached, "test|scale|0.5");
    compile(jit, "");
    ASSERT_TRUE(cached.kernel.from_disk_cache());
    ASSERT_FALSE(jit.kernel.from_disk_cache());
    for (int n : {1, 7, 64, 1000}) EXPECT_EQ(cached.run(ramp(n), n), jit.run(ramp(n), n)) << "n = " << n;
    EXPECT_FLOAT_EQ(cached.run(ramp(3), 3)[2], (0.37f * 2 - 3.0f) * 2.5f + 0.5f);
}

TEST_F(KernelCache, KeysAndSignaturesKeepEntriesApart) {
    Scale a(1.0f, false), b(2.0f, false), c(1.0f, true);
    compile(a, "test|scale|a");
    compile(b, "test|scale|b");
    compile(c, "test|scale|a");  // same build key, one more argument: its own entry
    EXPECT_EQ(entries(), 3u);
    EXPECT_NE(a.run(ramp(9), 9), b.run(ramp(9), 9));
    EXPECT_EQ(a.run(ramp(9), 9), c.run(ramp(9), 9));  // extra = 0
}

TEST_F(KernelCache, AForeignKeyFileIsAMiss) {
    Scale a(1.0f, false);
    compile(a, "test|scale|a");
    const fs::path so = kernel_cache_entries(dir_.string()).at(0).path, key_file = fs::path(so).replace_extension(".key");
    const std::string key = kernel_cache_entries(dir_.string()).at(0).key;
    std::ofstream(key_file) << "another key";
    const ino_t before = inode(so);
    Scale b(1.0f, false);
    compile(b, "test|scale|a");  // not found: compiled and stored again, with its own key file
    ASSERT_TRUE(b.kernel.from_disk_cache());
    EXPECT_NE(inode(so), before);
    EXPECT_EQ(kernel_cache_entries(dir_.string()).at(0).key, key);
    EXPECT_FLOAT_EQ(b.run({0.0f}, 1)[0], 1.0f);
}

TEST_F(KernelCache, AnErrorInsideALoadedKernelThrows) {
    Scale a(1.0f, false);
    compile(a, "test|scale|a");
    ASSERT_TRUE(a.kernel.from_disk_cache());
    try {
        a.run(ramp(4), 8);  // reads in(7) of a 4-element input
        FAIL() << "no error";
    } catch (const Halide::RuntimeError &e) {
        EXPECT_NE(std::string(e.what()).find("in"), std::string::npos) << e.what();
    }
    EXPECT_EQ(a.run(ramp(4), 4).size(), 4u);  // usable afterwards
}

TEST_F(KernelCache, TheLimitKeepsTheNewestEntry) {
    ::setenv("QRNN_CACHE_MAX_MB", "0", 1);
    Scale a(1.0f, false), b(2.0f, false);
    compile(a, "test|scale|a");
    compile(b, "test|scale|b");
    ASSERT_EQ(entries(), 1u);
    EXPECT_NE(kernel_cache_entries(dir_.string())[0].key.find("test|scale|b"), std::string::npos);
    EXPECT_FLOAT_EQ(a.run({0.0f}, 1)[0], 1.0f);  // a removed entry stays usable where loaded
    ::setenv("QRNN_CACHE_MAX_MB", "lots", 1);
    EXPECT_THROW(kernel_cache_limit_bytes(), Error);
}

TEST_F(KernelCache, OffUncacheableOrOutsideABuildMeansJit) {
    Scale outside(1.0f, false), uncacheable(1.0f, false), off(1.0f, false);
    compile(outside, "");
    {
        KernelBuildScope scope("test|scale|uncacheable");
        mark_build_uncacheable();
        compile_kernels({&uncacheable.kernel}, Halide::get_jit_target_from_environment());
    }
    ::setenv("QRNN_CACHE_DIR", "off", 1);
    compile(off, "test|scale|off");
    for (Scale *s : {&outside, &uncacheable, &off}) {
        EXPECT_FALSE(s->kernel.from_disk_cache());
        EXPECT_FLOAT_EQ(s->run({2.0f}, 1)[0], 6.0f);
    }
    ::setenv("QRNN_CACHE_DIR", dir_.c_str(), 1);
    EXPECT_EQ(entries(), 0u);
}

TEST_F(KernelCache, TheComponentsCacheTheirPipelines) {
    compiled_layer(find_pooling("ifo"), "tuned", {{"tile_t", 3}});
    const auto found = kernel_cache_entries(dir_.string());
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].key.rfind("CompiledLayer|ifo|tuned|", 0), 0u) << found[0].key;
    EXPECT_NE(found[0].key.find("tile_t=3"), std::string::npos) << found[0].key;
    EXPECT_EQ(fs::path(builtin_kernel_dir()).filename(), "qrnn-kernels");
}

}  // namespace
}  // namespace qrnn
