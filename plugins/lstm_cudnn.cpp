// "lstm-cudnn": cuDNN 9 RNN API (cudnnSetRNNDescriptor_v8), LSTM cell, one input bias (gate order i,f,g,o as
// ours: linLayerID 0-3 input matrices W, 4-7 recurrent R), FP32 math (CUDNN_FMA_MATH: no TF32).
//   Model plugin: numLayers = --layers, cudnnRNNForward in inference mode, data on the device; verify copies
//     the outputs back.
//   Trainable layer (nn::Layer, one layer): cudnnRNNForward in training mode (the tape keeps the reserve
//     space and the device copies of x, y, h0, c0), cudnnRNNBackwardData_v8 (dx, d h0, d c0), then
//     cudnnRNNBackwardWeights_v8 (CUDNN_WGRAD_MODE_ADD into a zeroed weight-gradient space, read back per
//     matrix and added to the layer's gradients).
// Built when the CUDA toolkit and cuDNN are found; on a machine without a usable GPU it is listed as
// "unavailable: no CUDA device" and skipped (make_layer throws qrnn::Unavailable).
#include <cuda_runtime.h>
#include <cudnn.h>

#include "core/error.h"
#include "plugins/lstm_layer.h"
#include "plugins/lstm_model.h"

namespace qrnn {
namespace {
void check(cudaError_t e, const char *what) {
    if (e != cudaSuccess) fail("lstm-cudnn: ", what, ": ", cudaGetErrorString(e));
}
void check(cudnnStatus_t s, const char *what) {
    if (s != CUDNN_STATUS_SUCCESS) fail("lstm-cudnn: ", what, ": ", cudnnGetErrorString(s));
}

std::string unavailable() {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        cudaGetLastError();  // clear the sticky error of a missing driver
        return "no CUDA device";
    }
    return "";
}

// A device buffer of floats (or bytes), freed with its owner.
struct DeviceBuffer {
    void *ptr = nullptr;
    size_t bytes = 0;
    DeviceBuffer() = default;
    explicit DeviceBuffer(size_t size) : bytes(size) {
        if (size) check(cudaMalloc(&ptr, size), "cudaMalloc");
    }
    explicit DeviceBuffer(const Tensor<float> &t) : DeviceBuffer(t.size() * 4) { upload(t.data); }
    DeviceBuffer(const DeviceBuffer &) = delete;
    DeviceBuffer(DeviceBuffer &&o) noexcept { *this = std::move(o); }
    DeviceBuffer &operator=(DeviceBuffer &&o) noexcept {
        std::swap(ptr, o.ptr);
        std::swap(bytes, o.bytes);
        return *this;
    }
    ~DeviceBuffer() {
        if (ptr) cudaFree(ptr);
    }
    void upload(const TensorData<float> &v) { check(cudaMemcpy(ptr, v.data(), v.size() * 4, cudaMemcpyHostToDevice), "upload"); }
    void download(TensorData<float> &v) const {
        check(cudaMemcpy(v.data(), ptr, v.size() * 4, cudaMemcpyDeviceToHost), "download");
    }
    void zero() { check(cudaMemset(ptr, 0, bytes), "cudaMemset"); }
};

// The cuDNN handle and descriptors of an LSTM of L layers, n inputs, m units, for sequences of T steps at
// batch B (set_shape rebuilds the data descriptors), with its weight space.
class CudnnLstm {
public:
    CudnnLstm(int n, int m, int L) : n_(n), m_(m), L_(L) {
        check(cudnnCreate(&handle), "cudnnCreate");
        check(cudnnCreateDropoutDescriptor(&dropout_), "cudnnCreateDropoutDescriptor");
        check(cudnnSetDropoutDescriptor(dropout_, handle, 0.0f, nullptr, 0, 0), "cudnnSetDropoutDescriptor");
        check(cudnnCreateRNNDescriptor(&rnn), "cudnnCreateRNNDescriptor");
        check(cudnnSetRNNDescriptor_v8(rnn, CUDNN_RNN_ALGO_STANDARD, CUDNN_LSTM, CUDNN_RNN_SINGLE_INP_BIAS,
                                       CUDNN_UNIDIRECTIONAL, CUDNN_LINEAR_INPUT, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT,
                                       CUDNN_FMA_MATH, n, m, m, L, dropout_, CUDNN_RNN_PADDED_IO_DISABLED),
              "cudnnSetRNNDescriptor_v8");
        size_t weight_bytes = 0;
        check(cudnnGetRNNWeightSpaceSize(handle, rnn, &weight_bytes), "cudnnGetRNNWeightSpaceSize");
        weights = DeviceBuffer(weight_bytes);
    }
    CudnnLstm(const CudnnLstm &) = delete;
    ~CudnnLstm() {
        if (state_desc) cudnnDestroyTensorDescriptor(state_desc);
        if (x_desc) cudnnDestroyRNNDataDescriptor(x_desc);
        if (y_desc) cudnnDestroyRNNDataDescriptor(y_desc);
        if (rnn) cudnnDestroyRNNDescriptor(rnn);
        if (dropout_) cudnnDestroyDropoutDescriptor(dropout_);
        if (handle) cudnnDestroy(handle);
    }

