#include "nn/optimizer.h"

#include <cmath>

#include "core/error.h"

namespace qrnn::nn {

void SgdOptions::validate() const {
    if (!(lr > 0) || !std::isfinite(lr)) fail("lr must be a positive number, got ", lr);
    if (!(clip_norm >= 0) || !std::isfinite(clip_norm)) fail("clip must be >= 0 (0: off), got ", clip_norm);
    if (!(weight_decay >= 0) || !std::isfinite(weight_decay)) fail("weight_decay must be >= 0, got ", weight_decay);
}

Sgd::Sgd(SgdOptions opts) : opts_(opts) { opts_.validate(); }

SgdStepStats Sgd::step(const std::vector<Param> &params) {
    const float decay = static_cast<float>(opts_.weight_decay);
    double sq = 0;
    for (const auto &p : params) {
        if (p.value->size() != p.grad->size()) fail("parameter '", p.name, "': value and gradient sizes differ");
        auto &g = p.grad->data;
        const auto &v = p.value->data;
        for (size_t i = 0; i < g.size(); i++) {
            if (decay != 0.0f) g[i] += decay * v[i];
            sq += static_cast<double>(g[i]) * g[i];
        }
    }
    SgdStepStats stats;
    stats.grad_norm = std::sqrt(sq);
    if (!std::isfinite(stats.grad_norm)) fail("gradient norm is not finite (", stats.grad_norm, "): training diverged");
    double scale = 1.0;
    if (opts_.clip_norm > 0 && stats.grad_norm > opts_.clip_norm) {
        scale = opts_.clip_norm / stats.grad_norm;
        stats.clipped = true;
    }
    const float step = static_cast<float>(opts_.lr * scale);
    for (const auto &p : params) {
        auto &v = p.value->data;
        const auto &g = p.grad->data;
        for (size_t i = 0; i < v.size(); i++) v[i] -= step * g[i];
    }
    return stats;
}

void PlateauDecay::validate() const {
    if (!(factor >= 1) || !std::isfinite(factor)) fail("lr_decay must be >= 1 (1: off), got ", factor);
    if (patience < 0) fail("lr_patience must be >= 0, got ", patience);
    if (!(min_delta >= 0)) fail("lr_min_delta must be >= 0, got ", min_delta);
}

bool PlateauDecay::observe(double val_loss, Sgd &sgd) {
    if (!started || val_loss < best * (1.0 - min_delta)) {
        started = true;
        best = val_loss;
        bad = 0;
        return false;
    }
    if (++bad <= patience) return false;
    bad = 0;
    if (factor == 1.0) return false;
    sgd.set_lr(sgd.lr() / factor);
    return true;
}

}  // namespace qrnn::nn
