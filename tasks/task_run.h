// A task's data and model behind the training loop of tasks/seq_trainer.cpp: the synthetic tasks (reverse, sort,
// classify) there, the text classification task in tasks/text_task.h.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "nn/optimizer.h"
#include "tasks/seq_results.h"

namespace qrnn::lm {

class TaskRun {
public:
    virtual ~TaskRun() = default;
    virtual std::vector<nn::Param> params() = 0;
    virtual void set_stochastic(bool on) = 0;
    // Loss of training batch `index` with the masks of draw `index` (every batch starts at time 0: without a
    // draw of its own each step would repeat the first step's masks); every gradient of it set.
    virtual double train_step(uint64_t index) = 0;
    // Held-out, in batches; ends early when stop() says so after a batch (*evaluated: the sequences evaluated).
    virtual double accuracy(const std::function<bool()> &stop, int64_t *evaluated) = 0;
    virtual std::optional<SeqHeatmap> heatmap() { return std::nullopt; }
    virtual double chance() const = 0;  // the metric of a guess
    // The data part of the header line ("task classify: lengths 5..40, vocab 10"); "" for the trainer's own.
    virtual std::string describe() const { return ""; }
    // After training: final measurements into the results' attributes.
    virtual void finish(SeqResults &) {}
};

}  // namespace qrnn::lm