    // Data descriptors for T x B, the device sequence lengths and a work space for `mode`.
    void set_shape(int T, int B, cudnnForwardMode_t mode) {
        if (T == T_ && B == B_ && mode == mode_) return;
        std::vector<int> lengths(B, T);
        for (auto [desc, width] : {std::pair{&x_desc, n_}, std::pair{&y_desc, m_}}) {
            if (!*desc) check(cudnnCreateRNNDataDescriptor(desc), "cudnnCreateRNNDataDescriptor");
            check(cudnnSetRNNDataDescriptor(*desc, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, T, B, width,
                                            lengths.data(), nullptr),
                  "cudnnSetRNNDataDescriptor");
        }
        const int dims[3] = {L_, B, m_}, strides[3] = {B * m_, m_, 1};
        if (!state_desc) check(cudnnCreateTensorDescriptor(&state_desc), "cudnnCreateTensorDescriptor");
        check(cudnnSetTensorNdDescriptor(state_desc, CUDNN_DATA_FLOAT, 3, dims, strides), "cudnnSetTensorNdDescriptor");
        size_t work_bytes = 0;
        check(cudnnGetRNNTempSpaceSizes(handle, rnn, mode, x_desc, &work_bytes, &reserve_bytes), "cudnnGetRNNTempSpaceSizes");
        work = DeviceBuffer(work_bytes);
        seq_lengths = DeviceBuffer(B * sizeof(int));
        check(cudaMemcpy(seq_lengths.ptr, lengths.data(), B * sizeof(int), cudaMemcpyHostToDevice), "upload lengths");
        T_ = T, B_ = B, mode_ = mode;
    }

    // Layer l's w_input [n_l][4][m] / w_recurrent [m][4][m] / bias [4][m] to (or, with to_device false, added
    // from) cuDNN's per-gate row-major [m][n_l] / [m][m] matrices in `space` (the weights or their gradients).
    void transfer(int l, LstmParams<float> &p, const DeviceBuffer &space, bool to_device) {
        cudnnTensorDescriptor_t m_desc, b_desc;
        check(cudnnCreateTensorDescriptor(&m_desc), "cudnnCreateTensorDescriptor");
        check(cudnnCreateTensorDescriptor(&b_desc), "cudnnCreateTensorDescriptor");
        for (int id = 0; id < 2 * kLstmGates; id++) {
            const int gate = id % kLstmGates;
            const bool recurrent = id >= kLstmGates;
            void *matrix = nullptr, *bias = nullptr;
            check(cudnnGetRNNWeightParams(handle, rnn, l, space.bytes, space.ptr, id, m_desc, &matrix, b_desc, &bias),
                  "cudnnGetRNNWeightParams");
            Tensor<float> &w = recurrent ? p.w_recurrent : p.w_input;
            const int cols = static_cast<int>(w.dim(0));
            std::vector<float> host(static_cast<size_t>(m_) * cols), host_bias(m_);
            if (to_device) {
                for (int u = 0; u < m_; u++)
                    for (int c = 0; c < cols; c++) host[static_cast<size_t>(u) * cols + c] = w(c, gate, u);
                check(cudaMemcpy(matrix, host.data(), host.size() * 4, cudaMemcpyHostToDevice), "upload weights");
                if (bias && !recurrent)
                    check(cudaMemcpy(bias, &p.bias(gate, 0), static_cast<size_t>(m_) * 4, cudaMemcpyHostToDevice),
                          "upload bias");
                continue;
            }
            check(cudaMemcpy(host.data(), matrix, host.size() * 4, cudaMemcpyDeviceToHost), "download weight gradients");
            for (int u = 0; u < m_; u++)
                for (int c = 0; c < cols; c++) w(c, gate, u) += host[static_cast<size_t>(u) * cols + c];
            if (bias && !recurrent) {
                check(cudaMemcpy(host_bias.data(), bias, host_bias.size() * 4, cudaMemcpyDeviceToHost), "download bias gradients");
                for (int u = 0; u < m_; u++) p.bias(gate, u) += host_bias[u];
            }
        }
        cudnnDestroyTensorDescriptor(m_desc);
        cudnnDestroyTensorDescriptor(b_desc);
    }

