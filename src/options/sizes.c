/* The sweep's size list from -b, -e, -f and -i, whether it holds anything
 * to measure, and whether its buffers have a byte count at all. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectives/collective.h"
#include "common/format.h"
#include "options/params.h"
#include "options/params_parse.h"
#include "verify/pattern.h"

int cb_size_list(const cb_sweep_params *p, uint64_t *sizes, int max_sizes, char *err,
                 size_t err_len)
{
    int n = 0;
    uint64_t size = p->min_bytes;
    for (;;) {
        if (n == max_sizes) {
            snprintf(err, err_len, "-b/-e/-f/-i: the sweep would have more than %d sizes; "
                     "use a larger step or a narrower range", max_sizes);
            return -1;
        }
        if (sizes != NULL)
            sizes[n] = size;
        n++;
        uint64_t next;
        if (p->step_bytes != 0) {
            if (size > UINT64_MAX - p->step_bytes)
                break;
            next = size + p->step_bytes;
        } else {
            if (size > UINT64_MAX / p->step_factor)
                break;
            next = size * p->step_factor;
        }
        if (next > p->max_bytes)
            break;
        size = next;
    }
    return n;
}

/* a + b and a * b, or -1 when the result would not fit in 64 bits. */
static int add_checked(uint64_t a, uint64_t b, uint64_t *out)
{
    if (a > UINT64_MAX - b)
        return -1;
    *out = a + b;
    return 0;
}

static int mul_checked(uint64_t a, uint64_t b, uint64_t *out)
{
    if (b != 0 && a > UINT64_MAX / b)
        return -1;
    *out = a * b;
    return 0;
}

/* Whether the most a rank holds for a size of `largest` bytes (the engine's
 * footprint, memory.c: send and receive buffers each -u elements longer,
 * --layout col's work buffers, a host staging copy, a check tile) has a
 * 64-bit byte count, SIZE_MAX on the hosts we build for; else a message
 * naming the size and the -u that make it overflow. */
static int footprint_fits(const cb_params *p, uint64_t largest, char *err, size_t err_len)
{
    size_t widest = 1;
    const char *widest_name = cb_dtype_info_of(p->sizes.dtypes[0])->name;
    for (int t = 0; t < p->sizes.ndtypes; t++)
        if (cb_dtype_info_of(p->sizes.dtypes[t])->size > widest) {
            widest = cb_dtype_info_of(p->sizes.dtypes[t])->size;
            widest_name = cb_dtype_info_of(p->sizes.dtypes[t])->name;
        }
    int col = 0, work = 0;
    for (int l = 0; l < p->sizes.nlayouts; l++)
        col |= p->sizes.layouts[l] == CB_LAYOUT_COL;
    for (int c = 0; col && c < p->sizes.ncollectives; c++)
        if (p->sizes.collectives[c]->column_work > work)
            work = p->sizes.collectives[c]->column_work;
    uint64_t pad = 0, buffer = 0, buffers = 0, works = 0, total = 0;
    int ok = mul_checked((uint64_t)p->sizes.unalign, widest, &pad) == 0 &&
             add_checked(largest, pad, &buffer) == 0 && mul_checked(buffer, 2, &buffers) == 0 &&
             mul_checked(largest, (uint64_t)work, &works) == 0 &&
             add_checked(buffers, works, &total) == 0 &&
             add_checked(total, largest, &total) == 0 &&          /* host staging */
             add_checked(total, CB_TILE_MAX_BYTES, &total) == 0 && /* check tile */
             total <= SIZE_MAX;
    if (ok)
        return 1;
    char extra[96] = "";
    if (p->sizes.unalign > 0)
        snprintf(extra, sizeof extra, " with -u %d (%s elements)", p->sizes.unalign, widest_name);
    if (work > 0)
        snprintf(extra + strlen(extra), sizeof extra - strlen(extra), "%s --layout col",
                 p->sizes.unalign > 0 ? " and" : " with");
    snprintf(err, err_len, "-b/-e: the size %llu bytes%s needs more than 2^64-1 bytes of "
             "buffers per rank, which no byte count holds; lower -e",
             (unsigned long long)largest, extra);
    return 0;
}

int cb_params_check_sizes(const cb_params *p, char *err, size_t err_len)
{
    int moves_data = 0;
    for (int i = 0; i < p->sizes.ncollectives; i++)
        moves_data |= (p->sizes.collectives[i]->flags & CB_COLL_NO_DATA) == 0;
    uint64_t *sizes = malloc(CB_MAX_SIZES * sizeof *sizes);
    if (sizes == NULL) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    int n = cb_size_list(&p->sizes, sizes, CB_MAX_SIZES, err, err_len);
    uint64_t largest = n > 0 ? sizes[n - 1] : 0;
    int prom_kept = n < 0 || cb_params_prom_path(p) == NULL || p->out.nprom_sizes == 0 ? 1 : 0;
    for (int i = 0; i < n && !prom_kept; i++)
        for (int k = 0; k < p->out.nprom_sizes; k++)
            prom_kept |= sizes[i] == p->out.prom_sizes[k];
    free(sizes);
    if (!prom_kept) {
        /* A file with no bandwidth series would look like a healthy scrape. */
        char given[CB_MAX_PROM_SIZES * 21], min_text[32], max_text[32];
        cb_agree_prom_sizes(p, given, sizeof given);
        cb_format_bytes(p->sizes.min_bytes, min_text, sizeof min_text);
        cb_format_bytes(p->sizes.max_bytes, max_text, sizeof max_text);
        snprintf(err, err_len, "--prom-sizes %s: no size of the sweep (%s to %s bytes, %s "
                 "%" PRIu64 ") is among them, so --prom would hold no bandwidth series; give "
                 "sizes of the sweep, largest or all", given, min_text, max_text,
                 p->sizes.step_bytes != 0 ? "step" : "factor",
                 p->sizes.step_bytes != 0 ? p->sizes.step_bytes : p->sizes.step_factor);
        return -1;
    }
    if (n < 0 || !moves_data)
        return n < 0 ? -1 : 0;
    /* The type with the smallest element is the last hope of a row. */
    const cb_dtype_info *smallest = cb_dtype_info_of(p->sizes.dtypes[0]);
    for (int t = 1; t < p->sizes.ndtypes; t++)
        if (cb_dtype_info_of(p->sizes.dtypes[t])->size < smallest->size)
            smallest = cb_dtype_info_of(p->sizes.dtypes[t]);
    if (largest >= smallest->size)
        return footprint_fits(p, largest, err, err_len) ? 0 : -1;
    char min_text[32], max_text[32];
    cb_format_bytes(p->sizes.min_bytes, min_text, sizeof min_text);
    cb_format_bytes(p->sizes.max_bytes, max_text, sizeof max_text);
    snprintf(err, err_len, "-b/-e: no size from %s to %s bytes holds a whole %s element (%zu "
             "bytes), so nothing would be measured; raise -e to at least %zu", min_text,
             max_text, smallest->name, smallest->size, smallest->size);
    return -1;
}
