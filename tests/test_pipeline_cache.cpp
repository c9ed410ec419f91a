// The one cache of compiled pipelines (runtime/pipeline_cache.h): a key is built once and shared, keys of
// different types are apart, a failed build leaves no entry, the components' pipelines live in it, and an inference
// stack compiles no training pipeline.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "nn/stack.h"
#include "runtime/compiled_layer.h"
#include "runtime/params.h"
#include "runtime/pipeline_cache.h"

namespace qrnn {
namespace {

struct Built {
    int id;
};
struct OtherBuilt {
    int id;
};

TEST(PipelineCache, BuildsAKeyOnceAndSharesIt) {
    PipelineCache cache;
    int builds = 0;
    auto build = [&] { return std::make_shared<Built>(Built{++builds}); };
    const auto a = cache.get<Built>("k", build), b = cache.get<Built>("k", build), c = cache.get<Built>("other", build);
    EXPECT_EQ(a, b);
    EXPECT_NE(a, c);
    EXPECT_EQ(builds, 2);
    EXPECT_EQ(cache.keys().size(), 2u);
}

TEST(PipelineCache, TypesWithTheSameKeyAreApart) {
    PipelineCache cache;
    const auto a = cache.get<Built>("k", [] { return std::make_shared<Built>(Built{1}); });
    const auto b = cache.get<OtherBuilt>("k", [] { return std::make_shared<OtherBuilt>(OtherBuilt{2}); });
    EXPECT_EQ(a->id, 1);
    EXPECT_EQ(b->id, 2);
}

TEST(PipelineCache, AFailedBuildLeavesNoEntry) {
    PipelineCache cache;
    EXPECT_THROW(cache.get<Built>("k", []() -> std::shared_ptr<Built> { throw std::runtime_error("compile error"); }),
                 std::runtime_error);
    EXPECT_TRUE(cache.keys().empty());
    EXPECT_EQ(cache.get<Built>("k", [] { return std::make_shared<Built>(Built{7}); })->id, 7);
}

TEST(PipelineCache, ConcurrentCallersOfOneKeyShareOneBuild) {
    PipelineCache cache;
    std::atomic<int> builds{0};
    auto build = [&] {
        builds++;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        return std::make_shared<Built>(Built{builds.load()});
    };
    std::shared_ptr<Built> a, b;
    std::thread first([&] { a = cache.get<Built>("k", build); }), second([&] { b = cache.get<Built>("k", build); });
    first.join();
    second.join();
    EXPECT_EQ(builds.load(), 1);
    EXPECT_EQ(a, b);
}

TEST(PipelineCache, HoldsTheCompiledLayers) {
    const auto a = compiled_layer(find_pooling("fo"), "tuned"), b = compiled_layer(find_pooling("fo"), "tuned");
    EXPECT_EQ(a, b);
    const std::vector<std::string> keys = pipeline_cache().keys();
    EXPECT_TRUE(std::any_of(keys.begin(), keys.end(), [](const std::string &k) { return k.find("|fo|tuned|") != std::string::npos; }))
        << "no compiled layer among " << keys.size() << " keys";
}

size_t training_pipelines() {
    const std::vector<std::string> keys = pipeline_cache().keys();
    return static_cast<size_t>(std::count_if(keys.begin(), keys.end(), [](const std::string &k) {
        return k.find("CompiledTrainingLayer") != std::string::npos;
    }));
}

// Inference is a forward without a tape of the same layers: it compiles the layer's pipeline, not the training ones.
TEST(PipelineCache, AnInferenceStackCompilesNoTrainingPipeline) {
    ModelConfig cfg;
    cfg.pooling = "ifo", cfg.window = 3, cfg.seq = 4, cfg.batch = 2, cfg.input = 5, cfg.hidden = 7, cfg.layers = 2;
    const size_t before = training_pipelines();
    nn::LayerStack stack(cfg);
    std::vector<nn::State> states = stack.initial_state(cfg.batch);
    stack.forward(init_input(cfg), states, nullptr);
    EXPECT_EQ(training_pipelines(), before);
    stack.prepare_training();
    EXPECT_GT(training_pipelines(), before);
}

}  // namespace
}  // namespace qrnn
