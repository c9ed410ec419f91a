/* libqrnn_kernels: the QRNN layer's forward (pooling f, fo or ifo, the default "tuned" CPU schedule), compiled
 * ahead of time for x86-64 AVX-512, AVX2 and SSE4.1; each call runs the widest variant the CPU supports. A C
 * application links libqrnn_kernels.a (plus -lpthread -ldl -lm) and needs neither libHalide nor the rest of
 * the framework. Example: examples/c_inference/.
 *
 * Tensors are dense row-major float32 arrays (core/layout.h):
 *   x [T][B][n], history [max(k-1,1)][B][n] (the k-1 inputs before x, oldest first; NULL: zeros),
 *   weights [G][k][n][m] (gates in the order z, f, o, i; G = 2, 3, 4 for f, fo, ifo), bias [G][m],
 *   c0 [B][m] (NULL: zeros); written: c [T][B][m] (cell states) and h [T][B][m] (outputs).
 * Inference only: no dropout or zoneout. Threads: HL_NUM_THREADS, else one per core. */
#ifndef QRNN_KERNELS_H
#define QRNN_KERNELS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct qrnn_layer_shape {
    int T, B, n, m, k;
} qrnn_layer_shape;

/* Gates of a pooling variant ("f": 2, "fo": 3, "ifo": 4); 0 for an unknown name. */
int qrnn_kernels_gate_count(const char *pooling);

/* One layer forward. Returns 0, or non-zero with qrnn_kernels_error() saying why. */
int qrnn_layer_forward(const char *pooling, qrnn_layer_shape shape, const float *x, const float *history,
                       const float *weights, const float *bias, const float *c0, float *c, float *h);

/* The message of the last failed call on this thread ("" if none). */
const char *qrnn_kernels_error(void);

/* Caps the instruction set the calls may use: "avx512" (no cap), "avx2" or "sse41"; for tests and for timing
 * one variant. Effective before the first layer call only (each variant is chosen once); the environment
 * variable QRNN_KERNELS_ISA sets it then too. Returns 0, or -1 for an unknown name. */
int qrnn_kernels_limit_isa(const char *isa);

/* The widest instruction set the layer calls so far run with: "avx512", "avx2" or "sse41". */
const char *qrnn_kernels_isa(void);

#ifdef __cplusplus
}
#endif
#endif
