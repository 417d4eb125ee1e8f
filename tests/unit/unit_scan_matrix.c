/* The health scan's text: the pair matrix fits a width or says it does not,
 * and each '# Suspect' line has the documented form. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "scan/matrix_text.h"
#include "unit.h"

/* The matrix as printed, in a string the caller frees; *rc its result. */
static char *print_matrix(const char *const *hosts, int n, const double *m, int width, int *rc)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    if (out == NULL)
        return NULL;
    *rc = cb_scan_matrix_print(out, hosts, n, m, "# ", width);
    fclose(out);
    return text;
}

int main(void)
{
    unit_state u = {0, 0};
    const char *hosts[] = {"h0", "h1", "node-long"};
    double m[9] = {NAN, 12.5, 3, 12.5, NAN, NAN, 3, NAN, 1234.56};
    int rc = -1;
    char *text = print_matrix(hosts, 3, m, 120, &rc);
    /* Every column as wide as the widest label or figure (9 here). */
    const char *want = "#                   h0         h1  node-long\n"
                       "# h0                 -       12.5        3.0\n"
                       "# h1              12.5          -          ?\n"
                       "# node-long        3.0          ?          -\n";
    CHECK(&u, rc == 0 && text != NULL && strcmp(text, want) == 0);
    if (text != NULL && strcmp(text, want) != 0)
        fprintf(stderr, "got:\n%s", text);
    free(text);
    int need = cb_scan_matrix_width(hosts, 3, m, "# ");
    CHECK(&u, need == 44 && need == (int)strlen("# node-long        3.0          ?          -"));
    text = print_matrix(hosts, 3, m, need, &rc);
    CHECK(&u, rc == 0 && text != NULL && strlen(text) > 0);
    free(text);
    text = print_matrix(hosts, 3, m, need - 1, &rc);   /* one column short: nothing */
    CHECK(&u, rc == 1 && text != NULL && strlen(text) == 0);
    free(text);

    /* 16 hosts of 8 characters do not fit 120 columns; 8 do. */
    const char *many[16];
    char names[16][16];
    double big[256];
    for (int i = 0; i < 16; i++) {
        snprintf(names[i], sizeof names[i], "gpu-n%03d", i);
        many[i] = names[i];
    }
    for (int i = 0; i < 256; i++)
        big[i] = 95.5;
    CHECK(&u, cb_scan_matrix_width(many, 16, big, "# ") > CB_SCAN_MATRIX_WIDTH);
    CHECK(&u, cb_scan_matrix_width(many, 8, big, "# ") <= CB_SCAN_MATRIX_WIDTH);

    char line[256];
    cb_scan_pair_line(line, sizeof line, "# ", "h0", "h1", 12.345);
    CHECK(&u, strcmp(line, "# pair h0 h1 12.35 GB/s") == 0);

    cb_scan_finding f = {.reason = CB_SCAN_NODE_FIGURE, .a = 1, .b = -1, .figure = 10,
                         .median = 40, .ratio = 0.25};
    cb_scan_suspect_line(line, sizeof line, &f, "h1", NULL, "0000:17:00.0", NULL);
    CHECK(&u, strcmp(line, "# Suspect node h1 (GPU 0000:17:00.0): node all-reduce 10.00 GB/s, "
                           "reference 40.00 GB/s, ratio 0.25") == 0);
    cb_scan_suspect_line(line, sizeof line, &f, "h1", NULL, "", NULL);
    CHECK(&u, strcmp(line, "# Suspect node h1: node all-reduce 10.00 GB/s, reference 40.00 GB/s, "
                           "ratio 0.25") == 0);
    f.reason = CB_SCAN_NODE_PAIRS;
    cb_scan_suspect_line(line, sizeof line, &f, "h1", NULL, NULL, NULL);
    CHECK(&u, strcmp(line, "# Suspect node h1: pairs 10.00 GB/s, reference 40.00 GB/s, "
                           "ratio 0.25") == 0);
    f.reason = CB_SCAN_NODE_WRONG;
    f.wrong = 1;
    cb_scan_suspect_line(line, sizeof line, &f, "h2", NULL, "0000:3b:00.0", NULL);
    CHECK(&u, strcmp(line, "# Suspect node h2 (GPU 0000:3b:00.0): 1 wrong element") == 0);
    f.wrong = 17;
    cb_scan_suspect_line(line, sizeof line, &f, "h2", NULL, NULL, NULL);
    CHECK(&u, strcmp(line, "# Suspect node h2: 17 wrong elements") == 0);
    f = (cb_scan_finding){.reason = CB_SCAN_LINK, .a = 0, .b = 3, .figure = 20.5,
                          .median = 41, .ratio = 0.5};
    cb_scan_suspect_line(line, sizeof line, &f, "h0", "h3", NULL, NULL);
    CHECK(&u, strcmp(line, "# Suspect link h0 - h3: 20.50 GB/s, reference 41.00 GB/s, "
                           "ratio 0.50") == 0);
    f.reason = CB_SCAN_RAIL;
    f.a = 1;
    cb_scan_suspect_line(line, sizeof line, &f, NULL, NULL, NULL, NULL);
    CHECK(&u, strcmp(line, "# Suspect rail 1: 20.50 GB/s, reference 41.00 GB/s, ratio 0.50") == 0);
    cb_scan_suspect_line(line, sizeof line, &f, NULL, NULL, NULL, "low");
    CHECK(&u, strcmp(line, "# Suspect rail 1: 20.50 GB/s, reference 41.00 GB/s, ratio 0.50, "
                           "confidence low") == 0);
    cb_scan_suspect_line(line, sizeof line, &f, NULL, NULL, NULL, NULL);
    /* A short buffer is cut, never overrun; the full length is returned. */
    char small[12];
    int full = cb_scan_suspect_line(small, sizeof small, &f, NULL, NULL, NULL, NULL);
    CHECK(&u, full == (int)strlen(line) && strlen(small) == sizeof small - 1);
    return unit_done(&u, "unit_scan_matrix");
}
