#include "tasks/distillation.h"

#include <algorithm>
#include <cmath>

#include "core/comma_list.h"
#include "core/error.h"

namespace qrnn::lm {

namespace {
// log softmax(z / tau), stabilised by the largest value.
std::vector<double> tempered_log_softmax(const double *z, int64_t classes, double tau) {
    std::vector<double> l(static_cast<size_t>(classes));
    const double top = *std::max_element(z, z + classes);
    double sum = 0;
    for (int64_t c = 0; c < classes; c++) sum += std::exp(l[c] = (z[c] - top) / tau);
    for (double &v : l) v -= std::log(sum);
    return l;
}
}  // namespace

std::vector<std::string> teacher_checkpoints(const std::string &teacher) {
    try {
        return split_comma_list(teacher, "checkpoint name");
    } catch (const Error &e) {
        fail("key 'teacher': value '", teacher, "': ", e.what());
    }
}

std::vector<double> mean_logits(const std::vector<std::vector<double>> &teachers) {
    std::vector<double> mean(teachers.at(0).size(), 0.0);
    for (const std::vector<double> &t : teachers) {
        if (t.size() != mean.size()) fail("distillation: teachers' logits of ", t.size(), " and ", mean.size(), " values");
        for (size_t i = 0; i < t.size(); i++) mean[i] += t[i];
    }
    for (double &v : mean) v /= static_cast<double>(teachers.size());
    return mean;
}

std::vector<double> tempered_softmax(const double *z, int64_t classes, double tau) {
    std::vector<double> p = tempered_log_softmax(z, classes, tau);
    for (double &v : p) v = std::exp(v);
    return p;
}

double distillation_loss(const std::vector<double> &logits, const std::vector<double> &teacher,
                         const std::vector<int32_t> &labels, int64_t classes, const Distillation &d,
                         std::vector<double> *dlogits) {
    const int64_t B = static_cast<int64_t>(labels.size()), C = classes;
    if (static_cast<int64_t>(logits.size()) != B * C || static_cast<int64_t>(teacher.size()) != B * C)
        fail("distillation: logits of ", logits.size(), " and teacher of ", teacher.size(), " values for ", B, " x ", C);
    if (!(d.weight >= 0 && d.weight <= 1) || !(d.temperature > 0))
        fail("distillation: weight ", d.weight, " (must be in [0, 1]), temperature ", d.temperature, " (must be > 0)");
    const double w = d.weight, tau = d.temperature;
    if (dlogits) dlogits->assign(logits.size(), 0.0);
    double sum = 0;
    for (int64_t b = 0; b < B; b++) {
        const double *z = &logits[b * C], *t = &teacher[b * C];
        if (labels[b] < 0 || labels[b] >= C) fail("distillation: label ", labels[b], " outside [0, ", C, ")");
        const std::vector<double> lp = tempered_log_softmax(z, C, 1.0), lps = tempered_log_softmax(z, C, tau),
                                  lq = tempered_log_softmax(t, C, tau);
        double kl = 0;
        for (int64_t c = 0; c < C; c++) kl += std::exp(lq[c]) * (lq[c] - lps[c]);
        sum += (1 - w) * -lp[labels[b]] + w * tau * tau * kl;
        if (!dlogits) continue;
        for (int64_t c = 0; c < C; c++)
            (*dlogits)[b * C + c] = (1 - w) * (std::exp(lp[c]) - (c == labels[b] ? 1.0 : 0.0)) + w * tau * (std::exp(lps[c]) - std::exp(lq[c]));
    }
    return sum;
}

}  // namespace qrnn::lm
