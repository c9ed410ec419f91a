#include "schedules/training_schedule.h"

#include <algorithm>

#include "core/named_registry.h"

namespace qrnn {
namespace {
NamedRegistry<TrainingSchedule> &training_schedules() {
    static NamedRegistry<TrainingSchedule> schedules("training schedule", "training schedule");
    return schedules;
}
}  // namespace

void register_training_schedule(TrainingSchedule s) {
    if (s.name.empty() || !s.apply_forward || !s.apply_backward)
        fail("training schedule needs a name, apply_forward and apply_backward");
    check_schedule_record(s, "training schedule");
    std::string name = s.name;
    training_schedules().add(name, std::move(s));
}

const TrainingSchedule &find_training_schedule(const std::string &name) {
    std::vector<std::string> names = training_schedule_names();
    if (std::find(names.begin(), names.end(), name) == names.end()) {
        std::string have;
        for (auto &n : names) have += (have.empty() ? "" : ", ") + n;
        fail("schedule '", name, "' has no training (backward) schedule (have: ", have, ")");
    }
    return training_schedules().find(name);
}

std::vector<std::string> training_schedule_names() { return training_schedules().names(); }

Halide::Pipeline build_training_forward(const TrainingSchedule &schedule, const LayerInputs &in,
                                        const PoolingVariant &variant, const Halide::Target &target, const Knobs &knobs) {
    variant.require_backward();
    // The tape is padded to the forward's GEMM tiles: their h tile lets the conv read the weights in place.
    LayerFuncs L = define_qrnn_layer(in, variant, schedule.tape_padding ? schedule.tape_padding(target, knobs).h : 0);
    schedule.apply_forward(L, in, target, knobs);
    return Halide::Pipeline(L.outputs(true));
}

// The encoder-decoder's dbatch_bias (a sum over t of dpre, which every schedule computes at root), the same
// for every schedule of a family: vectorised over h on CPUs, one thread per (h, b) on GPUs.
static void schedule_batch_bias_grad(BackwardFuncs &D, const Halide::Target &target) {
    using Halide::TailStrategy;
    Halide::Var ho("ho"), hi("hi"), bo("bo"), bi("bi");
    Halide::Func f = D.dbatch_bias;
    if (target.has_gpu_feature()) {
        f.gpu_tile(D.h, D.b, ho, bo, hi, bi, 32, 1, TailStrategy::GuardWithIf);
        f.update().gpu_tile(D.h, D.b, ho, bo, hi, bi, 32, 1, TailStrategy::GuardWithIf);
        return;
    }
    const int vec = target.natural_vector_size<float>();
    f.vectorize(D.h, vec, TailStrategy::GuardWithIf).parallel(D.g);
    f.update().reorder(D.h, D.dbatch_bias_r.x, D.b, D.g).vectorize(D.h, vec, TailStrategy::GuardWithIf).parallel(D.g);
}

Halide::Pipeline build_training_backward(const TrainingSchedule &schedule, const BackwardInputs &in,
                                         const PoolingVariant &variant, const Halide::Target &target, const Knobs &knobs) {
    BackwardFuncs D = define_qrnn_backward(in, variant, schedule.backward_panels ? schedule.backward_panels(target, knobs) : BackwardPanels{});
    schedule.apply_backward(D, in, target, knobs);
    if (D.with_batch_bias) schedule_batch_bias_grad(D, target);
    return Halide::Pipeline(D.outputs());
}

}  // namespace qrnn
