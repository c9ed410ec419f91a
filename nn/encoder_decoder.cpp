#include "nn/encoder_decoder.h"

#include "core/error.h"

namespace qrnn::nn {
namespace {
// out[b] = y[lengths[b] - 1][b]: each sequence's last real step.
Tensor<float> last_steps(const Tensor<float> &y, const std::vector<int64_t> &lengths) {
    const int64_t B = y.dim(1), m = y.dim(2);
    Tensor<float> out({B, m});
    for (int64_t b = 0; b < B; b++) std::copy_n(&y(lengths[b] - 1, b, 0), m, &out(b, 0));
    return out;
}

// One tape per layer, made once and then reused (a tape keeps its tensors, so a step allocates nothing).
void reuse_tapes(const std::vector<std::unique_ptr<QrnnLayer>> &layers, Tapes &tapes) {
    if (tapes.size() == layers.size()) return;
    tapes.clear();
    for (auto &l : layers) tapes.push_back(l->make_tape());
}

}  // namespace

EncoderDecoder::EncoderDecoder(const EncDecConfig &cfg) : cfg_(cfg) {
    cfg_.validate();
    const PoolingVariant &variant = cfg_.decoder.pooling_variant();
    G_ = variant.gate_count();
    has_o_ = variant.gate_index('o') >= 0;
    for (int64_t l = 0; l < cfg_.layers(); l++) {
        encoder_.push_back(std::make_unique<QrnnLayer>(cfg_.encoder, l));
        const bool attended = cfg_.attention && l + 1 == cfg_.layers();
        TrainingLayerOptions options{true, attended && has_o_, attended};
        decoder_.push_back(std::make_unique<QrnnLayer>(cfg_.decoder, l, options));
        encoder_.back()->prepare_training();  // compiled now: no timed step pays for it
        decoder_.back()->prepare_training();
    }
    set_parameters(init_encdec_params(cfg_));
    const Halide::Target target = parse_target(cfg_.decoder.target);
    compiled_condition_ = compiled_condition(target);
    if (cfg_.attention) compiled_attention_ = compiled_attention(target);
}

void EncoderDecoder::set_stochastic(bool on) {
    for (auto *stack : {&encoder_, &decoder_})
        for (auto &l : *stack) l->set_stochastic(on);
}

void EncoderDecoder::set_mask_draw(uint64_t draw) {
    for (auto *stack : {&encoder_, &decoder_})
        for (auto &l : *stack) l->set_mask_draw(draw);
}

EncDecParams<float> EncoderDecoder::parameters() const {
    EncDecParams<float> p;
    p.condition = condition_, p.attention = attention_;
    for (auto *stack : {&encoder_, &decoder_})
        for (auto &l : *stack) {
            std::vector<Param> ps = l->params();
            (stack == &encoder_ ? p.encoder : p.decoder).push_back({*ps[0].value, *ps[1].value});
        }
    return p;
}

void EncoderDecoder::set_parameters(const EncDecParams<float> &p) {
    auto require = [](const Tensor<float> &have, const Tensor<float> &given, const std::string &name) {
        if (!have.shape.empty() && have.shape != given.shape)
            fail("encoder-decoder parameter ", name, ": ", given.shape_str(), " is not ", have.shape_str());
    };
    const size_t L = static_cast<size_t>(cfg_.layers());
    if (p.encoder.size() != L || p.decoder.size() != L || p.condition.size() != L || p.attention.data.empty() == cfg_.attention)
        fail("encoder-decoder parameters: ", p.encoder.size(), "/", p.decoder.size(), "/", p.condition.size(),
             " encoder/decoder/condition layers", p.attention.data.empty() ? " without" : " with",
             " attention weights, for a model of ", L, " layers", cfg_.attention ? " with" : " without", " attention");
    for (int64_t l = 0; l < cfg_.layers(); l++)
        for (auto *stack : {&encoder_, &decoder_}) {
            const LayerParams<float> &src = (stack == &encoder_ ? p.encoder : p.decoder)[l];
            std::vector<Param> ps = (*stack)[l]->params();
            require(*ps[0].value, src.weights, "weights"), require(*ps[1].value, src.bias, "bias");
            *ps[0].value = src.weights, *ps[1].value = src.bias;
        }
    for (size_t l = 0; l < condition_.size(); l++) require(condition_[l], p.condition[l], "condition");
    require(attention_, p.attention, "attention");
    condition_ = p.condition, attention_ = p.attention;
    condition_grad_.clear();
    for (auto &v : condition_) condition_grad_.emplace_back(v.shape);
    attention_grad_ = Tensor<float>(attention_.shape);
}

void EncoderDecoder::gate_o(const Tape &last_tape, int64_t T, int64_t B, Tensor<float> &out) const {
    if (has_o_) return decoder_.back()->tape_gate(last_tape, 'o', out);
    ensure_shape(out, {T, B, cfg_.hidden()});
    std::fill(out.data.begin(), out.data.end(), 1.0f);
}

void EncoderDecoder::attend(const Tensor<float> &cell, const Tensor<float> &o, const Encoded &enc, Tensor<float> &out,
                            AttentionTape &tape) {
    compiled_attention_->forward(cell, o, enc.last_out, enc.lengths, attention_, out, tape);
}

Encoded EncoderDecoder::encode(const Tensor<float> &source, const std::vector<int64_t> &lengths) {
    return encode_into(source, lengths, nullptr);
}

Encoded EncoderDecoder::encode_into(const Tensor<float> &source, const std::vector<int64_t> &lengths, EncDecTape *tape) {
    if (source.shape.size() != 3 || source.dim(2) != cfg_.encoder.input)
        fail("encoder-decoder: source ", source.shape_str(), " must be [S][B][", cfg_.encoder.input, "]");
    const int64_t B = source.dim(1);
    check_source_lengths(lengths, B, source.dim(0));
    Encoded enc;
    enc.lengths = lengths;
    if (tape) tape->encoder_out.resize(cfg_.layers()), tape->final_state.clear(), tape->lengths = lengths;
    // Always with a tape: the training pipeline (compiled anyway) serves training, decoding and inference alike.
    Tapes &tapes = tape ? tape->encoder : scratch_.encoder;
    reuse_tapes(encoder_, tapes);
    const Tensor<float> *input = &source;
    Tensor<float> y;
    for (int64_t l = 0; l < cfg_.layers(); l++) {
        State state = encoder_[l]->initial_state(B);
        Tensor<float> &out = tape ? tape->encoder_out[l] : (l % 2 ? y : enc.last_out);
        encoder_[l]->forward(*input, state, out, tapes[l].get());
        Tensor<float> last = last_steps(out, lengths);
        compiled_condition_->forward(condition_[l], last, enc.batch_bias.emplace_back());
        if (tape) tape->final_state.push_back(std::move(last));
        input = &out;
    }
    if (input != &enc.last_out) enc.last_out = *input;
    return enc;
}

std::vector<State> EncoderDecoder::decoder_state(int64_t batch) const {
    std::vector<State> states;
    for (auto &l : decoder_) states.push_back(l->initial_state(batch));
    return states;
}

void EncoderDecoder::decode(const Encoded &enc, const Tensor<float> &target, std::vector<State> &states,
                            Tensor<float> &out, Tensor<float> *alpha) {
    EncDecTape &tape = scratch_;
    decode_into(enc, target, states, out, tape);
    if (alpha && cfg_.attention) *alpha = tape.attention.alpha;
}

void EncoderDecoder::decode_into(const Encoded &enc, const Tensor<float> &target, std::vector<State> &states,
                                 Tensor<float> &out, EncDecTape &tape) {
    if (target.shape.size() != 3 || target.dim(1) != static_cast<int64_t>(enc.lengths.size()) ||
        target.dim(2) != cfg_.decoder.input)
        fail("encoder-decoder: target ", target.shape_str(), " must be [T][", enc.lengths.size(), "][", cfg_.decoder.input,
             "]");
    if (states.size() != decoder_.size()) fail("encoder-decoder: ", states.size(), " decoder states for ", decoder_.size(), " layers");
    const int64_t T = target.dim(0), B = target.dim(1);
    reuse_tapes(decoder_, tape.decoder);
    const Tensor<float> *input = &target;
    std::vector<Tensor<float>> &ys = tape.decoder_out;
    ys.resize(decoder_.size());
    for (size_t l = 0; l < decoder_.size(); l++) {
        decoder_[l]->forward_with(*input, &enc.batch_bias[l], states[l], ys[l], tape.decoder[l].get());
        input = &ys[l];
    }
    if (!cfg_.attention) {
        out = ys.back();
        return;
    }
    tape.cell = QrnnLayer::tape_cell(*tape.decoder.back());
    gate_o(*tape.decoder.back(), T, B, tape.gate_o);
    attend(tape.cell, tape.gate_o, enc, out, tape.attention);
}

const Tensor<float> &EncoderDecoder::forward(const Tensor<float> &source, const std::vector<int64_t> &lengths,
                                             const Tensor<float> &target, EncDecTape *tape) {
    EncDecTape &t = tape ? *tape : scratch_;
    Encoded enc = encode_into(source, lengths, tape);
    std::vector<State> states = decoder_state(source.dim(1));
    decode_into(enc, target, states, out_, t);
    t.recorded = tape != nullptr;
    return out_;
}

void EncoderDecoder::backward(const EncDecTape &tape, const Tensor<float> &dout, Tensor<float> *dsource,
                              Tensor<float> *dtarget) {
    if (!tape.recorded || tape.decoder.size() != decoder_.size()) fail("encoder-decoder backward: no tape of a forward");
    const int64_t L = cfg_.layers();
    const Tensor<float> &enc_last = tape.encoder_out.back();
    const int64_t S = enc_last.dim(0), B = enc_last.dim(1), m = cfg_.hidden();
    BackwardScratch &s = back_;
    s.dfinal.resize(L), s.decoder_dx.resize(L), s.encoder_dx.resize(L);
    // Decoder, last layer first: its dh from the attention (dcell; dgate_o onto the output gate) or dout.
    const Tensor<float> *dh = &dout;
    Tensor<float> *de = &s.de;  // d of the last encoder layer's output: from the attention, else zero
    const Tensor<float> *dgates = nullptr;
    if (cfg_.attention) {
        AttentionGradsF &g = s.attention;
        compiled_attention_->backward(tape.cell, tape.gate_o, enc_last, tape.lengths, attention_, tape.attention, dout, g);
        add_into(attention_grad_, g.dweights);
        dh = &g.dcell, de = &g.denc;
        if (has_o_) {
            const int64_t T = dout.dim(0), o = cfg_.decoder.pooling_variant().gate_index('o');
            ensure_shape(s.dgates, {G_, T, B, m});  // only gate o's slice is ever written: the others stay zero
            std::copy(g.dgate_o.data.begin(), g.dgate_o.data.end(), s.dgates.data.begin() + o * T * B * m);
            dgates = &s.dgates;
        }
    } else {
        ensure_shape(s.de, {S, B, m});
        std::fill(s.de.data.begin(), s.de.data.end(), 0.0f);
    }
    for (int64_t l = L - 1; l >= 0; l--) {
        decoder_[l]->backward_with(*tape.decoder[l], *dh, l == L - 1 ? dgates : nullptr, nullptr, &s.decoder_dx[l],
                                   nullptr, &s.dbias);
        compiled_condition_->backward(condition_[l], tape.final_state[l], s.dbias, s.dV, s.dfinal[l]);
        add_into(condition_grad_[l], s.dV);
        dh = &s.decoder_dx[l];
    }
    if (dtarget) *dtarget = *dh;
    // Encoder, last layer first: d of its output = from above (or the attention) + dh~ at each last step.
    for (int64_t l = L - 1; l >= 0; l--) {
        for (int64_t b = 0; b < B; b++) {
            float *row = &(*de)(tape.lengths[b] - 1, b, 0);
            for (int64_t h = 0; h < m; h++) row[h] += s.dfinal[l](b, h);
        }
        encoder_[l]->backward(*tape.encoder[l], *de, nullptr, &s.encoder_dx[l], nullptr);
        de = &s.encoder_dx[l];
    }
    if (dsource) *dsource = *de;
}

std::vector<Param> EncoderDecoder::params() {
    std::vector<Param> out;
    for (int64_t l = 0; l < cfg_.layers(); l++) {
        for (auto *stack : {&encoder_, &decoder_})
            for (Param p : (*stack)[l]->params()) {
                p.name = (stack == &encoder_ ? "encoder_" : "decoder_") + std::to_string(l) + "/" + p.name;
                out.push_back(p);
            }
        out.push_back({"condition_" + std::to_string(l), &condition_[l], &condition_grad_[l]});
    }
    if (cfg_.attention) out.push_back({"attention", &attention_, &attention_grad_});
    return out;
}

void EncoderDecoder::zero_grads() {
    for (auto &p : params()) std::fill(p.grad->data.begin(), p.grad->data.end(), 0.0f);
}

// The layers' forward flops, the conditioning, and the attention's GEMMs: scores and sums 2*T*S*m each, the
// output projection 2*T*2m*m, per sequence.
double EncoderDecoder::flops(int64_t S, int64_t T, int64_t B) const {
    const int64_t m = cfg_.hidden();
    double total = 0;
    for (int64_t l = 0; l < cfg_.layers(); l++)
        total += encoder_[l]->forward_flops(S, B) + decoder_[l]->forward_flops(T, B) + 2.0 * B * G_ * m * m;
    if (cfg_.attention) total += B * (4.0 * T * S * m + 4.0 * T * m * m);
    return total;
}

}  // namespace qrnn::nn
