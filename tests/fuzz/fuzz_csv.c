/*
 * Fuzz target: the CSV reader of nccl-collbench-compare and -plot. Any input
 * either parses into a rectangular table or is refused with a message; it
 * never crashes, leaks or reads past the input. Row line numbers grow, and
 * the strict number readers accept only what they promise.
 */
#include <assert.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "csvread.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cb_csv_table t;
    char err[256];
    if (cb_csv_parse((const char *)data, size, &t, err, sizeof err) != 0) {
        assert(err[0] != '\0');
        return 0;
    }
    assert(t.ncols >= 1 && t.header != NULL);
    for (size_t r = 0; r < t.nrows; r++) {
        assert(t.lines[r] >= 2 && (r == 0 || t.lines[r] > t.lines[r - 1]));
        for (size_t c = 0; c < t.ncols; c++) {
            const char *field = t.rows[r][c], *why = NULL;
            double d;
            unsigned long long u;
            assert(field != NULL);
            if (cb_csv_decimal(field, 1, &d, &why) == 0)
                assert(isfinite(d) && strchr(field, ' ') == NULL && strchr(field, 'x') == NULL);
            else
                assert(why != NULL);
            if (cb_csv_unsigned(field, &u, &why) == 0)
                assert(field[0] >= '0' && field[0] <= '9');
        }
    }
    if (t.ncols > 0)
        assert(cb_csv_column(&t, t.header[0]) == 0);
    cb_csv_free(&t);
    return 0;
}