    cudnnHandle_t handle = nullptr;
    cudnnRNNDescriptor_t rnn = nullptr;
    cudnnRNNDataDescriptor_t x_desc = nullptr, y_desc = nullptr;
    cudnnTensorDescriptor_t state_desc = nullptr;
    DeviceBuffer weights, work, seq_lengths;
    size_t reserve_bytes = 0;

private:
    int n_, m_, L_, T_ = 0, B_ = 0;
    cudnnForwardMode_t mode_ = CUDNN_FWD_MODE_INFERENCE;
    cudnnDropoutDescriptor_t dropout_ = nullptr;
};

// ---- Model plugin ----------------------------------------------------------------------------------------
class LstmCudnn : public LstmModel {
public:
    explicit LstmCudnn(const ModelConfig &cfg)
        : LstmModel(cfg), lstm_(static_cast<int>(cfg.input), static_cast<int>(cfg.hidden), static_cast<int>(cfg.layers)) {
        lstm_.set_shape(static_cast<int>(cfg.seq), static_cast<int>(cfg.batch), CUDNN_FWD_MODE_INFERENCE);
        for (int l = 0; l < cfg.layers; l++) lstm_.transfer(l, data_.layers[l], lstm_.weights, true);
        x_ = DeviceBuffer(data_.x);
        h0_ = DeviceBuffer(data_.h0);
        c0_ = DeviceBuffer(data_.c0);
        y_ = DeviceBuffer(h_.size() * 4);
        hy_ = DeviceBuffer(h_T_.size() * 4);
        cy_ = DeviceBuffer(c_T_.size() * 4);
    }

    void forward() override {
        CudnnLstm &c = lstm_;
        check(cudnnRNNForward(c.handle, c.rnn, CUDNN_FWD_MODE_INFERENCE, static_cast<const int32_t *>(c.seq_lengths.ptr),
                              c.x_desc, x_.ptr, c.y_desc, y_.ptr, c.state_desc, h0_.ptr, hy_.ptr, c.state_desc, c0_.ptr,
                              cy_.ptr, c.weights.bytes, c.weights.ptr, c.work.bytes, c.work.ptr, 0, nullptr),
              "cudnnRNNForward");
        check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    }

protected:
    void fetch_outputs() override {
        y_.download(h_.data);
        hy_.download(h_T_.data);
        cy_.download(c_T_.data);
    }

private:
    CudnnLstm lstm_;
    DeviceBuffer x_, h0_, c0_, y_, hy_, cy_;
};

// ---- Trainable layer -------------------------------------------------------------------------------------
struct CudnnTape : nn::Tape {
    int64_t T = 0, B = 0;
    DeviceBuffer x, y, h0, c0, reserve;
};

class LstmCudnnLayer : public LstmLayer {
public:
    LstmCudnnLayer(const ModelConfig &cfg, int64_t index)
        : LstmLayer("lstm-cudnn", lstm_options(cfg), index), lstm_(static_cast<int>(n_), static_cast<int>(m_), 1) {}

    std::unique_ptr<nn::Tape> make_tape() const override { return std::make_unique<CudnnTape>(); }

