// Model plugin "lstm-cudnn": cuDNN 9 RNN API (cudnnSetRNNDescriptor_v8, cudnnRNNForward), LSTM cell, one
// input bias (gate order i,f,g,o as ours: linLayerID 0-3 input matrices W, 4-7 recurrent R), FP32 math
// (CUDNN_FMA_MATH: no TF32), numLayers = --layers. The timed forward is cudnnRNNForward with data on the
// device; verify copies the outputs back. Built when the CUDA toolkit and cuDNN are found; on a machine
// without a usable GPU it is listed as "unavailable: no CUDA device" and skipped.
#include <cuda_runtime.h>
#include <cudnn.h>

#include "core/error.h"
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

// A device buffer of floats (or bytes), freed with the model.
struct DeviceBuffer {
    void *ptr = nullptr;
    size_t bytes = 0;
    DeviceBuffer() = default;
    explicit DeviceBuffer(size_t size) : bytes(size) {
        if (size) check(cudaMalloc(&ptr, size), "cudaMalloc");
    }
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
    void upload(const std::vector<float> &v) { check(cudaMemcpy(ptr, v.data(), v.size() * 4, cudaMemcpyHostToDevice), "upload"); }
    void download(std::vector<float> &v) const {
        check(cudaMemcpy(v.data(), ptr, v.size() * 4, cudaMemcpyDeviceToHost), "download");
    }
};

class LstmCudnn : public LstmModel {
public:
    explicit LstmCudnn(const ModelConfig &cfg) : LstmModel(cfg) {
        const int T = static_cast<int>(cfg.seq), B = static_cast<int>(cfg.batch);
        const int n = static_cast<int>(cfg.input), m = static_cast<int>(cfg.hidden), L = static_cast<int>(cfg.layers);
        check(cudnnCreate(&handle_), "cudnnCreate");
        check(cudnnCreateDropoutDescriptor(&dropout_), "cudnnCreateDropoutDescriptor");
        check(cudnnSetDropoutDescriptor(dropout_, handle_, 0.0f, nullptr, 0, 0), "cudnnSetDropoutDescriptor");
        check(cudnnCreateRNNDescriptor(&rnn_), "cudnnCreateRNNDescriptor");
        check(cudnnSetRNNDescriptor_v8(rnn_, CUDNN_RNN_ALGO_STANDARD, CUDNN_LSTM, CUDNN_RNN_SINGLE_INP_BIAS,
                                       CUDNN_UNIDIRECTIONAL, CUDNN_LINEAR_INPUT, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT,
                                       CUDNN_FMA_MATH, n, m, m, L, dropout_, CUDNN_RNN_PADDED_IO_DISABLED),
              "cudnnSetRNNDescriptor_v8");

        std::vector<int> lengths(B, T);
        for (auto [desc, width] : {std::pair{&x_desc_, n}, std::pair{&y_desc_, m}}) {
            check(cudnnCreateRNNDataDescriptor(desc), "cudnnCreateRNNDataDescriptor");
            check(cudnnSetRNNDataDescriptor(*desc, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, T, B, width,
                                            lengths.data(), nullptr),
                  "cudnnSetRNNDataDescriptor");
        }
        const int dims[3] = {L, B, m}, strides[3] = {B * m, m, 1};
        check(cudnnCreateTensorDescriptor(&state_desc_), "cudnnCreateTensorDescriptor");
        check(cudnnSetTensorNdDescriptor(state_desc_, CUDNN_DATA_FLOAT, 3, dims, strides), "cudnnSetTensorNdDescriptor");

        size_t weight_bytes = 0, work_bytes = 0, reserve_bytes = 0;
        check(cudnnGetRNNWeightSpaceSize(handle_, rnn_, &weight_bytes), "cudnnGetRNNWeightSpaceSize");
        check(cudnnGetRNNTempSpaceSizes(handle_, rnn_, CUDNN_FWD_MODE_INFERENCE, x_desc_, &work_bytes, &reserve_bytes),
              "cudnnGetRNNTempSpaceSizes");
        weights_ = DeviceBuffer(weight_bytes);
        work_ = DeviceBuffer(work_bytes);
        for (int l = 0; l < L; l++) upload_weights(l, m);

        auto upload = [](const Tensor<float> &t) {
            DeviceBuffer d(t.size() * 4);
            d.upload(t.data);
            return d;
        };
        x_ = upload(data_.x);
        h0_ = upload(data_.h0);
        c0_ = upload(data_.c0);
        y_ = DeviceBuffer(h_.size() * 4);
        hy_ = DeviceBuffer(h_T_.size() * 4);
        cy_ = DeviceBuffer(c_T_.size() * 4);
        seq_lengths_ = DeviceBuffer(B * sizeof(int));
        check(cudaMemcpy(seq_lengths_.ptr, lengths.data(), B * sizeof(int), cudaMemcpyHostToDevice), "upload lengths");
    }

