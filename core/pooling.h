// Pooling variants: the recurrence c_t = a_t * c_{t-1} + b_t and output h_t = out(gates_t, c_t), each given
// twice: as Halide Exprs (the algorithm) and in double (the reference), written independently.
#pragma once
#include <Halide.h>
#include <array>
#include <functional>
#include <string>
#include <vector>

namespace qrnn {

template <class E>
struct Recurrence {
    E a, b;  // c_t = a * c_{t-1} + b
};

// Partial derivatives of one step, for the backward pass: of a and b (the recurrence) and of out(gates, c)
// with respect to gate i (the variant's order; entries of absent gates, and ones left unset, are 0) and of
// out with respect to c. E is double or Halide::Expr (unset Exprs count as 0: see complete_partials).
template <class E>
struct PoolingPartials {
    std::array<E, 4> da{}, db{}, dout{};
    E dout_dc{};
};

struct PoolingVariant {
    std::string name;
    std::string description;
    std::string gates;  // gate letters in weight order; starts with "zf", letters from "zfoi"
    int flops_per_step = 0;  // multiply/add count of recurrence + output per element, for GFLOP/s
    std::function<Recurrence<Halide::Expr>(const std::vector<Halide::Expr> &gates)> halide_recurrence;
    std::function<Halide::Expr(const std::vector<Halide::Expr> &gates, Halide::Expr c)> halide_output;
    std::function<Recurrence<double>(const double *gates)> reference_recurrence;
    std::function<double(const double *gates, double c)> reference_output;
    // Backward (optional: a variant without it runs forward only and is refused for training).
    std::function<PoolingPartials<Halide::Expr>(const std::vector<Halide::Expr> &gates, Halide::Expr c)> halide_partials;
    std::function<PoolingPartials<double>(const double *gates, double c)> reference_partials;
    int backward_flops_per_step = 0;  // multiply/adds of the backward step per element, for GFLOP/s

    int gate_count() const { return static_cast<int>(gates.size()); }
    int gate_index(char letter) const;  // -1 if the variant has no such gate
    bool has_backward() const { return halide_partials && reference_partials; }
    // Throws qrnn::Error "pooling variant 'X' has no backward pass: it cannot be trained (...)" unless it has one.
    void require_backward() const;
};

// The Halide partials with every unset entry (of the variant's gates) replaced by 0.
PoolingPartials<Halide::Expr> complete_partials(const PoolingVariant &variant, const std::vector<Halide::Expr> &gates,
                                                const Halide::Expr &c);

// Registry of pooling variants, keyed by name. register_pooling rejects duplicates and malformed variants.
void register_pooling(PoolingVariant variant);
const PoolingVariant &find_pooling(const std::string &name);  // throws qrnn::Error naming the known ones
std::vector<std::string> pooling_names();
std::vector<const PoolingVariant *> all_poolings();  // every registered variant, by name

}  // namespace qrnn
