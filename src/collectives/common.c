/* Checks and sizes shared by the collectives. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "collectives/collective.h"

/* Record a wrong element; returns 1 to add to the count. */
static size_t record(size_t *wrong, cb_mismatch *first, size_t index, double expected,
                     double actual)
{
    if (*wrong == 0) {
        first->index = index;
        first->expected = expected;
        first->actual = actual;
    }
    return 1;
}

/* Whether element index of data holds expected exactly, as the type's bytes:
 * -0 is not 0, and NaN is never right. */
static int same_bits(const cb_dtype_info *info, const void *data, size_t index,
                     double expected)
{
    unsigned char want[sizeof(double)];
    info->store(want, 0, expected);
    return memcmp((const unsigned char *)data + index * info->size, want, info->size) == 0;
}

/* The definition: element by element. data[k] is element first_index + k,
 * reported as index_base + k. */
static size_t check_reduced_slow(const cb_pattern *pat, const void *data, size_t first_index,
                                 size_t count, size_t index_base, size_t *wrong,
                                 cb_mismatch *first)
{
    const cb_dtype_info *info = cb_dtype_info_of(pat->dtype);
    size_t found = 0;
    for (size_t k = 0; k < count; k++) {
        double expected = cb_pattern_reduced(pat, first_index + k);
        double actual = info->load(data, k);
        double tolerance = cb_pattern_tolerance(pat, first_index + k);
        /* Exact results compare as bytes; rounded ones (a premultiplied
         * float avg) within the tolerance, written so that NaN never passes. */
        int right = tolerance == 0.0 ? same_bits(info, data, k, expected)
                                     : fabs(actual - expected) <= tolerance;
        if (!right) {
            found += record(wrong, first, index_base + k, expected, actual);
            (*wrong)++;
        }
    }
    return found;
}

size_t cb_check_reduced_at(const cb_pattern *pat, const void *data, size_t first_index,
                           size_t count, cb_mismatch *first)
{
    size_t wrong = 0, period = 0;
    /* Exact comparison only: a tolerance needs the per-element test. */
    unsigned char *tile = cb_pattern_tolerance(pat, first_index) == 0.0
                              ? cb_pattern_tile(pat, -1, first_index, count, &period)
                              : NULL;
    if (tile == NULL) {
        check_reduced_slow(pat, data, first_index, count, 0, &wrong, first);
        return wrong;
    }
    /* Expected values are exact integers, never NaN: equal bytes pass. A
     * period that differs is judged element by element (also as bytes), so
     * the count and the first index are the definition's. */
    size_t elem = cb_dtype_info_of(pat->dtype)->size;
    const unsigned char *bytes = data;
    for (size_t done = 0; done < count; done += period) {
        size_t n = count - done < period ? count - done : period;
        if (memcmp(bytes + done * elem, tile, n * elem) != 0)
            check_reduced_slow(pat, bytes + done * elem, first_index + done, n, done, &wrong,
                               first);
    }
    free(tile);
    return wrong;
}

size_t cb_check_reduced(const cb_pattern *pat, const void *data, size_t count,
                        cb_mismatch *first)
{
    return cb_check_reduced_at(pat, data, 0, count, first);
}

size_t cb_check_blocks(const cb_pattern *pat, const void *data, size_t nblocks, size_t count,
                       cb_block_source src, cb_mismatch *first)
{
    const cb_dtype_info *info = cb_dtype_info_of(pat->dtype);
    size_t wrong = 0;
    for (size_t k = 0; k < nblocks; k++) {
        int rank = src.rank + (int)k * src.rank_step;
        size_t block = src.block + k * src.block_step;
        for (size_t j = 0; j < count; j++) {
            size_t index = k * count + j;
            double expected = cb_pattern_block(pat, rank, block, j);
            double actual = info->load(data, index);
            if (!same_bits(info, data, index, expected))
                wrong += record(&wrong, first, index, expected, actual);
        }
    }
    return wrong;
}

void cb_fill_whole(const cb_pattern *pat, int rank, const cb_call *call, void *send)
{
    cb_pattern_fill(pat, rank, send, call->layout.send_count);
}

size_t cb_check_allreduced(const cb_pattern *pat, int rank, const cb_call *call,
                           const void *recv, cb_mismatch *first)
{
    (void)rank;
    return cb_check_reduced(pat, recv, call->layout.recv_count, first);
}

void cb_fill_block(const cb_pattern *pat, int rank, const cb_call *call, void *send)
{
    cb_pattern_fill_blocks(pat, rank, send, 1, call->layout.count);
}

void cb_fill_blocks(const cb_pattern *pat, int rank, const cb_call *call, void *send)
{
    cb_pattern_fill_blocks(pat, rank, send, (size_t)pat->nranks, call->layout.count);
}

size_t cb_check_gathered(const cb_pattern *pat, const cb_call *call, const void *recv,
                         cb_mismatch *first)
{
    const cb_layout *l = &call->layout;
    if (l->rows != 0) {
        /* Slice k, row i is row i of rank k's rows x width block. */
        cb_column_source cols = {0, 1, 0, l->width, l->count};
        return cb_check_columns(pat, recv, l, (size_t)pat->nranks, cols, first);
    }
    /* Block k is rank k's block 0. */
    cb_block_source src = {0, 1, 0, 0};
    return cb_check_blocks(pat, recv, (size_t)pat->nranks, l->count, src, first);
}

size_t cb_layout_bytes(const cb_layout *layout, size_t elem_size)
{
    size_t larger = layout->send_count > layout->recv_count ? layout->send_count
                                                            : layout->recv_count;
    return larger * elem_size;
}

