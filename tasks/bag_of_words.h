// The bag-of-words floor of a text classification task (docs/text_tasks.md): multinomial logistic regression on
// binary word-presence features over the training vocabulary (tasks/text_classification.h), in double, trained
// with Adam on shuffled minibatches for a fixed number of epochs with an L2 penalty on the weights. Deterministic:
// the same data and config give the same accuracies (one thread, the shuffle drawn from the seed).
#pragma once
#include <cmath>
#include <cstdint>
#include <vector>

#include "tasks/text_classification.h"

namespace qrnn::lm {

// One example's features: the distinct vocabulary ids of its tokens minus 1 (feature 0 is <unk>; the padding id
// has none), sorted, each with value 1.
struct BagOfWordsExample {
    std::vector<int32_t> features;
    int32_t label = 0;
};
std::vector<BagOfWordsExample> bag_of_words_examples(const TextClassificationData &data, const TextVocabulary &vocab);

class BagOfWords {
public:
    BagOfWords(int64_t features, int64_t classes);  // every parameter zero
    int64_t features() const { return features_; }
    int64_t classes() const { return classes_; }
    int64_t parameters() const { return static_cast<int64_t>(values_.size()); }  // F*C weights + C biases
    std::vector<double> &values() { return values_; }  // weights [C][F] row-major, then the biases [C]
    // Mean cross-entropy of examples [first, first + count) plus l2/2 * |weights|^2 (not the biases); with
    // gradient: its gradient, laid out as values() (overwritten).
    double loss(const BagOfWordsExample *first, int64_t count, double l2, std::vector<double> *gradient) const;
    double loss(const std::vector<BagOfWordsExample> &examples, double l2, std::vector<double> *gradient) const {
        return loss(examples.data(), static_cast<int64_t>(examples.size()), l2, gradient);
    }
    int32_t predict(const BagOfWordsExample &example) const;  // the class of the largest logit (the first on ties)
    double accuracy(const std::vector<BagOfWordsExample> &examples) const;  // NaN for no examples

private:
    std::vector<double> logits(const BagOfWordsExample &example) const;
    int64_t features_, classes_;
    std::vector<double> values_;
};

struct BagOfWordsConfig {
    int64_t min_count = 1;  // the vocabulary: training words seen at least this often
    int64_t epochs = 5, batch = 32;
    double learning_rate = 0.01, l2 = 1e-4;  // Adam (beta1 0.9, beta2 0.999, eps 1e-8)
    uint32_t seed = 1;                       // the order of each epoch's minibatches
};

struct BagOfWordsResult {
    double train_accuracy = 0, valid_accuracy = 0, test_accuracy = NAN;  // NaN without a test split
    int64_t vocabulary = 0, parameters = 0;  // vocabulary: ids with <pad> and <unk>; parameters: F*C + C
    std::vector<double> epoch_losses;        // the mean training loss of each epoch
};
// Throws qrnn::Error naming a bad config value (min_count, epochs, batch < 1; learning rate <= 0; l2 < 0).
BagOfWordsResult train_bag_of_words(const TextClassificationSplits &splits, const BagOfWordsConfig &config);

}  // namespace qrnn::lm
