// Per-model options, made from the flat ModelConfig (the CLI- and sweep-facing config that holds every option of
// every model): a model's layers and plugins read their own struct, not fields of other models. Shape options
// of a run (batch, seq) are not here: layers take them from their inputs.
#pragma once
#include <cstdint>
#include <string>

#include "core/precision.h"
#include "runtime/config.h"
#include "runtime/target.h"

namespace qrnn {

// The widths of a stack: layer l reads `input` when l == 0, else the previous layer's `hidden`.
struct StackWidths {
    int64_t input = 320, hidden = 320, layers = 1;
    int64_t layer_input(int64_t layer) const { return layer == 0 ? input : hidden; }
};

// What a QRNN layer's zoneout and dropout masks depend on (layer_masks, runtime/params.h).
struct MaskOptions {
    bool stochastic = false;  // zoneout and dropout masks on
    uint64_t mask_draw = 0;   // ModelConfig::mask_draw
    double zoneout = 0.0, dropout = 0.0;
    uint32_t seed = 1;  // initialisation and masks
};

struct QrnnOptions : StackWidths, MaskOptions {
    const PoolingVariant *pooling = nullptr;  // the config's, resolved (ModelConfig::pooling_variant)
    std::string schedule = "tuned";
    Halide::Target target = Halide::get_jit_target_from_environment();  // the config's, resolved (parse_target)
    int64_t window = 2;
    Precision precision = Precision::f32;
    int64_t history_rows() const { return window - 1; }
};

struct LstmOptions : StackWidths {
    uint32_t seed = 1;
};

struct CnnOptions : StackWidths {
    int64_t window = 2;
    uint32_t seed = 1;
};

inline StackWidths stack_widths(const ModelConfig &cfg) { return {cfg.input, cfg.hidden, cfg.layers}; }

inline MaskOptions mask_options(const ModelConfig &cfg) {
    return {cfg.stochastic, cfg.mask_draw, cfg.zoneout, cfg.dropout, cfg.seed};
}

// Resolves the config's pooling and target: made where a layer is built, not per call.
inline QrnnOptions qrnn_options(const ModelConfig &cfg) {
    QrnnOptions o;
    static_cast<StackWidths &>(o) = stack_widths(cfg);
    static_cast<MaskOptions &>(o) = mask_options(cfg);
    o.pooling = &cfg.pooling_variant(), o.schedule = cfg.schedule, o.target = parse_target(cfg.target);
    o.window = cfg.window;
    o.precision = parse_precision(cfg.precision);
    return o;
}

inline LstmOptions lstm_options(const ModelConfig &cfg) {
    LstmOptions o;
    static_cast<StackWidths &>(o) = stack_widths(cfg);
    o.seed = cfg.seed;
    return o;
}

inline CnnOptions cnn_options(const ModelConfig &cfg) {
    CnnOptions o;
    static_cast<StackWidths &>(o) = stack_widths(cfg);
    o.window = cfg.window, o.seed = cfg.seed;
    return o;
}

}  // namespace qrnn
