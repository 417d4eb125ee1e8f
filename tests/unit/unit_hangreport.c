/* The hang report's merge: who is silent, who is behind, and the lines
 * that name them (src/safety/hangreport.c), from answers made up here. */
#include <stdlib.h>
#include <string.h>

#include "safety/hangreport.h"
#include "unit.h"

/* A rank that answered: at step, with launches made, in doing. */
static void answered(cb_hang_report *rep, int r, const char *host, uint64_t step,
                     uint64_t launches, const char *doing)
{
    cb_hang_rank *x = &rep->ranks[r];
    memset(x, 0, sizeof *x);
    x->answer = CB_HANG_ANSWERED;
    x->state.rank = r;
    x->state.step = step;
    x->state.launches = launches;
    x->state.iteration = 2;
    x->state.units = 20;
    snprintf(x->state.host, sizeof x->state.host, "%s", host);
    snprintf(x->state.doing, sizeof x->state.doing, "%s", doing);
}

static void quiet(cb_hang_report *rep, int r, const char *host, cb_hang_answer how)
{
    cb_hang_rank *x = &rep->ranks[r];
    memset(x, 0, sizeof *x);
    x->answer = how;
    x->state.rank = r;
    snprintf(x->state.host, sizeof x->state.host, "%s", host);
}

/* The line that starts with prefix after "# Hang: ", or NULL. */
static const char *line_of(const cb_hang_report *rep, const char *prefix)
{
    for (int i = 0; i < rep->nlines; i++)
        if (strncmp(rep->lines[i], "# Hang: ", 8) == 0 &&
            strncmp(rep->lines[i] + 8, prefix, strlen(prefix)) == 0)
            return rep->lines[i];
    return NULL;
}

