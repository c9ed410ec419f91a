#include "nn/adam.h"

#include <cmath>

#include "core/error.h"

namespace qrnn::nn {

void AdamOptions::validate() const {
    if (!(lr > 0) || !std::isfinite(lr)) fail("lr must be a positive number, got ", lr);
    if (!(beta1 >= 0 && beta1 < 1) || !(beta2 >= 0 && beta2 < 1)) fail("Adam betas must be in [0, 1), got ", beta1, ", ", beta2);
    if (!(eps > 0)) fail("Adam eps must be > 0, got ", eps);
    if (!(clip_norm >= 0) || !std::isfinite(clip_norm)) fail("clip must be >= 0 (0: off), got ", clip_norm);
}

Adam::Adam(AdamOptions opts) : opts_(opts) { opts_.validate(); }

double Adam::step(const std::vector<Param> &params) {
    if (m_.empty())
        for (const auto &p : params) m_.emplace_back(p.value->size()), v_.emplace_back(p.value->size());
    if (m_.size() != params.size()) fail("Adam: ", params.size(), " parameters, but its state has ", m_.size());
    double sq = 0;
    for (const auto &p : params) {
        if (p.value->size() != p.grad->size()) fail("parameter '", p.name, "': value and gradient sizes differ");
        for (float g : p.grad->data) sq += static_cast<double>(g) * g;
    }
    const double norm = std::sqrt(sq);
    if (!std::isfinite(norm)) fail("gradient norm is not finite (", norm, "): training diverged");
    const double scale = opts_.clip_norm > 0 && norm > opts_.clip_norm ? opts_.clip_norm / norm : 1.0;
    t_++;
    const double c1 = 1 - std::pow(opts_.beta1, static_cast<double>(t_)), c2 = 1 - std::pow(opts_.beta2, static_cast<double>(t_));
    const float b1 = static_cast<float>(opts_.beta1), b2 = static_cast<float>(opts_.beta2);
    const float step = static_cast<float>(opts_.lr * std::sqrt(c2) / c1), eps = static_cast<float>(opts_.eps);
    for (size_t i = 0; i < params.size(); i++) {
        auto &v = params[i].value->data;
        const auto &g = params[i].grad->data;
        auto &m1 = m_[i], &m2 = v_[i];
        if (m1.size() != v.size()) fail("Adam: parameter '", params[i].name, "' changed size");
        for (size_t e = 0; e < v.size(); e++) {
            const float gs = static_cast<float>(g[e] * scale);
            m1[e] = b1 * m1[e] + (1 - b1) * gs;
            m2[e] = b2 * m2[e] + (1 - b2) * gs * gs;
            v[e] -= step * m1[e] / (std::sqrt(m2[e]) + eps);
        }
    }
    return norm;
}

}  // namespace qrnn::nn
