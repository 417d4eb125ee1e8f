/*
 * Every rank must run the same parameters: a rank that parsed another -n or
 * -b would wait in a different collective, or check against other expected
 * values. Each option of the option table (src/options/params.c) says how its value
 * reads as text (params_parse.h); the ranks compare a digest of every
 * option's text, and only on a mismatch look for the first option that
 * differs and one rank whose value differs from rank 0's.
 */
#include "options/params_agree.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common/format.h"
#include "options/params_parse.h"

#define VALUE_LEN 256

static void append(char *text, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void append(char *text, size_t len, const char *fmt, ...)
{
    size_t used = strlen(text);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text + used, len - used, fmt, ap);
    va_end(ap);
}

void cb_agree_collectives(const cb_params *p, char *text, size_t len)
{
    for (int i = 0; i < p->sizes.ncollectives; i++)
        append(text, len, "%s%s", i ? "," : "", p->sizes.collectives[i]->name);
    if (p->scan.parts != 0)
        append(text, len, " scan parts %d", p->scan.parts);
}

void cb_agree_dtypes(const cb_params *p, char *text, size_t len)
{
    for (int i = 0; i < p->sizes.ndtypes; i++)
        append(text, len, "%s%s", i ? "," : "", cb_dtype_info_of(p->sizes.dtypes[i])->name);
}

void cb_agree_redops(const cb_params *p, char *text, size_t len)
{
    for (int i = 0; i < p->sizes.nredops; i++)
        append(text, len, "%s%s", i ? "," : "", cb_redop_name(p->sizes.redops[i]));
}

/* -f and -i set one step between them: both read it whole. */
void cb_agree_step(const cb_params *p, char *text, size_t len)
{
    if (p->sizes.step_bytes != 0) {
        char bytes[32];
        cb_format_bytes(p->sizes.step_bytes, bytes, sizeof bytes);
        append(text, len, "-i %s", bytes);
    } else {
        append(text, len, "-f %llu", (unsigned long long)p->sizes.step_factor);
    }
}

void cb_agree_root(const cb_params *p, char *text, size_t len)
{
    if (p->sizes.root < 0)
        append(text, len, "all");
    else
        append(text, len, "%d", p->sizes.root);
}

void cb_agree_average(const cb_params *p, char *text, size_t len)
{
    append(text, len, "%s", cb_average_name(p->timing.average));
}

void cb_agree_split(const cb_params *p, char *text, size_t len)
{
    append(text, len, "%s", p->sizes.split.kind == CB_SPLIT_NONE ? "(none)" : p->sizes.split.text);
}

void cb_agree_hier(const cb_params *p, char *text, size_t len)
{
    append(text, len, "%s", p->sizes.hier.text);
}

void cb_agree_layouts(const cb_params *p, char *text, size_t len)
{
    for (int i = 0; i < p->sizes.nlayouts; i++)
        append(text, len, "%s%s", i ? "," : "", p->sizes.layouts[i] == CB_LAYOUT_COL ? "col" : "row");
}

void cb_agree_a2av_matrix(const cb_params *p, char *text, size_t len)
{
    cb_traffic_format(&p->sizes.a2av_matrix, text, len);
}

void cb_agree_nccl_impls(const cb_params *p, char *text, size_t len)
{
    for (int i = 0; i < p->sizes.nimpls; i++)
        append(text, len, "%s%s", i ? "," : "", cb_impl_name(p->sizes.impls[i]));
}

size_t cb_params_agree_count(void)
{
    size_t count;
    cb_params_options(&count);
    return count;
}