int main(void)
{
    unit_state u = {0, 0};
    cb_hang_report rep;
    cb_hang_rank ranks[8];

    /* One rank silent, one behind, the rest level: each named where it is. */
    memset(&rep, 0, sizeof rep);
    rep.ranks = ranks;
    rep.nranks = 6;
    rep.trigger = 1;
    rep.limit_s = 3;
    rep.wait_s = 3;
    answered(&rep, 0, "h0", 40, 300, "allreduce 4096 B, timed iterations");
    answered(&rep, 1, "h0", 40, 300, "allreduce 4096 B, timed iterations");
    answered(&rep, 2, "h1", 39, 290, "allreduce 4096 B, verification");
    quiet(&rep, 3, "h1", CB_HANG_SILENT);
    answered(&rep, 4, "h2", 40, 300, "allreduce 4096 B, timed iterations");
    answered(&rep, 5, "h2", 40, 300, "allreduce 4096 B, timed iterations");
    cb_hang_merge(&rep);
    CHECK(&u, rep.answered == 5 && rep.silent == 1 && rep.behind == 1 && rep.left == 0);
    CHECK(&u, rep.ranks[2].behind && !rep.ranks[0].behind && !rep.ranks[3].behind);
    CHECK(&u, strstr(rep.lines[0], "rank 1 (h0) saw no progress for 3 s (-T)") != NULL);
    CHECK(&u, strstr(rep.lines[0], "5 answered") != NULL);
    const char *silent = line_of(&rep, "silent: ");
    CHECK(&u, silent != NULL && strstr(silent, "rank 3 (h1) did not answer") != NULL);
    const char *behind = line_of(&rep, "behind: ");
    CHECK(&u, behind != NULL && strstr(behind, "rank 2 (h1) in allreduce 4096 B, verification")
                                    != NULL);
    CHECK(&u, behind != NULL && strstr(behind, "3 of 20 launched (launch 290 of the run)") != NULL);
    const char *waiting = line_of(&rep, "waiting: ");
    CHECK(&u, waiting != NULL && strstr(waiting, "ranks 0-1,4-5 in allreduce 4096 B, timed "
                                                 "iterations") != NULL);
    /* No healthy rank's host is named as silent or behind. */
    CHECK(&u, silent != NULL && strstr(silent, "h0") == NULL && strstr(silent, "h2") == NULL);
    CHECK(&u, behind != NULL && strstr(behind, "h0") == NULL && strstr(behind, "h2") == NULL);

    /* One launch short of the furthest in the same step is no one behind
     * (ranks waiting for a cut-off peer stand so): rank 0 at launch 299. */
    answered(&rep, 0, "h0", 40, 299, "allreduce 4096 B, timed iterations");
    cb_hang_merge(&rep);
    CHECK(&u, rep.behind == 1 && !rep.ranks[0].behind && rep.ranks[2].behind);
    answered(&rep, 0, "h0", 40, 298, "allreduce 4096 B, timed iterations");
    cb_hang_merge(&rep);
    CHECK(&u, rep.behind == 2 && rep.ranks[0].behind);
    answered(&rep, 0, "h0", 40, 300, "allreduce 4096 B, timed iterations");

    /* Behind at two positions: one line each, lowest first; a later step
     * counts as further whatever the launches. */
    answered(&rep, 3, "h1", 38, 500, "allreduce 2048 B, warmup");
    cb_hang_merge(&rep);
    CHECK(&u, rep.behind == 2 && rep.silent == 0);
    CHECK(&u, line_of(&rep, "silent: ") == NULL);
    int first = -1, second = -1;
    for (int i = 0; i < rep.nlines; i++) {
        if (strstr(rep.lines[i], "behind: rank 3 (h1) in allreduce 2048 B") != NULL)
            first = i;
        if (strstr(rep.lines[i], "behind: rank 2 (h1) in allreduce 4096 B") != NULL)
            second = i;
    }
    CHECK(&u, first > 0 && second > first);

    /* Everyone level: nobody behind, the hang is inside the operation. */
    for (int r = 0; r < 6; r++)
        answered(&rep, r, "h9", 7, 70, "broadcast 1 MiB, warmup");
    rep.ranks[2].state.units = 0;
    cb_hang_merge(&rep);
    CHECK(&u, rep.behind == 0 && rep.silent == 0 && rep.answered == 6);
    const char *none = line_of(&rep, "none behind: ");
    CHECK(&u, none != NULL && strstr(none, "ranks 0-5 in broadcast 1 MiB, warmup") != NULL);
    CHECK(&u, none != NULL && strstr(none, "inside that operation") != NULL);

    /* Ended and never-reached ranks: counted and named apart. */
    quiet(&rep, 4, "h2", CB_HANG_LEFT);
    quiet(&rep, 5, "h3", CB_HANG_UNREACHED);
    cb_hang_merge(&rep);
    CHECK(&u, rep.left == 1 && rep.answered == 4);
    const char *ended = line_of(&rep, "ended: ");
    CHECK(&u, ended != NULL && strstr(ended, "rank 4 had ended") != NULL);
    silent = line_of(&rep, "silent: ");
    CHECK(&u, silent != NULL && strstr(silent, "rank 5 (h3) never reached") != NULL);

    /* Many silent ranks: the first named, the rest counted, the line ends. */
    cb_hang_rank *many = calloc(200, sizeof *many);
    CHECK(&u, many != NULL);
    if (many != NULL) {
        memset(&rep, 0, sizeof rep);
        rep.ranks = many;
        rep.nranks = 200;
        answered(&rep, 0, "h0", 5, 5, "reduce 8 B, warmup");
        for (int r = 1; r < 200; r++)
            quiet(&rep, r, "a-rather-long-host-name-for-a-node", CB_HANG_SILENT);
        cb_hang_merge(&rep);
        silent = line_of(&rep, "silent: ");
        const char *more = silent != NULL ? strstr(silent, " and ") : NULL;
        int named = 0, rest = 0;
        for (const char *c = silent; c != NULL && c < more; c++)
            named += *c == '(';
        CHECK(&u, more != NULL && sscanf(more, " and %d more did not answer", &rest) == 1);
        CHECK(&u, named >= 1 && named + rest == 199);
        CHECK(&u, silent != NULL && strstr(silent, "ranks 1 (a-rather") != NULL);
        CHECK(&u, rep.silent == 199);
        for (int i = 0; i < rep.nlines; i++)
            CHECK(&u, strlen(rep.lines[i]) < CB_HANG_LINELEN);
        free(many);
    }
    return unit_done(&u, "unit_hangreport");
}
