/*
 * Fuzz target: the command-line parser and the size list. The input is split
 * at NUL and newline bytes into at most 24 arguments; parsing must either
 * succeed with consistent parameters or fail with a one-line message, and
 * never crash, read out of bounds or loop.
 */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "options/params.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    char *text = malloc(size + 1);
    if (text == NULL)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    char *argv[26];
    int argc = 0;
    argv[argc++] = (char *)"nccl-collbench";
    char *p = text;
    while (argc < 25 && p <= text + size) {
        argv[argc++] = p;
        size_t len = strcspn(p, "\n");
        if (p + len >= text + size)
            break;
        p[len] = '\0';
        p += len + 1;
    }
    argv[argc] = NULL;

    cb_params params;
    char err[512];
    cb_params_defaults(&params);
    if (cb_params_parse(&params, argc, argv, err, sizeof err) == 0) {
        assert(params.sizes.min_bytes >= 1 && params.sizes.min_bytes <= params.sizes.max_bytes);
        assert(params.sizes.iters >= 1 && params.sizes.ncollectives >= 1 && params.sizes.ndtypes >= 1);
        assert((params.sizes.step_factor == 0) != (params.sizes.step_bytes == 0));
        uint64_t sizes[CB_MAX_SIZES];
        int n = cb_size_list(&params.sizes, sizes, CB_MAX_SIZES, err, sizeof err);
        assert(n == -1 || (n >= 1 && n <= CB_MAX_SIZES));
        for (int i = 1; i < n; i++)
            assert(sizes[i] > sizes[i - 1] && sizes[i] <= params.sizes.max_bytes);
    } else {
        assert(err[0] != '\0' && strchr(err, '\n') == NULL);
    }
    free(text);
    return 0;
}