int cb_layout_whole(size_t bytes, size_t elem_size, int nranks, cb_layout *out)
{
    (void)nranks;
    size_t count = bytes / elem_size;
    if (count == 0)
        return -1;
    *out = (cb_layout){.count = count, .send_count = count, .recv_count = count};
    return 0;
}

/* Gathers and scatters: size / n whole elements a block; the side that
 * holds all n blocks is the gathered output or the scattered input, and in
 * place the rank's own block of it is the other side. */
static int layout_blocks(size_t bytes, size_t elem_size, int nranks, int gathered,
                         cb_layout *out)
{
    size_t count = bytes / elem_size / (size_t)nranks, all = count * (size_t)nranks;
    if (count == 0)
        return -1;
    *out = (cb_layout){.count = count,
                       .send_count = gathered ? count : all,
                       .recv_count = gathered ? all : count,
                       .inplace_send_stride = gathered ? count : 0,
                       .inplace_recv_stride = gathered ? 0 : count};
    return 0;
}

int cb_layout_gathered(size_t bytes, size_t elem_size, int nranks, cb_layout *out)
{
    return layout_blocks(bytes, elem_size, nranks, 1, out);
}

int cb_layout_scattered(size_t bytes, size_t elem_size, int nranks, cb_layout *out)
{
    return layout_blocks(bytes, elem_size, nranks, 0, out);
}

/* Each rank sends and receives 2(n-1)/n of the data in a ring all-reduce. */
double cb_busbw_allreduce(int nranks)
{
    return 2.0 * (nranks - 1) / nranks;
}

/* A pipelined broadcast or reduce, or one send, moves the vector over every
 * link once. */
double cb_busbw_one(int nranks)
{
    (void)nranks;
    return 1.0;
}

/* Each rank's link carries all but its own share of the data. */
double cb_busbw_share(int nranks)
{
    return (double)(nranks - 1) / nranks;
}

void cb_layout_set_columns(cb_layout *layout, int nranks, int work_buffers)
{
    size_t count = layout->count, rows = 1;
    for (size_t r = 1; r <= count / r; r++)
        if (count % r == 0)
            rows = r;
    layout->rows = rows;
    layout->width = count / rows;
    layout->work_count = (size_t)work_buffers * (size_t)nranks * count;
}

/* Element (i, k, j) of the matrix (row i, slice k, column j) is element
 * (k, i, j) of the blocks: a 3-D transpose of the outer two axes, done as
 * whichever of n copies (one per slice) or rows copies (one per row) is
 * fewer. to_columns: blocks -> matrix, else matrix -> blocks. */
static int transpose_blocks(cb_backend *b, char *matrix, char *blocks, const cb_layout *l,
                            size_t esize, int nranks, int to_columns)
{
    size_t n = (size_t)nranks, slice = l->width * esize, block = l->rows * slice;
    size_t row = n * slice;
    int per_slice = n <= l->rows;
    size_t copies = per_slice ? n : l->rows, height = per_slice ? l->rows : n;
    size_t matrix_step = per_slice ? slice : row, matrix_pitch = per_slice ? row : slice;
    size_t blocks_step = per_slice ? block : slice, blocks_pitch = per_slice ? slice : block;
    for (size_t c = 0; c < copies; c++) {
        char *m = matrix + c * matrix_step, *k = blocks + c * blocks_step;
        int rc = to_columns ? b->ops->copy2d(b, m, matrix_pitch, k, blocks_pitch, slice, height)
                            : b->ops->copy2d(b, k, blocks_pitch, m, matrix_pitch, slice, height);
        if (rc != 0)
            return -1;
    }
    return 0;
}

int cb_blocks_to_columns(cb_backend *b, void *matrix, const void *blocks, const cb_layout *l,
                         size_t esize, int nranks)
{
    return transpose_blocks(b, matrix, (char *)blocks, l, esize, nranks, 1);
}

int cb_columns_to_blocks(cb_backend *b, void *blocks, const void *matrix, const cb_layout *l,
                         size_t esize, int nranks)
{
    return transpose_blocks(b, (char *)matrix, blocks, l, esize, nranks, 0);
}

size_t cb_check_columns(const cb_pattern *pat, const void *data, const cb_layout *l,
                        size_t nblocks, cb_column_source src, cb_mismatch *first)
{
    const cb_dtype_info *info = cb_dtype_info_of(pat->dtype);
    size_t wrong = 0, row_len = nblocks * l->width;
    for (size_t i = 0; i < l->rows; i++)
        for (size_t k = 0; k < nblocks; k++) {
            int rank = src.rank + (int)k * src.rank_step;
            for (size_t j = 0; j < l->width; j++) {
                size_t x = src.offset + i * src.row_stride + j;
                size_t index = i * row_len + k * l->width + j;
                double expected = cb_pattern_block(pat, rank, x / src.block_count,
                                                   x % src.block_count);
                double actual = info->load(data, index);
                if (!same_bits(info, data, index, expected))
                    wrong += record(&wrong, first, index, expected, actual);
            }
        }
    return wrong;
}

void cb_fill_nothing(const cb_pattern *pat, int rank, const cb_call *call, void *send)
{
    (void)pat;
    (void)rank;
    (void)call;
    (void)send;
}

size_t cb_check_nothing(const cb_pattern *pat, int rank, const cb_call *call, const void *recv,
                        cb_mismatch *first)
{
    (void)pat;
    (void)rank;
    (void)call;
    (void)recv;
    (void)first;
    return 0;
}
