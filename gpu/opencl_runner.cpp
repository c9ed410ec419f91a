// qrnn_opencl_runner: runs an AOT-compiled OpenCL layer (gpu/CMakeLists.txt) on a problem read from a file;
// links the Halide runtime only, never libHalide, so PoCL's LLVM can live in this process.
//   qrnn_opencl_runner SCHEDULE POOLING IN_FILE OUT_FILE      (qrnn_opencl_runner --list: what is built)
// IN_FILE (native endianness): int64 T, B, n, m, k, G, time_offset; uint32 dropout_key, dropout_threshold;
// float dropout_scale; uint32 zoneout_key, zoneout_threshold; then float32 x [T][B][n],
// history [max(k-1,1)][B][n], weights [G][k][n][m], bias [G][m], c0 [B][m].
// OUT_FILE: float32 c [T][B][m] then h [T][B][m].
#include <HalideBuffer.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "opencl_registry.h"

namespace {
using Halide::Runtime::Buffer;

template <class T>
bool read_value(FILE *f, T &v) { return std::fread(&v, sizeof v, 1, f) == 1; }

bool read_floats(FILE *f, std::vector<float> &v, size_t count) {
    v.resize(count);
    return std::fread(v.data(), sizeof(float), count, f) == count;
}

int fail(const std::string &message) {
    std::fprintf(stderr, "qrnn_opencl_runner: error: %s\n", message.c_str());
    return 2;
}
}  // namespace

int main(int argc, char **argv) {
    if (argc == 2 && std::strcmp(argv[1], "--list") == 0) {
        for (const AotLayer &l : kAotLayers) std::printf("%s %s\n", l.schedule, l.pooling);
        return 0;
    }
    if (argc != 5) return fail("usage: qrnn_opencl_runner SCHEDULE POOLING IN_FILE OUT_FILE");
    const AotLayer *layer = nullptr;
    for (const AotLayer &l : kAotLayers)
        if (l.schedule == std::string(argv[1]) && l.pooling == std::string(argv[2])) layer = &l;
    if (!layer) return fail(std::string("no AOT layer for schedule '") + argv[1] + "' pooling '" + argv[2] + "'");

    FILE *in = std::fopen(argv[3], "rb");
    if (!in) return fail(std::string("cannot open ") + argv[3]);
    int64_t T, B, n, m, k, G, time_offset;
    uint32_t dropout_key, dropout_threshold, zoneout_key, zoneout_threshold;
    float dropout_scale;
    bool ok = read_value(in, T) && read_value(in, B) && read_value(in, n) && read_value(in, m) && read_value(in, k) &&
              read_value(in, G) && read_value(in, time_offset) && read_value(in, dropout_key) &&
              read_value(in, dropout_threshold) && read_value(in, dropout_scale) && read_value(in, zoneout_key) &&
              read_value(in, zoneout_threshold);
    const int64_t H = k > 1 ? k - 1 : 1;
    std::vector<float> x, history, weights, bias, c0;
    ok = ok && read_floats(in, x, T * B * n) && read_floats(in, history, H * B * n) &&
         read_floats(in, weights, G * k * n * m) && read_floats(in, bias, G * m) && read_floats(in, c0, B * m);
    std::fclose(in);
    if (!ok) return fail(std::string(argv[3]) + " is truncated or malformed");

    // Halide dimensions are the row-major ones reversed (core/layout.h).
    auto I = [](int64_t v) { return static_cast<int>(v); };
    Buffer<float> bx(x.data(), I(n), I(B), I(T)), bh(history.data(), I(n), I(B), I(H)),
        bw(weights.data(), I(m), I(n), I(k), I(G)), bb(bias.data(), I(m), I(G)), bc0(c0.data(), I(m), I(B));
    std::vector<float> c_out(T * B * m), h_out(T * B * m);
    Buffer<float> bc(c_out.data(), I(m), I(B), I(T)), bho(h_out.data(), I(m), I(B), I(T));
    for (Buffer<float> *b : {&bx, &bh, &bw, &bb, &bc0}) b->set_host_dirty();
    int err = layer->run(bx, bh, bw, bb, bc0, I(time_offset), dropout_key, dropout_threshold, dropout_scale,
                         zoneout_key, zoneout_threshold, bc, bho);
    if (err != 0) return fail("pipeline returned Halide error " + std::to_string(err));
    if (bc.copy_to_host() != 0 || bho.copy_to_host() != 0) return fail("copy from the OpenCL device failed");

    FILE *out = std::fopen(argv[4], "wb");
    if (!out) return fail(std::string("cannot write ") + argv[4]);
    ok = std::fwrite(c_out.data(), sizeof(float), c_out.size(), out) == c_out.size() &&
         std::fwrite(h_out.data(), sizeof(float), h_out.size(), out) == h_out.size();
    ok = (std::fclose(out) == 0) && ok;
    return ok ? 0 : fail(std::string("writing ") + argv[4] + " failed");
}
