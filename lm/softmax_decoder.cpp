#include "lm/softmax_decoder.h"

#include <Halide.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <numeric>

#include "core/error.h"
#include "core/softmax_decoder.h"
#include "runtime/kernel.h"
#include "runtime/compiled_layer.h"
#include "schedules/softmax_schedule.h"

namespace qrnn::lm {
using Halide::Buffer;

// Two pipelines from two instances of the algorithm: evaluation (row losses) and training (row losses and
// every gradient). Their ImageParams are shared state: each call holds the mutex.
struct SoftmaxDecoder::Compiled {
    Halide::Target target;
    int width_multiple;
    DecoderPanels panels;
    int panel_rows;  // rows the logits GEMM computes at once (its panels and dbias' lanes): chunks are multiples
    DecoderInputs eval_in, train_in;
    DecoderFuncs eval_f, train_f;
    Kernel eval, train, pack;  // pack: the weights' panels for train (once per call)
    std::mutex mutex;

    Compiled(const Halide::Target &t, Precision precision)
        : target(t),
          width_multiple(decoder_width_multiple(t)),
          panels(cpu_decoder_panels(t)),
          panel_rows(std::lcm(panels.logits_rows, kDecoderBiasLanes)),
          eval_f(define_softmax_decoder(eval_in, kDecoderVocabBlock, panels, precision)),
          train_f(define_softmax_decoder(train_in, kDecoderVocabBlock, panels, precision)) {
        check_precision(precision, t);
        schedule_softmax_decoder_cpu(eval_f, t);
        schedule_softmax_decoder_cpu(train_f, t);
        eval = Halide::Pipeline(eval_f.row_loss);
        train = Halide::Pipeline({train_f.row_loss, train_f.dhidden, train_f.dweights, train_f.dbias});
        pack = Halide::Pipeline(train_f.weights_pack);
        compile_kernels({&eval, &train, &pack}, t);
    }
};

struct SoftmaxDecoder::Scratch {
    Tensor<float> hidden, dweights, dhidden;  // zero-padded copies when the width is padded
    Tensor<float> weights;                    // the weights' copy when not read in place (weights_in_place), flat
    Tensor<float> weight_panels;              // training: the weights packed for dhidden (DecoderFuncs::weights_pack)
    Tensor<uint16_t> weight_pair_panels;      // the same in bf16: bfloat16 bits, pairs of words
    std::vector<float> row_loss;
};

namespace {

int I(int64_t v) { return static_cast<int>(v); }
Buffer<float> rows_view(const float *data, int64_t width, int64_t rows) {
    return Buffer<float>(const_cast<float *>(data), I(width), I(rows));
}
// [rows][width] -> [rows][width_pad] (padding zero), or back (the first `width` columns).
void copy_rows(const float *src, int64_t src_width, float *dst, int64_t dst_width, int64_t rows) {
    const int64_t w = std::min(src_width, dst_width);
    for (int64_t r = 0; r < rows; r++) std::memcpy(dst + r * dst_width, src + r * src_width, w * sizeof(float));
}

// Whether the GEMM tiles can read the caller's weights ([V][m], unpadded width) where they are: rows on 64-byte
// boundaries (logits reads each row as whole vectors; dhidden reads the packed copy).
bool weights_in_place(const Tensor<float> &weights, int64_t m) {
    return m % 16 == 0 && reinterpret_cast<uintptr_t>(weights.data.data()) % 64 == 0;
}

void check_tokens(const char *what, const std::vector<int32_t> &ids, int64_t vocab) {
    for (size_t i = 0; i < ids.size(); i++)
        if (ids[i] < 0 || ids[i] >= vocab)
            fail(what, " id ", ids[i], " at position ", i, " is outside the vocabulary [0, ", vocab, ")");
}

void check_shape(const char *what, const Tensor<float> &t, const std::vector<int64_t> &dims) {
    if (t.shape != dims) fail("softmax decoder: ", what, " has shape ", t.shape_str(), ", expected ", Tensor<float>(dims).shape_str());
}
}  // namespace

SoftmaxDecoder::SoftmaxDecoder(int64_t vocab, int64_t hidden, const Halide::Target &t, Precision precision)
    : vocab_(vocab), hidden_(hidden), chunk_(0), explicit_chunk_(false), scratch_(std::make_shared<Scratch>()) {
    if (vocab < 1 || hidden < 1) fail("softmax decoder: vocabulary (", vocab, ") and hidden size (", hidden, ") must be >= 1");
    if (t.has_gpu_feature()) fail("softmax decoder: target ", t.to_string(), " is not a CPU target");
    const std::string key = t.to_string() + (precision == Precision::f32 ? "" : std::string("|") + precision_name(precision));
    compiled_ = pipeline_cache().get<Compiled>(key, [&] { return std::make_shared<Compiled>(t, precision); });
    const int64_t panel = compiled_->panel_rows, rows = std::min<int64_t>(kDefaultChunkRows, kMaxChunkLogits / vocab);
    chunk_ = std::max(panel, rows / panel * panel);
}

void SoftmaxDecoder::set_chunk_rows(int64_t rows) {
    if (rows < 1) fail("softmax decoder: chunk rows must be >= 1 (got ", rows, ")");
    chunk_ = rows;
    explicit_chunk_ = true;
}

int64_t SoftmaxDecoder::chunk_for(int64_t rows) const {
    if (explicit_chunk_ || rows <= chunk_) return std::min(chunk_, std::max<int64_t>(rows, 1));
    const int64_t chunks = (rows + chunk_ - 1) / chunk_, panel = compiled_->panel_rows;
    return std::min(chunk_, ((rows + chunks - 1) / chunks + panel - 1) / panel * panel);
}

double SoftmaxDecoder::loss(const Tensor<float> &h, const std::vector<int32_t> &targets, const Tensor<float> &weights,
                            const Tensor<float> &bias, Tensor<float> *dh, DecoderGrads *grads) {
    return run(h, targets, weights, bias, dh, grads, nullptr);
}

std::vector<float> SoftmaxDecoder::row_losses(const Tensor<float> &h, const std::vector<int32_t> &targets,
                                              const Tensor<float> &weights, const Tensor<float> &bias) {
    std::vector<float> rows;
    run(h, targets, weights, bias, nullptr, nullptr, &rows);
    return rows;
}

namespace {
// The rows of h (N); throws on a shape, target or gradient that does not fit the decoder.
int64_t check_decoder_call(int64_t V, int64_t m, const Tensor<float> &h, const std::vector<int32_t> &targets,
                           const Tensor<float> &weights, const Tensor<float> &bias) {
    if (h.shape.empty() || h.shape.back() != m) fail("softmax decoder: h has shape ", h.shape_str(), ", expected [...][", m, "]");
    const int64_t N = static_cast<int64_t>(h.size()) / m;
    if (static_cast<int64_t>(targets.size()) != N)
        fail("softmax decoder: ", targets.size(), " targets for ", N, " rows of h");
    check_shape("weights", weights, {V, m});
    check_shape("bias", bias, {V});
    check_tokens("softmax decoder: target", targets, V);
    return N;
}

// Training's outputs, allocated where the caller left them empty, and checked.
void prepare_gradients(int64_t V, int64_t m, const Tensor<float> &h, Tensor<float> &dh, DecoderGrads &grads) {
    if (grads.dweights.shape.empty()) grads.dweights = Tensor<float>({V, m});
    if (grads.dbias.shape.empty()) grads.dbias = Tensor<float>({V});
    check_shape("dweights", grads.dweights, {V, m});
    check_shape("dbias", grads.dbias, {V});
    ensure_shape(dh, h.shape);
}

// The weights as the tiles read them: in place (weights_in_place), or copied once per call with zero rows past V
// up to decoder_weight_rows(V), each row padded by a cache line (no power-of-two multiple between rows: m = 640
// floats would alias in L1/L2) and its width to mp.
Buffer<float> weights_buffer(const Tensor<float> &weights, int64_t V, int64_t m, int64_t mp, bool in_place,
                             SoftmaxDecoder::Scratch &s) {
    if (in_place) return rows_view(weights.data.data(), m, V);
    const int64_t w_rows = decoder_weight_rows(V), w_stride = mp + 16;
    ensure_shape(s.weights, {w_rows * w_stride + 16});  // + room to start on a cache line (whole-vector loads)
    float *w_copy = s.weights.data.data() + (64 - reinterpret_cast<uintptr_t>(s.weights.data.data()) % 64) % 64 / sizeof(float);
    copy_rows(weights.data.data(), m, w_copy, w_stride, V);
    halide_dimension_t w_dims[] = {{0, I(mp), 1}, {0, I(w_rows), I(w_stride)}};
    return Buffer<float>(w_copy, 2, w_dims);
}

// One call's rows, in chunks, through the bound pipeline (eval, or train with dh); the summed loss.
struct ChunkedCall {
    const Tensor<float> &h;
    const std::vector<int32_t> &targets;
    int64_t N, m, mp;
    Tensor<float> *dh;                // training only
    Halide::Buffer<float> dw, dbias;  // training only
    std::vector<float> *rows_out;
};

double realize_chunks(SoftmaxDecoder::Compiled &c, SoftmaxDecoder::Scratch &s, DecoderInputs &in, const ChunkedCall &call,
                      int64_t chunk) {
    const bool padded = call.mp != call.m;
    double total = 0;
    for (int64_t n0 = 0; n0 < call.N; n0 += chunk) {
        const int64_t rows = std::min(chunk, call.N - n0);
        const float *h_rows = call.h.data.data() + n0 * call.m;
        if (padded) {
            ensure_shape(s.hidden, {rows, call.mp});
            copy_rows(h_rows, call.m, s.hidden.data.data(), call.mp, rows);
            h_rows = s.hidden.data.data();
        }
        in.hidden.set(rows_view(h_rows, call.mp, rows));
        in.targets.set(Buffer<int32_t>(const_cast<int32_t *>(call.targets.data()) + n0, I(rows)));
        s.row_loss.resize(rows);
        Buffer<float> loss_buf(s.row_loss.data(), I(rows));
        if (!call.dh) {
            c.eval.realize(loss_buf);
        } else {
            float *dh_rows = call.dh->data.data() + n0 * call.m;
            if (padded) dh_rows = ensure_shape(s.dhidden, {rows, call.mp}).data.data();
            c.train.realize(Halide::Realization({loss_buf, rows_view(dh_rows, call.mp, rows), call.dw, call.dbias}));
            if (padded) copy_rows(dh_rows, call.mp, call.dh->data.data() + n0 * call.m, call.m, rows);
        }
        for (int64_t r = 0; r < rows; r++) total += s.row_loss[r];
        if (call.rows_out) std::copy(s.row_loss.begin(), s.row_loss.begin() + rows, call.rows_out->begin() + n0);
    }
    return total;
}

// Training's inputs beyond the rows: the gradients to accumulate into and the weights' panels for dhidden.
void bind_training(SoftmaxDecoder::Compiled &c, SoftmaxDecoder::Scratch &s, const ChunkedCall &call, int64_t V) {
    DecoderInputs &in = c.train_in;
    in.dweights_in.set(call.dw);
    in.dbias_in.set(call.dbias);
    const int P = c.panels.dhidden_units, panels = I((call.mp + P - 1) / P);
    if (c.train_f.pairs()) {
        Tensor<uint16_t> &t = ensure_shape(s.weight_pair_panels, {panels, (V + 1) / 2, P, 2});
        Buffer<> buf(Halide::BFloat(16), t.data.data(), {2, P, I((V + 1) / 2), panels});
        c.pack.realize(buf);
        in.weights_pair_panels.set(buf);
        return;
    }
    Tensor<float> &t = ensure_shape(s.weight_panels, {panels, V, P});
    Buffer<float> buf(t.data.data(), P, I(V), panels);
    c.pack.realize(buf);
    in.weights_panels.set(buf);
}
}  // namespace

double SoftmaxDecoder::run(const Tensor<float> &h, const std::vector<int32_t> &targets, const Tensor<float> &weights,
                           const Tensor<float> &bias, Tensor<float> *dh, DecoderGrads *grads, std::vector<float> *rows_out) {
    const int64_t V = vocab_, m = hidden_;
    const int64_t N = check_decoder_call(V, m, h, targets, weights, bias);
    const bool training = dh || grads;
    DecoderGrads local_grads;
    Tensor<float> local_dh;
    if (training) {
        if (!grads) grads = &local_grads;
        if (!dh) dh = &local_dh;
        prepare_gradients(V, m, h, *dh, *grads);
    }
    Compiled &c = *compiled_;
    Scratch &s = *scratch_;
    // Widths that are not a multiple of the register tile run on zero-padded copies (h, dh, dW).
    const int64_t mp = (m + c.width_multiple - 1) / c.width_multiple * c.width_multiple;
    const bool padded = mp != m;
    const Buffer<float> w_buf = weights_buffer(weights, V, m, mp, !padded && weights_in_place(weights, m), s);
    ChunkedCall call{h, targets, N, m, mp, training ? dh : nullptr, {}, {}, rows_out};
    if (training) {
        float *dw_data = grads->dweights.data.data();
        if (padded) {
            ensure_shape(s.dweights, {V, mp});
            copy_rows(grads->dweights.data.data(), m, s.dweights.data.data(), mp, V);
            dw_data = s.dweights.data.data();
        }
        call.dw = rows_view(dw_data, mp, V);
        call.dbias = Buffer<float>(grads->dbias.data.data(), I(V));
    }
    if (rows_out) rows_out->assign(N, 0.0f);

    std::lock_guard<std::mutex> lock(c.mutex);
    DecoderInputs &in = training ? c.train_in : c.eval_in;
    in.weights.set(w_buf);
    in.bias.set(Buffer<float>(const_cast<float *>(bias.data.data()), I(V)));
    if (training) bind_training(c, s, call, V);
    const double total = realize_chunks(c, s, in, call, chunk_for(N));
    if (padded && training) copy_rows(s.dweights.data.data(), mp, grads->dweights.data.data(), m, V);
    return total;
}

void embedding_forward(const Tensor<float> &table, const std::vector<int32_t> &tokens, Tensor<float> &x) {
    if (table.shape.size() != 2) fail("embedding: table has shape ", table.shape_str(), ", expected [V][m]");
    const int64_t V = table.dim(0), m = table.dim(1);
    if (x.size() != tokens.size() * static_cast<size_t>(m))
        fail("embedding: x has shape ", x.shape_str(), ", expected ", tokens.size(), " rows of ", m);
    check_tokens("embedding: token", tokens, V);
    for (size_t i = 0; i < tokens.size(); i++)
        std::memcpy(&x.data[i * m], &table.data[tokens[i] * m], m * sizeof(float));
}

void embedding_backward(const std::vector<int32_t> &tokens, const Tensor<float> &dx, Tensor<float> &dtable) {
    if (dtable.shape.size() != 2) fail("embedding: dtable has shape ", dtable.shape_str(), ", expected [V][m]");
    const int64_t V = dtable.dim(0), m = dtable.dim(1);
    if (dx.size() != tokens.size() * static_cast<size_t>(m))
        fail("embedding: dx has shape ", dx.shape_str(), ", expected ", tokens.size(), " rows of ", m);
    check_tokens("embedding: token", tokens, V);
    for (size_t i = 0; i < tokens.size(); i++) {
        float *row = &dtable.data[tokens[i] * m];
        const float *d = &dx.data[i * m];
        for (int64_t k = 0; k < m; k++) row[k] += d[k];
    }
}

}  // namespace qrnn::lm
