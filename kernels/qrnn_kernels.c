/* The C interface of libqrnn_kernels (qrnn_kernels.h) over the generated multi-target functions
 * (kernels/generate_kernels.cpp): plain arrays in, Halide buffers to the kernels. */
#include "qrnn_kernels.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "HalideRuntime.h"
#include "qrnn_layer_f.h"
#include "qrnn_layer_fo.h"
#include "qrnn_layer_ifo.h"

typedef int (*layer_fn)(struct halide_buffer_t *, struct halide_buffer_t *, struct halide_buffer_t *,
                        struct halide_buffer_t *, struct halide_buffer_t *, int32_t, uint32_t, uint32_t, float,
                        uint32_t, uint32_t, struct halide_buffer_t *, struct halide_buffer_t *);

typedef struct {
    const char *name;
    int gates;
    layer_fn run;
} variant;
static const variant kVariants[] = {{"f", 2, qrnn_layer_f}, {"fo", 3, qrnn_layer_fo}, {"ifo", 4, qrnn_layer_ifo}};

/* The variant named `pooling`, or NULL. */
static const variant *find_variant(const char *pooling) {
    for (size_t i = 0; i < sizeof kVariants / sizeof kVariants[0]; i++)
        if (strcmp(kVariants[i].name, pooling) == 0) return &kVariants[i];
    return NULL;
}

static _Thread_local char error_message[1024];
enum { ISA_SSE41 = 0, ISA_AVX2 = 1, ISA_AVX512 = 2 };
static const char *const kIsaNames[] = {"sse41", "avx2", "avx512"};
static int isa_limit = ISA_AVX512;
static int isa_chosen = ISA_SSE41; /* the widest variant a dispatch chose (the SSE4.1 baseline is never asked) */
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void record_error(void *user_context, const char *message) {
    (void)user_context;
    snprintf(error_message, sizeof error_message, "%s", message);
}

static int has_feature(int count, const uint64_t *features, int feature) {
    return (feature >> 6) < count && ((features[feature >> 6] >> (feature & 63)) & 1);
}

/* The dispatch asks once per function, at its first call, whether each variant can run. */
static int limited_can_use(int count, const uint64_t *features) {
    const int isa = has_feature(count, features, halide_target_feature_avx512) ? ISA_AVX512
                    : has_feature(count, features, halide_target_feature_avx)  ? ISA_AVX2
                                                                               : ISA_SSE41;
    if (isa > isa_limit || !halide_default_can_use_target_features(count, features)) return 0;
    if (isa > isa_chosen) isa_chosen = isa;
    return 1;
}

static void init(void) {
    halide_set_error_handler(record_error);
    halide_set_custom_can_use_target_features(limited_can_use);
    const char *env = getenv("QRNN_KERNELS_ISA");
    if (env && *env && qrnn_kernels_limit_isa(env) != 0) fprintf(stderr, "qrnn_kernels: QRNN_KERNELS_ISA='%s' ignored\n", env);
}

int qrnn_kernels_limit_isa(const char *isa) {
    for (int i = ISA_SSE41; i <= ISA_AVX512; i++)
        if (strcmp(isa, kIsaNames[i]) == 0) {
            isa_limit = i;
            return 0;
        }
    return -1;
}

int qrnn_kernels_gate_count(const char *pooling) {
    const variant *v = find_variant(pooling);
    return v ? v->gates : 0;
}

const char *qrnn_kernels_error(void) { return error_message; }

const char *qrnn_kernels_isa(void) { return kIsaNames[isa_chosen]; }

/* A dense row-major array as a Halide buffer: extents innermost first. */
static void view(struct halide_buffer_t *b, halide_dimension_t *dims, const float *data, int rank, const int *extents) {
    memset(b, 0, sizeof *b);
    b->host = (uint8_t *)data;
    b->type.code = halide_type_float;
    b->type.bits = 32;
    b->type.lanes = 1;
    b->dimensions = rank;
    b->dim = dims;
    int stride = 1;
    for (int i = 0; i < rank; i++) {
        dims[i].min = 0;
        dims[i].extent = extents[i];
        dims[i].stride = stride;
        dims[i].flags = 0;
        stride *= extents[i];
    }
}

int qrnn_layer_forward(const char *pooling, qrnn_layer_shape s, const float *x, const float *history,
                       const float *weights, const float *bias, const float *c0, float *c, float *h) {
    pthread_once(&init_once, init);
    error_message[0] = 0;
    const variant *v = find_variant(pooling);
    const int G = v ? v->gates : 0;
    if (G == 0 || s.T < 1 || s.B < 1 || s.n < 1 || s.m < 1 || s.k < 1) {
        snprintf(error_message, sizeof error_message, "qrnn_layer_forward: %s (T %d, B %d, n %d, m %d, k %d)",
                 G == 0 ? "unknown pooling (f, fo, ifo)" : "sizes must be >= 1", s.T, s.B, s.n, s.m, s.k);
        return -1;
    }
    const int rows = s.k > 1 ? s.k - 1 : 1;
    float *zeros = NULL;
    if (!history || !c0) {
        const size_t count = (size_t)s.B * (size_t)(s.n > s.m ? s.n : s.m) * (size_t)rows;
        zeros = calloc(count, sizeof(float));
        if (!zeros) {
            snprintf(error_message, sizeof error_message, "qrnn_layer_forward: out of memory");
            return -1;
        }
    }
    struct halide_buffer_t bx, bhist, bw, bb, bc0, bc, bh;
    halide_dimension_t dx[3], dhist[3], dw[4], db[2], dc0[2], dc[3], dh[3];
    view(&bx, dx, x, 3, (int[]){s.n, s.B, s.T});
    view(&bhist, dhist, history ? history : zeros, 3, (int[]){s.n, s.B, rows});
    view(&bw, dw, weights, 4, (int[]){s.m, s.n, s.k, G});
    view(&bb, db, bias, 2, (int[]){s.m, G});
    view(&bc0, dc0, c0 ? c0 : zeros, 2, (int[]){s.m, s.B});
    view(&bc, dc, c, 3, (int[]){s.m, s.B, s.T});
    view(&bh, dh, h, 3, (int[]){s.m, s.B, s.T});
    const int result = v->run(&bx, &bhist, &bw, &bb, &bc0, 0, 0, 0, 1.0f, 0, 0, &bc, &bh);
    free(zeros);
    return result;
}
