#include "tasks/bag_of_words.h"

#include <algorithm>
#include <numeric>

#include "core/error.h"
#include "core/hash_rng.h"

namespace qrnn::lm {

std::vector<BagOfWordsExample> bag_of_words_examples(const TextClassificationData &data, const TextVocabulary &vocab) {
    std::vector<BagOfWordsExample> out;
    for (const auto &e : data.examples) {
        BagOfWordsExample b{{}, e.label};
        for (const auto &w : e.tokens) b.features.push_back(vocab.id(w) - 1);
        std::sort(b.features.begin(), b.features.end());
        b.features.erase(std::unique(b.features.begin(), b.features.end()), b.features.end());
        out.push_back(std::move(b));
    }
    return out;
}

BagOfWords::BagOfWords(int64_t features, int64_t classes)
    : features_(features), classes_(classes), values_(static_cast<size_t>(features * classes + classes), 0.0) {
    if (features < 1 || classes < 2)
        fail("bag of words: needs >= 1 feature and >= 2 classes (got ", features, ", ", classes, ")");
}

std::vector<double> BagOfWords::logits(const BagOfWordsExample &example) const {
    std::vector<double> z(values_.end() - classes_, values_.end());  // the biases
    for (int64_t c = 0; c < classes_; c++)
        for (int32_t f : example.features) z[c] += values_[c * features_ + f];
    return z;
}

double BagOfWords::loss(const BagOfWordsExample *first, int64_t count, double l2, std::vector<double> *gradient) const {
    if (gradient) gradient->assign(values_.size(), 0.0);
    double total = 0;
    for (const BagOfWordsExample *e = first; e != first + count; e++) {
        std::vector<double> z = logits(*e);
        const double top = *std::max_element(z.begin(), z.end()), margin = z[e->label] - top;
        double sum = 0;
        for (double &v : z) sum += (v = std::exp(v - top));
        total += std::log(sum) - margin;  // -log softmax, finite however far the label's logit is below the top
        if (!gradient) continue;
        for (int64_t c = 0; c < classes_; c++) {
            const double dz = (z[c] / sum - (c == e->label)) / static_cast<double>(count);
            for (int32_t f : e->features) (*gradient)[c * features_ + f] += dz;
            (*gradient)[features_ * classes_ + c] += dz;
        }
    }
    double penalty = 0;
    for (int64_t i = 0; i < features_ * classes_; i++) {
        penalty += values_[i] * values_[i];
        if (gradient) (*gradient)[i] += l2 * values_[i];
    }
    return total / static_cast<double>(count) + 0.5 * l2 * penalty;
}

int32_t BagOfWords::predict(const BagOfWordsExample &example) const {
    const std::vector<double> z = logits(example);
    return static_cast<int32_t>(std::max_element(z.begin(), z.end()) - z.begin());
}

double BagOfWords::accuracy(const std::vector<BagOfWordsExample> &examples) const {
    if (examples.empty()) return NAN;
    int64_t right = 0;
    for (const auto &e : examples) right += predict(e) == e.label;
    return static_cast<double>(right) / static_cast<double>(examples.size());
}

namespace {

void validate_bag_of_words_config(const BagOfWordsConfig &c) {
    if (c.min_count < 1 || c.epochs < 1 || c.batch < 1)
        fail("bag of words: min_count, epochs and batch must be >= 1 (got ", c.min_count, ", ", c.epochs, ", ", c.batch, ")");
    if (!(c.learning_rate > 0) || !(c.l2 >= 0))
        fail("bag of words: learning rate must be > 0 and l2 >= 0 (got ", c.learning_rate, ", ", c.l2, ")");
}

// A Fisher-Yates shuffle_bag_of_words_examples drawn from (seed, epoch): the same order on every machine.
void shuffle_bag_of_words_examples(std::vector<BagOfWordsExample> &examples, uint32_t seed, uint32_t epoch) {
    const uint32_t key = stream_key(seed, epoch);
    for (size_t i = examples.size(); i > 1; i--)
        std::swap(examples[i - 1], examples[hash_at<uint32_t>(key, static_cast<uint32_t>(i), 0, 0) % i]);
}

struct BagOfWordsAdam {
    explicit BagOfWordsAdam(double learning_rate) : lr(learning_rate) {}
    double lr, beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
    std::vector<double> m, v;
    int64_t step = 0;
    void update(std::vector<double> &values, const std::vector<double> &gradient) {
        if (m.empty()) m.assign(values.size(), 0.0), v.assign(values.size(), 0.0);
        step++;
        const double c1 = 1 - std::pow(beta1, static_cast<double>(step)), c2 = 1 - std::pow(beta2, static_cast<double>(step));
        for (size_t i = 0; i < values.size(); i++) {
            m[i] = beta1 * m[i] + (1 - beta1) * gradient[i];
            v[i] = beta2 * v[i] + (1 - beta2) * gradient[i] * gradient[i];
            values[i] -= lr * (m[i] / c1) / (std::sqrt(v[i] / c2) + eps);
        }
    }
};

// One pass over the shuffled examples in minibatches; the mean of the batches' losses.
double train_bag_of_words_epoch(BagOfWords &model, BagOfWordsAdam &adam, std::vector<BagOfWordsExample> &examples,
                                const BagOfWordsConfig &c, uint32_t epoch) {
    shuffle_bag_of_words_examples(examples, c.seed, epoch);
    std::vector<double> gradient;
    double sum = 0;
    int64_t batches = 0;
    for (int64_t first = 0; first < static_cast<int64_t>(examples.size()); first += c.batch, batches++) {
        const int64_t count = std::min<int64_t>(c.batch, static_cast<int64_t>(examples.size()) - first);
        sum += model.loss(examples.data() + first, count, c.l2, &gradient);
        adam.update(model.values(), gradient);
    }
    return sum / static_cast<double>(batches);
}

}  // namespace

BagOfWordsResult train_bag_of_words(const TextClassificationSplits &splits, const BagOfWordsConfig &config) {
    validate_bag_of_words_config(config);
    const TextVocabulary vocab = TextVocabulary::from_training(splits.train, config.min_count);
    std::vector<BagOfWordsExample> train = bag_of_words_examples(splits.train, vocab);
    BagOfWords model(vocab.size() - 1, splits.train.classes());
    BagOfWordsAdam adam(config.learning_rate);
    BagOfWordsResult r;
    for (int64_t epoch = 0; epoch < config.epochs; epoch++)
        r.epoch_losses.push_back(train_bag_of_words_epoch(model, adam, train, config, static_cast<uint32_t>(epoch)));
    r.train_accuracy = model.accuracy(train);
    r.valid_accuracy = model.accuracy(bag_of_words_examples(splits.valid, vocab));
    r.test_accuracy = model.accuracy(bag_of_words_examples(splits.test, vocab));
    r.vocabulary = vocab.size();
    r.parameters = model.parameters();
    return r;
}

}  // namespace qrnn::lm
