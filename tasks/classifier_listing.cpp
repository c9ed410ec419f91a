// `qrnn plugins` kind "classifier": the sequence classifier of tasks classify and classify-text with pQRNN's
// projection front (tasks/seq_classifier.h), listed with the fronts, pools and stack models it takes, its passes
// and its precision, each read from the code that accepts it (the pools: those qrnn train's key takes, and apart
// those the classifier has that the key does not take).
#include "core/error.h"
#include "lm/train_config.h"
#include "nn/layer.h"
#include "plugins/model.h"
#include "plugins/registry.h"
#include "tasks/classifier_front.h"
#include "tasks/sequence_pooling.h"

namespace qrnn::lm {
namespace {

std::string join_names(const std::vector<std::string> &names) {
    std::string out;
    for (const std::string &n : names) out += (out.empty() ? "" : ",") + n;
    return out;
}

// The models a classifier stacks: every registered model with a layer (or stack) factory (validate_seq_task).
std::string classifier_models() {
    std::vector<std::string> names;
    for (const std::string &name : model_names())
        if (nn::has_layer_factory(name)) names.push_back(name);
    return join_names(names);
}

// The pools qrnn train's key `pool` takes, then those it does not yet ("attention: library only ...").
std::string classifier_pool_text() {
    const lm::TrainKey *key = lm::find_train_key("pool");
    std::vector<std::string> taken, library_only;
    for (const std::string &pool : classifier_pools()) {
        TrainConfig probe;
        bool takes = key != nullptr;
        try {
            if (takes) key->set(probe, pool);
        } catch (const Error &) {
            takes = false;
        }
        (takes ? taken : library_only).push_back(pool);
    }
    std::string text = join_names(taken);
    if (!library_only.empty()) text += " (" + join_names(library_only) + ": library only, not a value of qrnn train's pool)";
    return text;
}

std::vector<PluginListing> list_classifiers() {
    PluginListing p;
    p.kind = "classifier", p.name = "pqrnn", p.targets = "cpu", p.status = "available", p.source = "built-in";
    p.description = "pQRNN (Kaliamoorthi et al. 2020): each token's hashed ternary features (no table) -> dense ReLU "
                    "bottleneck -> stack -> pooling over real steps -> softmax; qrnn train --task classify-text --front "
                    "projection (docs/text_tasks.md); distillation from a classify-text checkpoint: --teacher; int8: docs/int8.md";
    p.options = "front,pool,projection_features,projection_seed,emb,hidden,layers,model,teacher,distill_weight,distill_temperature,distill_mix";
    p.supports = "passes=inference+training precision=f32,bf16(the stack: qrnn train --precision bf16),int8(inference: qrnn eval --precision int8, qrnn-bidir/-varlen stacks) fronts=" + join_names(classifier_fronts()) + " pools=" +
                 classifier_pool_text() + " tasks=classify,classify-text models=" + classifier_models();
    return {p};
}

const bool classifier_kind_registered = (register_plugin_kind("classifier", list_classifiers), true);

}  // namespace
}  // namespace qrnn::lm
