// Dense row-major host tensor (C order, last index fastest), used by the runtime and the reference.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <new>
#include <string>
#include <type_traits>
#include <vector>

namespace qrnn {

// Storage on 64-byte boundaries: a cache line, and the widest vector (AVX-512) a pipeline loads. Pipelines that
// read a tensor in place (e.g. a layer's weights) would otherwise split most vector loads over two lines:
// malloc gives 16 (the bidirectional layer's in-place weights read was ~10% slower than a copy at B=32 T=128).
template <class T>
struct CacheAlignedAllocator {
    using value_type = T;
    static constexpr std::align_val_t kAlign{64};
    CacheAlignedAllocator() = default;
    template <class U>
    CacheAlignedAllocator(const CacheAlignedAllocator<U> &) {}
    T *allocate(size_t n) { return static_cast<T *>(::operator new(n * sizeof(T), kAlign)); }
    void deallocate(T *p, size_t) { ::operator delete(p, kAlign); }
    template <class U>
    bool operator==(const CacheAlignedAllocator<U> &) const { return true; }
    template <class U>
    bool operator!=(const CacheAlignedAllocator<U> &) const { return false; }
};

template <class T>
using TensorData = std::vector<T, CacheAlignedAllocator<T>>;

// Element-wise equality with a plain std::vector (found by argument-dependent lookup through the allocator).
template <class T, class A, class = std::enable_if_t<!std::is_same_v<A, CacheAlignedAllocator<T>>>>
bool operator==(const TensorData<T> &a, const std::vector<T, A> &b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
}
template <class T, class A, class = std::enable_if_t<!std::is_same_v<A, CacheAlignedAllocator<T>>>>
bool operator==(const std::vector<T, A> &a, const TensorData<T> &b) {
    return b == a;
}

template <class T>
struct Tensor {
    std::vector<int64_t> shape;
    TensorData<T> data;

    Tensor() = default;
    explicit Tensor(std::vector<int64_t> dims, T fill = T()) : shape(std::move(dims)), data(count(shape), fill) {}

    static size_t count(const std::vector<int64_t> &dims) {
        size_t c = 1;
        for (auto d : dims) c *= static_cast<size_t>(d);
        return c;
    }
    int64_t dim(size_t i) const { return shape.at(i); }
    size_t size() const { return data.size(); }
    template <class... I>
    T &operator()(I... idx) { return data[offset({static_cast<int64_t>(idx)...})]; }
    template <class... I>
    const T &operator()(I... idx) const { return data[offset({static_cast<int64_t>(idx)...})]; }
    size_t offset(std::initializer_list<int64_t> idx) const {
        size_t o = 0, d = 0;
        for (auto i : idx) o = o * static_cast<size_t>(shape[d++]) + static_cast<size_t>(i);
        return o;
    }
    std::string shape_str() const {
        std::string s;
        for (auto d : shape) s += "[" + std::to_string(d) + "]";
        return s;
    }
};

template <class To, class From>
Tensor<To> convert(const Tensor<From> &src) {
    Tensor<To> dst;
    dst.shape = src.shape;
    dst.data.assign(src.data.begin(), src.data.end());
    return dst;
}

// t with the shape `dims`: reallocated (zeros) only when its shape differs, else left as it is (scratch
// buffers and outputs reused from call to call).
template <class T>
Tensor<T> &ensure_shape(Tensor<T> &t, const std::vector<int64_t> &dims) {
    if (t.shape != dims) t = Tensor<T>(dims);
    return t;
}

// Rows [first, first + count) of a tensor along its leading dimension.
template <class T>
Tensor<T> leading_rows(const Tensor<T> &src, int64_t first, int64_t count) {
    std::vector<int64_t> dims = src.shape;
    dims[0] = count;
    Tensor<T> dst(dims);
    size_t row = src.size() / static_cast<size_t>(src.shape[0]);
    std::copy(src.data.begin() + first * row, src.data.begin() + (first + count) * row, dst.data.begin());
    return dst;
}

// Row l along the leading dimension as a tensor of its own: [L][...] -> [...].
template <class T>
Tensor<T> leading_row(const Tensor<T> &src, int64_t l) {
    Tensor<T> one = leading_rows(src, l, 1);
    one.shape.erase(one.shape.begin());
    return one;
}

// Row l along the leading dimension set from a tensor of its own (the reverse of leading_row).
template <class T>
void set_leading_row(Tensor<T> &dst, int64_t l, const Tensor<T> &row) {
    std::copy(row.data.begin(), row.data.end(), dst.data.begin() + l * row.size());
}

// The window history after feeding x: the last `rows` steps of (history ++ x). history has >= rows rows
// (its valid part is its last `rows` rows); the result has max(rows, 1) rows, as the layout requires.
template <class T>
Tensor<T> next_history(const Tensor<T> &history, const Tensor<T> &x, int64_t rows) {
    std::vector<int64_t> dims = x.shape;
    dims[0] = rows > 0 ? rows : 1;
    Tensor<T> next(dims);
    size_t row = next.size() / static_cast<size_t>(dims[0]);
    int64_t T_len = x.shape[0], H = history.shape[0];
    for (int64_t r = 0; r < rows; r++) {
        int64_t t = T_len - rows + r;  // time relative to x; negative reads history
        const T *src = t >= 0 ? &x.data[t * row] : &history.data[(H + t) * row];
        std::copy(src, src + row, next.data.begin() + r * row);
    }
    return next;
}

}  // namespace qrnn