    ~LstmCudnn() override {
        if (state_desc_) cudnnDestroyTensorDescriptor(state_desc_);
        if (x_desc_) cudnnDestroyRNNDataDescriptor(x_desc_);
        if (y_desc_) cudnnDestroyRNNDataDescriptor(y_desc_);
        if (rnn_) cudnnDestroyRNNDescriptor(rnn_);
        if (dropout_) cudnnDestroyDropoutDescriptor(dropout_);
        if (handle_) cudnnDestroy(handle_);
    }

    void forward() override {
        check(cudnnRNNForward(handle_, rnn_, CUDNN_FWD_MODE_INFERENCE, static_cast<const int32_t *>(seq_lengths_.ptr),
                              x_desc_, x_.ptr, y_desc_, y_.ptr, state_desc_, h0_.ptr, hy_.ptr, state_desc_, c0_.ptr,
                              cy_.ptr, weights_.bytes, weights_.ptr, work_.bytes, work_.ptr, 0, nullptr),
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
    // Layer l's w_input [n_l][4][m] / w_recurrent [m][4][m] -> cuDNN's per-gate row-major [m][n_l] / [m][m].
    void upload_weights(int l, int m) {
        cudnnTensorDescriptor_t m_desc, b_desc;
        check(cudnnCreateTensorDescriptor(&m_desc), "cudnnCreateTensorDescriptor");
        check(cudnnCreateTensorDescriptor(&b_desc), "cudnnCreateTensorDescriptor");
        for (int id = 0; id < 2 * kLstmGates; id++) {
            const int gate = id % kLstmGates;
            const bool recurrent = id >= kLstmGates;
            void *matrix = nullptr, *bias = nullptr;
            check(cudnnGetRNNWeightParams(handle_, rnn_, l, weights_.bytes, weights_.ptr, id, m_desc, &matrix, b_desc, &bias),
                  "cudnnGetRNNWeightParams");
            const LstmParams<float> &p = data_.layers[l];
            const Tensor<float> &w = recurrent ? p.w_recurrent : p.w_input;
            const int cols = static_cast<int>(w.dim(0));
            std::vector<float> host(static_cast<size_t>(m) * cols);
            for (int u = 0; u < m; u++)
                for (int c = 0; c < cols; c++) host[static_cast<size_t>(u) * cols + c] = w(c, gate, u);
            check(cudaMemcpy(matrix, host.data(), host.size() * 4, cudaMemcpyHostToDevice), "upload weights");
            if (bias && !recurrent)
                check(cudaMemcpy(bias, &p.bias(gate, 0), static_cast<size_t>(m) * 4, cudaMemcpyHostToDevice),
                      "upload bias");
        }
        cudnnDestroyTensorDescriptor(m_desc);
        cudnnDestroyTensorDescriptor(b_desc);
    }

    cudnnHandle_t handle_ = nullptr;
    cudnnDropoutDescriptor_t dropout_ = nullptr;
    cudnnRNNDescriptor_t rnn_ = nullptr;
    cudnnRNNDataDescriptor_t x_desc_ = nullptr, y_desc_ = nullptr;
    cudnnTensorDescriptor_t state_desc_ = nullptr;
    DeviceBuffer weights_, work_, x_, h0_, c0_, y_, hy_, cy_, seq_lengths_;
};

const bool registered = [] {
    register_lstm_model("lstm-cudnn", "LSTM by cuDNN 9 cudnnRNNForward (the paper's baseline)", {"cuda"}, unavailable,
                        [](const ModelConfig &cfg) { return std::make_unique<LstmCudnn>(cfg); });
    return true;
}();
}  // namespace
}  // namespace qrnn
