/* --output NAME=PATH: any output format by its name, so that a new format
 * needs no option of its own. The options never know the names: main.c
 * checks them against the printer table after parsing. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "options/params_parse.h"

#define fail cb_params_fail

int cb_params_opt_output(parse_state *s, const char *v)
{
    cb_params *p = s->p;
    const char *eq = strchr(v, '=');
    if (eq == NULL || eq == v || eq[1] == '\0')
        return fail(s, "'%s' is not NAME=PATH (a format's name, '=', then a file, or '-' "
                       "for stdout)", v);
    size_t len = (size_t)(eq - v);
    for (int i = 0; i < p->out.noutputs; i++)
        if (p->out.outputs[i].name_len == len && strncmp(p->out.outputs[i].name, v, len) == 0)
            return fail(s, "'%s': %.*s is given twice", v, (int)len, v);
    if (p->out.noutputs == CB_MAX_OUTPUTS)
        return fail(s, "'%s': more than %d outputs", v, CB_MAX_OUTPUTS);
    p->out.outputs[p->out.noutputs++] = (cb_output_spec){v, len, eq + 1};
    return 0;
}

const char *cb_params_output(const cb_params *p, const char *name)
{
    size_t len = strlen(name);
    for (int i = 0; i < p->out.noutputs; i++)
        if (p->out.outputs[i].name_len == len && strncmp(p->out.outputs[i].name, name, len) == 0)
            return p->out.outputs[i].path;
    return NULL;
}

const char *cb_params_json_path(const cb_params *p)
{
    return p->out.json_path != NULL ? p->out.json_path : cb_params_output(p, "json");
}

const char *cb_params_prom_path(const cb_params *p)
{
    return p->out.prom_path != NULL ? p->out.prom_path : cb_params_output(p, "prom");
}

/* The pairs as given, so that ranks given them in another order differ too
 * (the order is the message's, not the run's; one rule for every list).
 * Eight paths may not fit the agreement's text: then its end is a digest
 * of them all, so that ranks differing past the cut still differ. */
void cb_agree_outputs(const cb_params *p, char *text, size_t len)
{
    size_t used = 0;
    uint64_t digest = 14695981039346656037ULL;   /* FNV-1a */
    snprintf(text, len, "(none)");
    for (int i = 0; i < p->out.noutputs; i++) {
        const cb_output_spec *o = &p->out.outputs[i];
        for (const char *c = o->name; *c != '\0'; c++)   /* NAME=PATH, argv's word */
            digest = (digest ^ (unsigned char)*c) * 1099511628211ULL;
        digest = (digest ^ 0xff) * 1099511628211ULL;   /* ends each pair */
        if (used >= len)
            continue;
        int n = snprintf(text + used, len - used, "%s%.*s=%s", i ? "," : "",
                         (int)o->name_len, o->name, o->path);
        used += n > 0 ? (size_t)n : 0;
    }
    if (used >= len && len > 18)
        snprintf(text + len - 18, 18, "~%016" PRIx64, digest);
}
