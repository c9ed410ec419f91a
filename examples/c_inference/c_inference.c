/* A QRNN stack's forward in a plain C program, with libqrnn_kernels (kernels/qrnn_kernels.h) and the HDF5 C
 * library only: loads the input and every layer's parameters and initial state from a dump written by
 * `qrnn run --dump FILE.h5` (docs/run.md, "Dump file"), runs the layers one after the other, and compares the
 * output and final cell states with the dump's.
 *   c_inference DUMP.h5 [TOLERANCE]     exit 0 when the largest relative error is within TOLERANCE (1e-4) */
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qrnn_kernels.h"

typedef struct {
    int rank;
    int dims[4];
    float *data;
} tensor;

static void die(const char *file, const char *what) {
    fprintf(stderr, "c_inference: %s: %s\n", file, what);
    exit(2);
}

static int exists(hid_t f, const char *path) { return H5Lexists(f, path, H5P_DEFAULT) > 0; }

static tensor read_tensor(hid_t f, const char *file, const char *path) {
    tensor t = {0, {1, 1, 1, 1}, NULL};
    hid_t ds = exists(f, path) ? H5Dopen2(f, path, H5P_DEFAULT) : -1;
    if (ds < 0) die(file, path);
    hid_t space = H5Dget_space(ds);
    hsize_t dims[4] = {1, 1, 1, 1};
    t.rank = H5Sget_simple_extent_ndims(space);
    if (t.rank < 1 || t.rank > 4) die(file, path);
    H5Sget_simple_extent_dims(space, dims, NULL);
    size_t count = 1;
    for (int i = 0; i < t.rank; i++) t.dims[i] = (int)dims[i], count *= dims[i];
    t.data = malloc(count * sizeof(float));
    if (!t.data || H5Dread(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, t.data) < 0) die(file, path);
    H5Sclose(space);
    H5Dclose(ds);
    return t;
}

/* The root attribute `pooling` (a string, fixed-size or variable-length). */
static void read_pooling(hid_t f, const char *file, char *out, size_t size) {
    hid_t attr = H5Aopen(f, "pooling", H5P_DEFAULT);
    if (attr < 0) die(file, "no root attribute 'pooling'");
    hid_t stored = H5Aget_type(attr);
    if (H5Tget_class(stored) != H5T_STRING) die(file, "attribute 'pooling' is not a string");
    hid_t type = H5Tcopy(H5T_C_S1);
    if (H5Tis_variable_str(stored) > 0) {
        H5Tset_size(type, H5T_VARIABLE);
        char *value = NULL;
        if (H5Aread(attr, type, &value) < 0 || !value) die(file, "attribute 'pooling' cannot be read");
        snprintf(out, size, "%s", value);
        H5free_memory(value);
    } else {
        const size_t length = H5Tget_size(stored);
        if (length + 1 > size) die(file, "attribute 'pooling' is too long");
        H5Tset_size(type, length + 1);  /* room for the terminating zero */
        memset(out, 0, size);
        if (H5Aread(attr, type, out) < 0) die(file, "attribute 'pooling' cannot be read");
    }
    H5Tclose(type);
    H5Tclose(stored);
    H5Aclose(attr);
}

static double max_relative_error(const float *got, const float *want, size_t count) {
    double err = 0, scale = 1e-6;
    for (size_t i = 0; i < count; i++) scale = fmax(scale, fabs(want[i]));
    for (size_t i = 0; i < count; i++) err = fmax(err, fabs((double)got[i] - want[i]) / scale);
    return err;
}

int main(int argc, char **argv) {
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: c_inference DUMP.h5 [TOLERANCE]\n");
        return 2;
    }
    const char *file = argv[1];
    const double tolerance = argc == 3 ? atof(argv[2]) : 1e-4;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    hid_t f = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) die(file, "cannot open as HDF5");
    char pooling[16];
    read_pooling(f, file, pooling, sizeof pooling);
    tensor x = read_tensor(f, file, "/input/x"), want_h = read_tensor(f, file, "/output/h");
    tensor want_c = read_tensor(f, file, "/output/c_T");
    const int T = x.dims[0], B = x.dims[1], L = want_c.dims[0];
    float *input = x.data, *h = NULL, *c = NULL;
    int n = x.dims[2], m = 0;
    double c_err = 0;
    for (int l = 0; l < L; l++) {
        char path[64];
        snprintf(path, sizeof path, "/layer_%d/weights", l);
        tensor w = read_tensor(f, file, path);
        snprintf(path, sizeof path, "/layer_%d/bias", l);
        tensor b = read_tensor(f, file, path);
        snprintf(path, sizeof path, "/layer_%d/c0", l);
        tensor c0 = read_tensor(f, file, path);
        snprintf(path, sizeof path, "/layer_%d/history", l);
        tensor history = exists(f, path) ? read_tensor(f, file, path) : (tensor){0, {0}, NULL};
        const qrnn_layer_shape shape = {T, B, n, w.dims[3], w.dims[1]};
        m = shape.m;
        h = malloc((size_t)T * B * m * sizeof(float));
        c = malloc((size_t)T * B * m * sizeof(float));
        if (!h || !c) die(file, "out of memory");
        if (qrnn_layer_forward(pooling, shape, input, history.data, w.data, b.data, c0.data, c, h) != 0)
            die(file, qrnn_kernels_error());
        c_err = fmax(c_err, max_relative_error(c + (size_t)(T - 1) * B * m, want_c.data + (size_t)l * B * m, (size_t)B * m));
        if (input != x.data) free(input);
        free(c), free(w.data), free(b.data), free(c0.data), free(history.data);
        input = h, n = m;
    }
    const double h_err = max_relative_error(h, want_h.data, (size_t)T * B * m);
    printf("c_inference: %s: pooling %s, %d layers, T %d, B %d, m %d, isa %s: max relative error h %.2e, c_T %.2e\n",
           file, pooling, L, T, B, m, qrnn_kernels_isa(), h_err, c_err);
    H5Fclose(f);
    return h_err <= tolerance && c_err <= tolerance ? 0 : 1;
}
