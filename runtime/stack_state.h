// The state bookkeeping of a QRNN stack after one layer's call, shared by every loop over QRNN layers
// (nn::QrnnLayer, the double reference's stack_forward).
#pragma once
#include <algorithm>

#include "runtime/params.h"

namespace qrnn {

// After a layer ran over `input` [T][B][n] from state s, writing cell states c [T][B][m]: s.history becomes the
// last `history_rows` inputs (core/layout.h) and s.c the last cell state, also written to row `layer` of c_T
// [L][B][m] when c_T is given.
template <class T>
void advance_layer_state(LayerState<T> &s, const Tensor<T> &input, const Tensor<T> &c, int64_t history_rows,
                         Tensor<T> *c_T = nullptr, int64_t layer = 0) {
    s.history = next_history(s.history, input, history_rows);
    const size_t Bm = s.c.size();
    std::copy(c.data.end() - static_cast<std::ptrdiff_t>(Bm), c.data.end(), s.c.data.begin());
    if (c_T) std::copy(s.c.data.begin(), s.c.data.end(), c_T->data.begin() + static_cast<std::ptrdiff_t>(layer * Bm));
}

}  // namespace qrnn
