/* What the parsed parameters mean for this run, once it is known: the
 * checks that need the rank count, and the notes on options given that have
 * no effect (for the preamble). */
#include <stdio.h>
#include <string.h>

#include "collectives/collective.h"
#include "options/params.h"

int cb_params_check_ranks(const cb_params *p, int nranks, char *err, size_t err_len)
{
    /* -r is checked by the engine, once the groups are known. */
    const cb_split_spec *split = &p->sizes.split;
    if (split->kind == CB_SPLIT_COLOR &&
        cb_split_color(split, "--split", 0, nranks, err, err_len) < 0)
        return -1;
    /* hier_allreduce's groups are made among the ranks measured together:
     * with --split a group's, checked when the groups are known. */
    if (split->kind == CB_SPLIT_NONE && p->sizes.hier.kind == CB_SPLIT_COLOR &&
        cb_split_color(&p->sizes.hier, "--hier-split", 0, nranks, err, err_len) < 0)
        return -1;
    return 0;
}

int cb_params_check_floors(const cb_params *p, char *err, size_t err_len)
{
    int moves_data = 0;
    for (int i = 0; i < p->sizes.ncollectives; i++)
        moves_data |= (p->sizes.collectives[i]->flags & CB_COLL_NO_DATA) == 0;
    if (moves_data)
        return 0;
    /* A floor that judges nothing would pass silently. */
    const char *none = p->sizes.ncollectives > 0 ? p->sizes.collectives[0]->name : "scan";
    if (p->expect.min_busbw > 0 && p->scan.parts == 0) {
        snprintf(err, err_len, "--min-busbw %g: no collective selected moves data (%s has no "
                 "busbw), so the floor would judge nothing; select one that moves data or drop "
                 "--min-busbw", p->expect.min_busbw, none);
        return -1;
    }
    if (p->expect.source != NULL && p->scan.parts == 0) {
        snprintf(err, err_len, "--expect %.200s: no collective selected moves data (%s has no "
                 "busbw), so the expectation would judge nothing; select one that moves data "
                 "or drop --expect", p->expect.source, none);
        return -1;
    }
    if (p->expect.tests_min_bw > 0) {
        snprintf(err, err_len, "NCCL_TESTS_MIN_BW=%g: no collective selected moves data (%s "
                 "has no average busbw), so the floor would judge nothing; select one that "
                 "moves data or unset NCCL_TESTS_MIN_BW", p->expect.tests_min_bw, none);
        return -1;
    }
    return 0;
}

int cb_params_note(const cb_params *p, int index, char *text, size_t len)
{
    int rooted = 0, grouped = 0, weighted = 0;
    for (int i = 0; i < p->sizes.ncollectives; i++) {
        rooted |= (p->sizes.collectives[i]->flags & CB_COLL_ROOTED) != 0;
        grouped |= p->sizes.collectives[i]->prepare != NULL;          /* --hier-split's groups */
        weighted |= p->sizes.collectives[i]->layout_traffic != NULL;  /* --a2av-matrix's weights */
    }
    int n = 0;
    if (p->sizes.root_given && !rooted && n++ == index) {
        snprintf(text, len, "-r has no effect: no collective selected has a root (broadcast, "
                 "reduce, gather and scatter have)");
        return 1;
    }
    if (p->timing.stable_given && p->timing.budget_ms == 0 && n++ == index) {
        snprintf(text, len, "--stable has no effect without --budget: every size runs -n %d "
                 "timed iterations", p->sizes.iters);
        return 1;
    }
    if (p->out.samples_json && cb_params_json_path(p) == NULL && n++ == index) {
        snprintf(text, len, "--samples-json has no effect without --json");
        return 1;
    }
    if (p->out.samples_json && cb_params_json_path(p) != NULL && p->sizes.split.kind != CB_SPLIT_NONE &&
        n++ == index) {
        snprintf(text, len, "--samples-json has no effect with --split: its results have no "
                 "per-rank entries");
        return 1;
    }
    if (p->expect.source == NULL && (p->out.expect_column || p->expect.expect_ratio != 0.8) && n++ == index) {
        snprintf(text, len, "--efficiency and --expect-ratio have no effect without --expect");
        return 1;
    }
    if (p->verify.check_timed && p->verify.check_passes == 0 && n++ == index) {
        snprintf(text, len, "--check-timed has no effect with -c 0: nothing is verified");
        return 1;
    }
    /* Their defaults cannot be told from the same value given. */
    if (!grouped && strcmp(p->sizes.hier.text, "node") != 0 && n++ == index) {
        snprintf(text, len, "--hier-split has no effect: only hier_allreduce has inner groups");
        return 1;
    }
    if (p->sizes.unalign > 0 && p->sizes.ncollectives == 0 && n++ == index) {
        snprintf(text, len, "-u has no effect on the health scan: it measures aligned buffers");
        return 1;
    }
    if (p->verify.repeat_check && p->sizes.ncollectives == 0 && n++ == index) {
        snprintf(text, len, "-B has no effect on the health scan: its launches are not compared");
        return 1;
    }
    if (!weighted && p->sizes.a2av_matrix.kind != CB_TRAFFIC_UNIFORM && n++ == index) {
        snprintf(text, len, "--a2av-matrix has no effect: only alltoallv has a traffic matrix");
        return 1;
    }
    const char *prom = cb_params_prom_path(p);
    if ((p->out.prom_largest || p->out.nprom_sizes > 0) && prom == NULL && n++ == index) {
        snprintf(text, len, "--prom-sizes has no effect without --prom");
        return 1;
    }
    size_t plen = prom != NULL ? strlen(prom) : 0;
    if (prom != NULL && (plen < 5 || strcmp(prom + plen - 5, ".prom") != 0) && n++ == index) {
        snprintf(text, len, "%s%s: node_exporter's textfile collector reads only files "
                 "whose names end in .prom", p->out.prom_path != NULL ? "--prom " : "--output prom=",
                 prom);
        return 1;
    }
    return 0;
}
