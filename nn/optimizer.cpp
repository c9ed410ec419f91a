#include "nn/optimizer.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace qrnn::nn {

void SgdOptions::validate() const {
    if (!(lr > 0) || !std::isfinite(lr)) fail("lr must be a positive number, got ", lr);
    if (!(clip_norm >= 0) || !std::isfinite(clip_norm)) fail("clip must be >= 0 (0: off), got ", clip_norm);
    if (!(weight_decay >= 0) || !std::isfinite(weight_decay)) fail("weight_decay must be >= 0, got ", weight_decay);
}

Sgd::Sgd(SgdOptions opts) : opts_(opts) { opts_.validate(); }

double gradient_norm(const std::vector<Param> &params, double grad_scale) {
    double sq = 0;
    for (const auto &p : params) {
        if (p.value->size() != p.grad->size()) fail("parameter '", p.name, "': value and gradient sizes differ");
        for (const float g : p.grad->data) sq += static_cast<double>(g) * g;
    }
    const double norm = std::sqrt(sq) * std::abs(grad_scale);
    if (!std::isfinite(norm)) fail("gradient norm is not finite (", norm, "): training diverged");
    return norm;
}

double clip_scale(double norm, double clip_norm) { return clip_norm > 0 ? std::min(1.0, clip_norm / (norm + 1e-6)) : 1.0; }

SgdStepStats Sgd::step(const std::vector<Param> &params, double grad_scale) {
    SgdStepStats stats;
    stats.grad_norm = gradient_norm(params, grad_scale);
    const double clip = clip_scale(stats.grad_norm, opts_.clip_norm);
    stats.clipped = clip < 1.0;
    const float lr = static_cast<float>(opts_.lr), scale = static_cast<float>(clip * grad_scale),
                decay = static_cast<float>(opts_.weight_decay);
    for (const auto &p : params) {
        auto &v = p.value->data;
        const auto &g = p.grad->data;
        for (size_t i = 0; i < v.size(); i++) v[i] -= lr * (scale * g[i] + decay * v[i]);
    }
    return stats;
}

void AdamOptions::validate() const {
    if (!(lr > 0) || !std::isfinite(lr)) fail("lr must be a positive number, got ", lr);
    if (!(beta1 >= 0 && beta1 < 1) || !(beta2 >= 0 && beta2 < 1)) fail("Adam betas must be in [0, 1), got ", beta1, ", ", beta2);
    if (!(eps > 0)) fail("Adam eps must be > 0, got ", eps);
    if (!(clip_norm >= 0) || !std::isfinite(clip_norm)) fail("clip must be >= 0 (0: off), got ", clip_norm);
    if (!(weight_decay >= 0) || !std::isfinite(weight_decay)) fail("weight_decay must be >= 0, got ", weight_decay);
}

Adam::Adam(AdamOptions opts) : opts_(opts) { opts_.validate(); }

double Adam::step(const std::vector<Param> &params, double grad_scale) {
    auto &m_ = state_.m, &v_ = state_.v;
    if (m_.empty())
        for (const auto &p : params) m_.emplace_back(p.value->size()), v_.emplace_back(p.value->size());
    if (m_.size() != params.size()) fail("Adam: ", params.size(), " parameters, but its state has ", m_.size());
    const double norm = gradient_norm(params, grad_scale);
    const float scale = static_cast<float>(clip_scale(norm, opts_.clip_norm) * grad_scale);
    const double t = static_cast<double>(++state_.t);
    const float b1 = static_cast<float>(opts_.beta1), b2 = static_cast<float>(opts_.beta2);
    const float step = static_cast<float>(opts_.lr / (1 - std::pow(opts_.beta1, t)));
    const float inv_c2 = static_cast<float>(1 / std::sqrt(1 - std::pow(opts_.beta2, t))), eps = static_cast<float>(opts_.eps);
    const float keep = static_cast<float>(1 - opts_.lr * opts_.weight_decay);
    for (size_t i = 0; i < params.size(); i++) {
        auto &v = params[i].value->data;
        const auto &g = params[i].grad->data;
        auto &m1 = m_[i], &m2 = v_[i];
        if (m1.size() != v.size()) fail("Adam: parameter '", params[i].name, "' changed size");
        for (size_t e = 0; e < v.size(); e++) {
            const float gs = scale * g[e];
            m1[e] = b1 * m1[e] + (1 - b1) * gs;
            m2[e] = b2 * m2[e] + (1 - b2) * gs * gs;
            v[e] = keep * v[e] - step * m1[e] / (std::sqrt(m2[e]) * inv_c2 + eps);
        }
    }
    return norm;
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
