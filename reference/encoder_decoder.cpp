#include "reference/encoder_decoder.h"

#include "core/attention.h"
#include "core/error.h"

namespace qrnn::ref {
namespace {
LayerState<double> zero_state(const ModelConfig &cfg, int64_t l) {
    return {Tensor<double>({std::max<int64_t>(cfg.history_rows(), 1), cfg.batch, cfg.layer_input(l)}),
            Tensor<double>({cfg.batch, cfg.hidden})};
}

const PoolingVariant &decoder_variant(const EncDecConfig &cfg, int64_t l) {
    const PoolingVariant &v = cfg.decoder.pooling_variant();
    return cfg.attention && l + 1 == cfg.layers() ? cell_output_variant(v) : v;
}

// dL/dconv of one traced layer (from zero state) from dh, plus dgate_o * o (1 - o) on its output gate.
Tensor<double> pre_activation_grads(const PoolingVariant &variant, const LayerTrace &tr, const LayerMasks &masks,
                                    const Tensor<double> &dh, const Tensor<double> *dgate_o) {
    const int64_t B = dh.dim(1), m = dh.dim(2);
    Tensor<double> dc0;
    Tensor<double> dpre = gate_gradients(variant, tr, Tensor<double>({B, m}), masks, 0, dh, Tensor<double>({B, m}), dc0);
    const int o = variant.gate_index('o');
    if (dgate_o && o >= 0)
        for (int64_t t = 0; t < dh.dim(0); t++)
            for (int64_t b = 0; b < B; b++)
                for (int64_t h = 0; h < m; h++) {
                    const double g = tr.gates(t, b, o, h);
                    dpre(t, b, o, h) += (*dgate_o)(t, b, h) * g * (1 - g);
                }
    return dpre;
}
}  // namespace

Tensor<double> condition_bias(const Tensor<double> &V, const Tensor<double> &last) {
    const int64_t G = V.dim(0), m = V.dim(2), B = last.dim(0);
    Tensor<double> bias({G, B, m});
    for (int64_t g = 0; g < G; g++)
        for (int64_t b = 0; b < B; b++)
            for (int64_t c = 0; c < m; c++)
                for (int64_t h = 0; h < m; h++) bias(g, b, h) += V(g, c, h) * last(b, c);
    return bias;
}

ConditionGrads condition_backward(const Tensor<double> &V, const Tensor<double> &last, const Tensor<double> &dbias) {
    const int64_t G = V.dim(0), m = V.dim(2), B = last.dim(0);
    ConditionGrads g{Tensor<double>(V.shape), Tensor<double>(last.shape)};
    for (int64_t gi = 0; gi < G; gi++)
        for (int64_t b = 0; b < B; b++)
            for (int64_t c = 0; c < m; c++)
                for (int64_t h = 0; h < m; h++) {
                    g.dV(gi, c, h) += dbias(gi, b, h) * last(b, c);
                    g.dlast(b, c) += V(gi, c, h) * dbias(gi, b, h);
                }
    return g;
}

EncDecTrace encdec_forward(const EncDecConfig &cfg, const EncDecParams<double> &p, const Tensor<double> &source,
                           const std::vector<int64_t> &lengths, const Tensor<double> &target) {
    cfg.validate();
    const int64_t L = cfg.layers(), B = source.dim(1), m = cfg.hidden();
    check_source_lengths(lengths, B, source.dim(0));
    const PoolingVariant &variant = cfg.encoder.pooling_variant();
    const int64_t G = variant.gate_count();
    EncDecTrace tr;
    const Tensor<double> *input = &source;
    for (int64_t l = 0; l < L; l++) {
        tr.encoder.push_back(layer_trace(variant, *input, zero_state(cfg.encoder, l), p.encoder[l],
                                         layer_masks(cfg.encoder, l), 0));
        input = &tr.encoder.back().out.h;
        Tensor<double> last({B, m});
        for (int64_t b = 0; b < B; b++)
            for (int64_t h = 0; h < m; h++) last(b, h) = (*input)(lengths[b] - 1, b, h);
        tr.batch_bias.push_back(condition_bias(p.condition[l], last));
        tr.final_state.push_back(std::move(last));
    }
    input = &target;
    for (int64_t l = 0; l < L; l++) {
        tr.decoder.push_back(layer_trace(decoder_variant(cfg, l), *input, zero_state(cfg.decoder, l), p.decoder[l],
                                         layer_masks(cfg.decoder, l), 0, &tr.batch_bias[l]));
        input = &tr.decoder.back().out.h;
    }
    const LayerTrace &last = tr.decoder.back();
    const int64_t T = target.dim(0), o = variant.gate_index('o');
    tr.gate_o = Tensor<double>({T, B, m}, 1.0);
    if (o >= 0)
        for (int64_t t = 0; t < T; t++)
            for (int64_t b = 0; b < B; b++)
                for (int64_t h = 0; h < m; h++) tr.gate_o(t, b, h) = last.gates(t, b, o, h);
    if (cfg.attention) {
        tr.attention = attention_forward(last.out.c, tr.gate_o, tr.encoder.back().out.h, lengths, p.attention);
        tr.out = tr.attention.out;
    } else {
        tr.out = last.out.h;
    }
    return tr;
}

EncDecGrads encdec_backward(const EncDecConfig &cfg, const EncDecParams<double> &p, const Tensor<double> &source,
                            const std::vector<int64_t> &lengths, const Tensor<double> &target, const Tensor<double> &dout) {
    EncDecTrace tr = encdec_forward(cfg, p, source, lengths, target);
    if (dout.shape != tr.out.shape) fail("reference backward: dout ", dout.shape_str(), " is not ", tr.out.shape_str());
    const int64_t L = cfg.layers(), B = source.dim(1), S = source.dim(0), m = cfg.hidden();
    const int64_t G = cfg.encoder.pooling_variant().gate_count();
    EncDecGrads out;
    out.params.encoder.resize(L), out.params.decoder.resize(L);

    // Decoder, last layer first: its dh from the attention (dcell, and dgate_o on the output gate) or dout.
    Tensor<double> dh = dout, denc_last({S, B, m});
    AttentionGrads att;
    if (cfg.attention) {
        att = attention_backward(tr.decoder.back().out.c, tr.gate_o, tr.encoder.back().out.h, lengths, p.attention, dout);
        dh = att.dcell;
        denc_last = att.denc;
        out.params.attention = att.dweights;
    }
    std::vector<Tensor<double>> dfinal(L, Tensor<double>({B, m}));  // dL/dh~^l
    for (int64_t l = L - 1; l >= 0; l--) {
        const bool top = l == L - 1;
        Tensor<double> dpre = pre_activation_grads(decoder_variant(cfg, l), tr.decoder[l], layer_masks(cfg.decoder, l), dh,
                                                   cfg.attention && top ? &att.dgate_o : nullptr);
        LayerGrads g = conv_backward(tr.decoder[l], p.decoder[l], layer_masks(cfg.decoder, l), 0, dpre);
        // batch_bias is the conv's addend at every t: dbias[g][b][h] = sum_t dpre.
        Tensor<double> dbias({G, B, m});
        for (int64_t t = 0; t < dpre.dim(0); t++)
            for (int64_t b = 0; b < B; b++)
                for (int64_t gi = 0; gi < G; gi++)
                    for (int64_t h = 0; h < m; h++) dbias(gi, b, h) += dpre(t, b, gi, h);
        ConditionGrads cg = condition_backward(p.condition[l], tr.final_state[l], dbias);
        dfinal[l] = std::move(cg.dlast);
        out.params.condition.insert(out.params.condition.begin(), std::move(cg.dV));
        out.params.decoder[l] = {std::move(g.dweights), std::move(g.dbias)};
        dh = std::move(g.dx);
    }
    out.dtarget = std::move(dh);

    // Encoder, last layer first: d of its output = from the layer above (or the attention) + dh~ at len_b - 1.
    Tensor<double> de = denc_last;
    for (int64_t l = L - 1; l >= 0; l--) {
        for (int64_t b = 0; b < B; b++)
            for (int64_t h = 0; h < m; h++) de(lengths[b] - 1, b, h) += dfinal[l](b, h);
        const PoolingVariant &variant = cfg.encoder.pooling_variant();
        Tensor<double> dpre = pre_activation_grads(variant, tr.encoder[l], layer_masks(cfg.encoder, l), de, nullptr);
        LayerGrads g = conv_backward(tr.encoder[l], p.encoder[l], layer_masks(cfg.encoder, l), 0, dpre);
        out.params.encoder[l] = {std::move(g.dweights), std::move(g.dbias)};
        de = std::move(g.dx);
    }
    out.dsource = std::move(de);
    return out;
}

}  // namespace qrnn::ref
