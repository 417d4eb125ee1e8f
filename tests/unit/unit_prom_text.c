/* The Prometheus text format's pieces (src/printers/prom_text.c): label
 * values escaped so that none ends its label or line, bytes that are not
 * UTF-8 taken as Latin-1, valid UTF-8 kept, figures as the CSV writes them. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "printers/prom_text.h"
#include "unit.h"

/* What put_value_text writes for value. */
static char *escaped(const char *value)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cb_prom_put_value_text(f, value);
    fclose(f);
    return text;
}

static void expect(unit_state *u, const char *value, const char *want)
{
    char *got = escaped(value);
    CHECK(u, got != NULL && strcmp(got, want) == 0);
    if (got != NULL && strcmp(got, want) != 0)
        fprintf(stderr, "  '%s' became '%s', not '%s'\n", value, got, want);
    free(got);
}

int main(void)
{
    unit_state u = {0, 0};
    expect(&u, "plain", "plain");
    expect(&u, "", "");
    expect(&u, "a\"b", "a\\\"b");
    expect(&u, "back\\slash\\", "back\\\\slash\\\\");
    expect(&u, "h0\"} 1\nforged{a=\"", "h0\\\"} 1\\nforged{a=\\\"");
    /* Valid UTF-8 stays; a stray byte becomes its Latin-1 character. */
    expect(&u, "n\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", "n\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
    expect(&u, "latin\xff", "latin\xc3\xbf");
    expect(&u, "\xe2\x82", "\xc3\xa2\xc2\x82");          /* cut short */
    expect(&u, "\xc0\xaf", "\xc3\x80\xc2\xaf");          /* overlong */
    expect(&u, "\xed\xa0\x80", "\xc3\xad\xc2\xa0\xc2\x80"); /* a surrogate */
    expect(&u, "\xf4\x90\x80\x80", "\xc3\xb4\xc2\x90\xc2\x80\xc2\x80"); /* past U+10FFFF */

    char text[64];
    cb_prom_number_text(text, sizeof text, PROM_CSV_FIXED, 12.3456789);
    CHECK(&u, strcmp(text, "12.345679") == 0);
    cb_prom_number_text(text, sizeof text, PROM_SIGNIFICANT, 0.123456789);
    CHECK(&u, strcmp(text, "0.123457") == 0);
    cb_prom_number_text(text, sizeof text, PROM_CSV_FIXED, NAN);
    CHECK(&u, strcmp(text, "NaN") == 0);
    cb_prom_number_text(text, sizeof text, PROM_CSV_FIXED, -INFINITY);
    CHECK(&u, strcmp(text, "-Inf") == 0);
    cb_prom_number_text(text, sizeof text, PROM_SIGNIFICANT, INFINITY);
    CHECK(&u, strcmp(text, "+Inf") == 0);

    char *line = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&line, &len);
    int first;
    cb_prom_open_sample(f, "job\"x", "m", &first);
    cb_prom_put_label_int(f, &first, "n", -3);
    fclose(f);
    CHECK(&u, strcmp(line, "m{source=\"job\\\"x\",n=\"-3\"") == 0);
    free(line);
    return unit_done(&u, "unit_prom_text");
}
