// The CNN layer's backward: dpre = dy (1 - y^2) (tanh'), then the QRNN backward's GEMMs with one gate
// (core/qrnn_backward.h: define_backward_gemms; the CNN's input is the QRNN's with zeros before the sequence and
// no dropout) under the "tuned" training schedule's GEMM schedule (schedules/cpu_backward.h).
#include "plugins/cnn_backward.h"

#include <memory>
#include <mutex>

#include "core/qrnn_backward.h"
#include "plugins/cnn.h"
#include "plugins/halide_gemms.h"
#include "runtime/compiled_layer.h"
#include "runtime/kernel.h"
#include "schedules/cpu_backward.h"
#include "schedules/training_schedule.h"

namespace qrnn {
namespace {
using namespace Halide;

// The "tuned" training schedule's knobs for the target.
Knobs cpu_knobs(const Target &target) { return merge_knobs(find_training_schedule("tuned"), {}, target); }

struct CnnBackwardFuncs {
    BackwardInputs in;  // in.fwd.x (c, b, t) and in.fwd.weights (h, c, j, g = 0) read; dropout off
    ImageParam y{Float(32), 3, "y"}, dy{Float(32), 3, "dy"};  // (h, b, t)
    Func dpre{"cnn_dpre"};                                     // (h, b, t, g = 0), 0 outside t in [0, T) and h >= m
    BackwardFuncs D;

    CnnBackwardFuncs(const Target &target, Precision precision) {
        in.fwd.precision = D.fwd.precision = precision;
        const ImageParam &x = in.fwd.x, &w = in.fwd.weights;
        D.n = x.dim(0).extent(), D.B = x.dim(1).extent(), D.T = x.dim(2).extent();
        D.m = w.dim(0).extent(), D.k = w.dim(2).extent(), D.G = 1;
        define_cnn_input_padded(D.fwd, x);
        // Tiles overrun h and b (what they compute there is discarded); likely(): dense loads in the steady state.
        Var h = D.h, b = D.b, t = D.t, g = D.g;
        Expr hc = min(likely(h), D.m - 1), bc = min(likely(b), D.B - 1), tc = clamp(t, 0, D.T - 1);
        Expr y_at = y(hc, bc, tc);
        dpre(h, b, t, g) = select(t >= 0 && t < D.T && h < D.m, dy(hc, bc, tc) * (1.0f - y_at * y_at), 0.0f);
        define_backward_gemms(D, in, dpre, target.has_gpu_feature() ? BackwardPanels{} : cpu_backward_panels(target, cpu_knobs(target)));
    }
};

// dpre and the GEMMs as the "tuned" training schedule's.
void schedule_cpu(CnnBackwardFuncs &F, const Target &target) {
    schedule_cpu_dpre(F.D, F.dpre, target);
    schedule_cpu_backward_gemms(F.D, F.in, target, cpu_knobs(target));
}

struct CompiledCnnBackward {
    Target target = get_jit_target_from_environment();
    CnnBackwardFuncs funcs;
    Kernel pipeline;
    std::mutex mutex;
    explicit CompiledCnnBackward(Precision precision) : funcs(target, precision) {
        schedule_cpu(funcs, target);
        pipeline = Pipeline({funcs.D.dweights, funcs.D.dbias, funcs.D.dx});
        compile_kernels({&pipeline}, target);
    }
};

Halide::Buffer<float> view_of(const Tensor<float> &t) { return view(const_cast<Tensor<float> &>(t)); }

}  // namespace

void cnn_layer_backward(const Tensor<float> &x, const Tensor<float> &weights, const Tensor<float> &y,
                        const Tensor<float> &dy, Tensor<float> &dweights, Tensor<float> &dbias, Tensor<float> &dx,
                        Precision precision) {
    // One pipeline per precision, each compiled at its first use.
    CompiledCnnBackward &compiled = environment_variant<CompiledCnnBackward, 2>(
        precision == Precision::bf16, std::string("|") + precision_name(precision),
        [&] { return std::make_shared<CompiledCnnBackward>(precision); });
    std::lock_guard<std::mutex> lock(compiled.mutex);
    ensure_shape(dweights, weights.shape);
    ensure_shape(dbias, {1, weights.dim(3)});
    ensure_shape(dx, x.shape);
    CnnBackwardFuncs &f = compiled.funcs;
    f.in.fwd.x.set(view_of(x));
    f.in.fwd.weights.set(view_of(weights));
    f.y.set(view_of(y));
    f.dy.set(view_of(dy));
    std::vector<Buffer<>> outputs{view(dweights), view(dbias), view(dx)};
    compiled.pipeline.realize(Realization(outputs));
}

}  // namespace qrnn