int cb_params_agree_text(const cb_params *p, size_t i, char *name, size_t name_len,
                         char *value, size_t value_len)
{
    size_t count;
    const cb_option_spec *o = &cb_params_options(&count)[i];
    if (o->short_name != '\0')
        snprintf(name, name_len, "-%c/--%s", o->short_name, o->long_name);
    else
        snprintf(name, name_len, "--%s", o->long_name);
    value[0] = '\0';
    const char *field = (const char *)p + o->agree.offset;
    int flag;
    const char *string;
    switch (o->agree.kind) {
    case CB_AGREE_NOTHING:
        return 0;
    case CB_AGREE_INT:
        memcpy(&flag, field, sizeof flag);
        snprintf(value, value_len, "%d", flag);
        return 1;
    case CB_AGREE_FLAG:
        memcpy(&flag, field, sizeof flag);
        snprintf(value, value_len, "%s", flag ? "given" : "not given");
        return 1;
    case CB_AGREE_BYTES: {
        uint64_t bytes;
        memcpy(&bytes, field, sizeof bytes);
        cb_format_bytes(bytes, value, value_len);
        return 1;
    }
    case CB_AGREE_DOUBLE: {
        double number;
        memcpy(&number, field, sizeof number);
        snprintf(value, value_len, "%g", number);
        return 1;
    }
    case CB_AGREE_STRING:
        memcpy(&string, field, sizeof string);
        snprintf(value, value_len, "%s", string != NULL ? string : "(none)");
        return 1;
    case CB_AGREE_DESCRIBED:
        o->agree.describe(p, value, value_len);
        return 1;
    case CB_AGREE_UNSET:
        break;
    }
    snprintf(value, value_len, "?");
    return -1;
}

/* FNV-1a, 64 bits: a digest, not a defence against a hostile rank. */
static uint64_t digest(const char *text, uint64_t h)
{
    for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
        h ^= *c;
        h *= 1099511628211ull;
    }
    /* The terminator counts too, so that "1","23" and "12","3" differ. */
    h ^= 0xff;
    return h * 1099511628211ull;
}

#define FNV_OFFSET 14695981039346656037ull

int cb_params_agree(const cb_params *p, cb_ctl *comm, char *err, size_t err_len)
{
    int rank = comm->rank, nranks = comm->size;
    /* Options with nothing to agree hash as "": every rank has the same. */
    int count = (int)cb_params_agree_count();
    uint64_t hashes[CB_MAX_OPTIONS];
    uint64_t all = FNV_OFFSET;
    char name[64], value[VALUE_LEN];
    for (int i = 0; i < count; i++) {
        cb_params_agree_text(p, (size_t)i, name, sizeof name, value, sizeof value);
        hashes[i] = digest(value, FNV_OFFSET);
        all = digest(value, all);
    }
    uint64_t lowest = 0, highest = 0;
    cb_ctl_allreduce(comm, &all, &lowest, 1, CB_CTL_U64, CB_CTL_MIN);
    cb_ctl_allreduce(comm, &all, &highest, 1, CB_CTL_U64, CB_CTL_MAX);
    if (lowest == highest)
        return 0;

    /* Some rank differs: the first option that differs from rank 0's, on
     * the lowest rank where it does. */
    uint64_t first[CB_MAX_OPTIONS];
    memcpy(first, hashes, (size_t)count * sizeof *first);
    cb_ctl_bcast(comm, first, (size_t)count * sizeof(uint64_t), 0);
    int my_opt = count;
    for (int i = 0; i < count && my_opt == count; i++)
        if (hashes[i] != first[i])
            my_opt = i;
    int opt = count;
    cb_ctl_allreduce(comm, &my_opt, &opt, 1, CB_CTL_INT, CB_CTL_MIN);
    if (opt == count) {
        /* The digests differ but no option does: cannot happen unless the
         * digest collides on one rank; refuse all the same. */
        snprintf(err, err_len, "the parameters differ between ranks");
        return -1;
    }
    int my_rank = hashes[opt] != first[opt] ? rank : nranks;
    int other = nranks;
    cb_ctl_allreduce(comm, &my_rank, &other, 1, CB_CTL_INT, CB_CTL_MIN);
    cb_params_agree_text(p, (size_t)opt, name, sizeof name, value, sizeof value);
    char theirs[VALUE_LEN];
    memcpy(theirs, value, VALUE_LEN);
    cb_ctl_bcast(comm, theirs, (size_t)VALUE_LEN, other);
    theirs[VALUE_LEN - 1] = '\0';
    snprintf(err, err_len, "%s differs between ranks: rank 0 has '%.100s', rank %d has "
             "'%.100s'; give every rank the same options", name, rank == 0 ? value : "",
             other, theirs);
    return -1;
}
