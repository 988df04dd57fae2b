// SPDX-License-Identifier: MIT
// The reference for bench_models.py and binding_cost.py: the same extract loop as the
// MicroPython and CPython runs, in C against the very libncnn.a the firmware links
// (ncnn's C API).
//
//   native_bench PARAM MODEL|- IN OUT[,OUT...] W H C THREADS RUNS
//
// MODEL "-" loads all-zero weights, as ncnn's benchncnn does. Each extract takes every
// OUT. Prints one line: the milliseconds of each of RUNS timed extracts, after 3 warm-ups.
//
//   native_bench --untimed-extracts PARAM MODEL|- IN OUT[,OUT...] W H C THREADS RUNS
//
// The same RUNS extracts with no warm-up and nothing printed (for callgrind: bench_models.py
// counts the instructions of two such runs).
//
//   native_bench --untimed PARAM IN OUT W RUNS
//
// RUNS extracts of a 1-D input of W floats, one thread, nothing timed (for callgrind:
// binding_cost.py counts the instructions of two such runs). The param may use layers of
// type "Nop": a custom layer registered through ncnn's C API whose forward_inplace does
// nothing, the C twin of a Python Layer subclass's no-op forward_inplace.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ncnn/c_api.h>

static size_t zeros_read(ncnn_datareader_t dr, void *buf, size_t size) {
    (void)dr;
    memset(buf, 0, size);
    return size;
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int nop_forward_inplace(ncnn_layer_t layer, ncnn_mat_t blob, const ncnn_option_t opt) {
    (void)layer;
    (void)blob;
    (void)opt;
    return 0;
}

static ncnn_layer_t nop_create(void *userdata) {
    (void)userdata;
    ncnn_layer_t layer = ncnn_layer_create();
    ncnn_layer_set_one_blob_only(layer, 1);
    ncnn_layer_set_support_inplace(layer, 1);
    layer->forward_inplace_1 = nop_forward_inplace;
    return layer;
}

static void nop_destroy(ncnn_layer_t layer, void *userdata) {
    (void)userdata;
    ncnn_layer_destroy(layer);
}

static int untimed(int argc, char **argv) {
    if (argc != 7) {
        fprintf(stderr, "usage: native_bench --untimed PARAM IN OUT W RUNS\n");
        return 2;
    }
    int w = atoi(argv[5]), runs = atoi(argv[6]);
    ncnn_net_t net = ncnn_net_create();
    ncnn_option_t opt = ncnn_option_create();
    ncnn_option_set_num_threads(opt, 1);
    ncnn_net_set_option(net, opt);
    ncnn_net_register_custom_layer_by_type(net, "Nop", nop_create, nop_destroy, NULL);
    ncnn_datareader_t dr = ncnn_datareader_create();
    dr->read = zeros_read;
    if (ncnn_net_load_param(net, argv[2]) != 0 || ncnn_net_load_model_datareader(net, dr) != 0) {
        fprintf(stderr, "loading failed\n");
        return 1;
    }
    ncnn_datareader_destroy(dr);
    ncnn_mat_t in = ncnn_mat_create_1d(w, NULL);
    ncnn_mat_fill_float(in, 0.5f);
    for (int i = 0; i < runs; i++) {
        ncnn_extractor_t ex = ncnn_extractor_create(net);
        ncnn_extractor_input(ex, argv[3], in);
        ncnn_mat_t out = NULL;
        ncnn_extractor_extract(ex, argv[4], &out);
        ncnn_mat_destroy(out);
        ncnn_extractor_destroy(ex);
    }
    ncnn_mat_destroy(in);
    ncnn_net_destroy(net);
    ncnn_option_destroy(opt);
    return 0;
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--untimed") == 0) {
        return untimed(argc, argv);
    }
    int warmups = 3;
    if (argc > 1 && strcmp(argv[1], "--untimed-extracts") == 0) {
        warmups = 0;
        argv++;
        argc--;
    }
    if (argc != 10) {
        fprintf(stderr, "usage: native_bench PARAM MODEL|- IN OUT W H C THREADS RUNS\n");
        return 2;
    }
    int w = atoi(argv[5]), h = atoi(argv[6]), c = atoi(argv[7]), threads = atoi(argv[8]), runs = atoi(argv[9]);
    ncnn_net_t net = ncnn_net_create();
    ncnn_option_t opt = ncnn_option_create();
    ncnn_option_set_num_threads(opt, threads);
    ncnn_net_set_option(net, opt);
    if (ncnn_net_load_param(net, argv[1]) != 0) {
        fprintf(stderr, "load_param failed\n");
        return 1;
    }
    int ret;
    if (strcmp(argv[2], "-") == 0) {
        ncnn_datareader_t dr = ncnn_datareader_create();
        dr->read = zeros_read;
        ret = ncnn_net_load_model_datareader(net, dr);
        ncnn_datareader_destroy(dr);
    } else {
        ret = ncnn_net_load_model(net, argv[2]);
    }
    if (ret != 0) {
        fprintf(stderr, "load_model failed\n");
        return 1;
    }
    ncnn_mat_t in = ncnn_mat_create_3d(w, h, c, NULL);
    ncnn_mat_fill_float(in, 0.5f);
    // The outputs: argv[4] split at its commas, in place.
    char *outs[64];
    int n_outs = 0;
    for (char *name = strtok(argv[4], ","); name != NULL && n_outs < 64; name = strtok(NULL, ",")) {
        outs[n_outs++] = name;
    }
    double *times = malloc(sizeof(double) * (size_t)runs);
    for (int i = -warmups; i < runs; i++) {
        double t0 = now_ms();
        ncnn_extractor_t ex = ncnn_extractor_create(net);
        ncnn_extractor_input(ex, argv[3], in);
        for (int k = 0; k < n_outs; k++) {
            ncnn_mat_t out = NULL;
            ncnn_extractor_extract(ex, outs[k], &out);
            ncnn_mat_destroy(out);
        }
        ncnn_extractor_destroy(ex);
        if (i >= 0) {
            times[i] = now_ms() - t0;
        }
    }
    for (int i = 0; i < runs && warmups > 0; i++) {
        printf("%.4f%c", times[i], i + 1 < runs ? ' ' : '\n');
    }
    free(times);
    ncnn_mat_destroy(in);
    ncnn_option_destroy(opt);
    ncnn_net_destroy(net);
    return 0;
}