    void forward(const Tensor<float> &x, nn::State &state, Tensor<float> &y, nn::Tape *tape_base) override {
        check_forward(x, state);
        const int64_t T = x.dim(0), B = x.dim(1);
        const cudnnForwardMode_t mode = tape_base ? CUDNN_FWD_MODE_TRAINING : CUDNN_FWD_MODE_INFERENCE;
        CudnnLstm &c = lstm_;
        c.set_shape(static_cast<int>(T), static_cast<int>(B), mode);
        c.transfer(0, value_, c.weights, true);  // the values may have changed since the last call
        CudnnTape own, &tape = tape_base ? dynamic_cast<CudnnTape &>(*tape_base) : own;
        tape.T = T, tape.B = B;
        tape.x = DeviceBuffer(x);
        tape.h0 = DeviceBuffer(state.at("h"));
        tape.c0 = DeviceBuffer(state.at("c"));
        tape.y = DeviceBuffer(static_cast<size_t>(T * B * m_) * 4);
        tape.reserve = DeviceBuffer(tape_base ? c.reserve_bytes : 0);
        DeviceBuffer hy(static_cast<size_t>(B * m_) * 4), cy(static_cast<size_t>(B * m_) * 4);
        check(cudnnRNNForward(c.handle, c.rnn, mode, static_cast<const int32_t *>(c.seq_lengths.ptr), c.x_desc,
                              tape.x.ptr, c.y_desc, tape.y.ptr, c.state_desc, tape.h0.ptr, hy.ptr, c.state_desc,
                              tape.c0.ptr, cy.ptr, c.weights.bytes, c.weights.ptr, c.work.bytes, c.work.ptr,
                              tape.reserve.bytes, tape.reserve.ptr),
              "cudnnRNNForward");
        ensure_shape(y, {T, B, m_});
        tape.y.download(y.data);
        hy.download(state.at("h").data);
        cy.download(state.at("c").data);
        state.time += T;
    }

    void backward(const nn::Tape &tape_base, const Tensor<float> &dy, const nn::State *d_final, Tensor<float> *dx,
                  nn::State *d_initial) override {
        const auto &tape = dynamic_cast<const CudnnTape &>(tape_base);
        if (!tape.reserve.ptr) fail("lstm-cudnn: backward needs the tape of a forward pass");
        const int64_t T = tape.T, B = tape.B;
        check_backward(T, B, dy, d_final);
        CudnnLstm &c = lstm_;
        c.set_shape(static_cast<int>(T), static_cast<int>(B), CUDNN_FWD_MODE_TRAINING);
        c.transfer(0, value_, c.weights, true);
        Tensor<float> zeros({B, m_});
        DeviceBuffer d_y(dy), dhy(d_final ? d_final->at("h") : zeros), dcy(d_final ? d_final->at("c") : zeros);
        DeviceBuffer d_x(static_cast<size_t>(T * B * n_) * 4), dhx(zeros.size() * 4), dcx(zeros.size() * 4);
        auto *reserve = const_cast<void *>(tape.reserve.ptr);
        check(cudnnRNNBackwardData_v8(c.handle, c.rnn, static_cast<const int32_t *>(c.seq_lengths.ptr), c.y_desc,
                                      tape.y.ptr, d_y.ptr, c.x_desc, d_x.ptr, c.state_desc, tape.h0.ptr, dhy.ptr,
                                      dhx.ptr, c.state_desc, tape.c0.ptr, dcy.ptr, dcx.ptr, c.weights.bytes,
                                      c.weights.ptr, c.work.bytes, c.work.ptr, tape.reserve.bytes, reserve),
              "cudnnRNNBackwardData_v8");
        DeviceBuffer d_weights(c.weights.bytes);
        d_weights.zero();
        check(cudnnRNNBackwardWeights_v8(c.handle, c.rnn, CUDNN_WGRAD_MODE_ADD,
                                         static_cast<const int32_t *>(c.seq_lengths.ptr), c.x_desc, tape.x.ptr,
                                         c.state_desc, tape.h0.ptr, c.y_desc, tape.y.ptr, d_weights.bytes,
                                         d_weights.ptr, c.work.bytes, c.work.ptr, tape.reserve.bytes, reserve),
              "cudnnRNNBackwardWeights_v8");
        c.transfer(0, grad_, d_weights, false);
        if (dx) {
            ensure_shape(*dx, {T, B, n_});
            d_x.download(dx->data);
        }
        if (d_initial) {
            for (const char *name : {"h", "c"})
                ensure_shape(d_initial->at(name), {B, m_});
            dhx.download(d_initial->at("h").data);
            dcx.download(d_initial->at("c").data);
        }
    }

private:
    CudnnLstm lstm_;
};

const bool lstm_cudnn_registered = [] {
    register_lstm_model("lstm-cudnn", "LSTM by cuDNN 9 cudnnRNNForward (the paper's baseline)", {"cuda"}, unavailable,
                        [](const ModelConfig &cfg) { return std::make_unique<LstmCudnn>(cfg); },
                        [](const ModelConfig &cfg, int64_t index) -> std::unique_ptr<nn::Layer> {
                            return std::make_unique<LstmCudnnLayer>(cfg, index);  // available: register_model checked
                        });
    return true;
}();
}  // namespace
}  // namespace qrnn
