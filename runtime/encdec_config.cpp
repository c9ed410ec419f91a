#include "runtime/encdec_config.h"

#include <cmath>
#include <sstream>

#include "core/error.h"
#include "core/pooling.h"
#include "core/streams.h"
#include "runtime/seeded_fill.h"

namespace qrnn {

void EncDecConfig::validate() const {
    if (encoder.layers < 1)
        fail(attention ? "attention needs an encoder" : "a decoder needs an encoder to condition on",
             " (encoder layers = ", encoder.layers, ")");
    if (decoder.layers != encoder.layers)
        fail("decoder has ", decoder.layers, " layers but the encoder ", encoder.layers,
             ": decoder layer l is conditioned on encoder layer l");
    if (decoder.hidden != encoder.hidden)
        fail("decoder width ", decoder.hidden, " differs from the encoder width ", encoder.hidden);
    if (decoder.pooling != encoder.pooling || decoder.window != encoder.window || decoder.schedule != encoder.schedule)
        fail("decoder and encoder must share pooling, window and schedule");
    if (source_len < 1) fail("source length must be >= 1 (got ", source_len, ")");
    for (const ModelConfig *c : {&encoder, &decoder}) c->validate();  // sizes >= 1, zoneout and dropout in [0, 1)
    decoder.pooling_variant().require_backward();
}

std::string EncDecConfig::describe() const {
    std::ostringstream os;
    os << "encdec pooling=" << decoder.pooling << " k=" << decoder.window << " B=" << decoder.batch << " S=" << source_len
       << " T=" << decoder.seq << " n_src=" << encoder.input << " n_tgt=" << decoder.input << " m=" << hidden()
       << " L=" << layers() << " attention=" << (attention ? "on" : "off") << " seed=" << encoder.seed;
    return os.str();
}

EncDecConfig make_encdec_config(const ModelConfig &base, int64_t source_len, int64_t source_input, bool attention) {
    EncDecConfig cfg;
    cfg.encoder = cfg.decoder = base;
    cfg.encoder.seq = source_len;
    cfg.encoder.input = source_input;
    cfg.decoder.seed = base.seed + 1;  // other masks and weights than the encoder's
    cfg.source_len = source_len;
    cfg.attention = attention;
    return cfg;
}

// Streams: core/streams.h.
EncDecParams<float> init_encdec_params(const EncDecConfig &cfg) {
    EncDecParams<float> p{init_params(cfg.encoder), init_params(cfg.decoder), {}, {}};
    const int64_t G = cfg.decoder.pooling_variant().gate_count(), m = cfg.hidden();
    const double bound = 1.0 / std::sqrt(static_cast<double>(m));
    for (int64_t l = 0; l < cfg.layers(); l++) {
        p.condition.emplace_back(std::vector<int64_t>{G, m, m});
        seeded_fill(p.condition.back(), cfg.encoder.seed, streams::condition(static_cast<uint32_t>(l)), bound);
    }
    if (cfg.attention) {
        p.attention = Tensor<float>({2, m, m});
        seeded_fill(p.attention, cfg.encoder.seed, streams::kAttention, bound);
    }
    return p;
}

void check_source_lengths(const std::vector<int64_t> &lengths, int64_t batch, int64_t S) {
    if (static_cast<int64_t>(lengths.size()) != batch)
        fail("got ", lengths.size(), " source lengths for a batch of ", batch);
    for (size_t b = 0; b < lengths.size(); b++)
        if (lengths[b] < 1 || lengths[b] > S)
            fail("source length ", lengths[b], " of sequence ", b, " is outside [1, ", S, "]");
}

}  // namespace qrnn
