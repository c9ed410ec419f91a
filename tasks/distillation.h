// Knowledge distillation for the sequence classifier (`qrnn train --task classify-text --teacher CKPT[,CKPT...]`,
// docs/text_tasks.md), as the pQRNN paper trains its small model from a large one (Hinton et al. 2015): the
// student's loss per example is
//     (1 - w) CE(softmax(z), y) + w tau^2 KL(softmax(t / tau) || softmax(z / tau))
// with z the student's logits, t the teacher's (of several teachers, an ensemble: the mean of their logits), y the label, w the distillation weight and tau the temperature
// (tau^2 keeps the soft term's gradient on the scale of the hard one's). Its gradient in z is
//     (1 - w) (softmax(z) - onehot(y)) + w tau (softmax(z / tau) - softmax(t / tau)).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace qrnn::lm {

struct Distillation {
    double weight = 0.5;       // w in [0, 1]: 0 is plain cross-entropy, 1 the teacher's soft targets only
    double temperature = 2.0;  // tau > 0
};

// The loss summed over the B = labels.size() examples; logits and teacher [B][C] row-major. With dlogits: the
// gradient of the sum in the logits ([B][C], overwritten). Computed in double, log-sum-exp stabilised.
double distillation_loss(const std::vector<double> &logits, const std::vector<double> &teacher,
                         const std::vector<int32_t> &labels, int64_t classes, const Distillation &d,
                         std::vector<double> *dlogits = nullptr);

// The checkpoints of the key 'teacher': one, or a comma-separated list (an ensemble). Throws qrnn::Error on an empty
// entry.
std::vector<std::string> teacher_checkpoints(const std::string &teacher);

// The ensemble's logits: the element-wise mean of the teachers' (each [B][C] row-major, all of one size).
std::vector<double> mean_logits(const std::vector<std::vector<double>> &teachers);

// softmax(z / tau) of one row of `classes` values.
std::vector<double> tempered_softmax(const double *z, int64_t classes, double tau);

}  // namespace qrnn::lm
