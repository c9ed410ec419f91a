#include "core/chunked_scan.h"

#include "core/error.h"

namespace qrnn {
using namespace Halide;

namespace {
std::vector<Expr> gates_at(const ScanSource &s, const Expr &t) {
    std::vector<Expr> g;
    for (int i = 0; i < s.variant->gate_count(); i++) g.push_back(s.gates(s.h, s.b, t, i));
    return g;
}
}  // namespace

ScanSource scan_source(const LayerFuncs &L, const LayerInputs &in) {
    ScanSource s;
    s.gates = L.gates;
    s.c0 = Func(in.c0);
    s.T = L.T;
    s.variant = L.variant;
    s.h = L.h;
    s.b = L.b;
    s.t = L.t;
    return s;
}

SingleScan single_scan(const ScanSource &s) {
    SingleScan out;
    Var h = s.h, b = s.b, t = s.t;
    out.cell(h, b, t) = Tuple(undef<float>(), undef<float>());
    out.r = RDom(0, s.T, "single_r");
    Expr r = out.r.x;
    std::vector<Expr> g = gates_at(s, r);
    Recurrence<Expr> rec = s.variant->halide_recurrence(g);
    Expr prev = select(r == 0, s.c0(h, b), out.cell(h, b, max(r - 1, 0))[0]);
    Expr c_new = rec.a * prev + rec.b;
    out.cell(h, b, r) = Tuple(c_new, s.variant->halide_output(g, c_new));
    return out;
}

ChunkedScan chunked_scan(const ScanSource &s, int chunk) {
    if (chunk < 2) fail("chunked scan: chunk length must be >= 2 (got ", chunk, ")");
    ChunkedScan out;
    out.chunk = chunk;
    Var h = s.h, b = s.b, t = s.t, i = out.i, j = out.j;
    Expr chunks = (s.T + chunk - 1) / chunk;

    Recurrence<Expr> rec = s.variant->halide_recurrence(gates_at(s, t));
    out.coeffs(h, b, t) = Tuple(rec.a, rec.b);

    // Local scan of each chunk from c = 0; steps past T (tail chunk) are computed but never read.
    out.local(h, b, i, j) = Tuple(undef<float>(), undef<float>());
    out.local(h, b, 0, j) = Tuple(out.coeffs(h, b, j * chunk)[1], out.coeffs(h, b, j * chunk)[0]);
    out.local_r = RDom(1, chunk - 1, "local_r");
    Expr ri = out.local_r.x;
    Tuple ab = out.coeffs(h, b, j * chunk + ri);
    Tuple prev = out.local(h, b, ri - 1, j);
    out.local(h, b, ri, j) = Tuple(ab[0] * prev[0] + ab[1], ab[0] * prev[1]);

    // Carry: the state entering each chunk, serial over chunks only.
    out.carry(h, b, j) = undef<float>();
    out.carry(h, b, 0) = s.c0(h, b);
    out.carry_r = RDom(1, chunks - 1, "carry_r");
    Expr rj = out.carry_r.x;
    Tuple end = out.local(h, b, chunk - 1, rj - 1);
    out.carry(h, b, rj) = end[0] + end[1] * out.carry(h, b, rj - 1);

    // Fix-up.
    Tuple l = out.local(h, b, t % chunk, t / chunk);
    Expr c = l[0] + l[1] * out.carry(h, b, t / chunk);
    out.cell(h, b, t) = Tuple(c, s.variant->halide_output(gates_at(s, t), c));
    return out;
}

}  // namespace qrnn
