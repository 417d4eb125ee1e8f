#include "safety/hangreport.h"
#include "common/format.h"

#include <string.h>

/* Named one by one up to this many ranks a line; the rest are counted. */
#define NAMED_PER_LINE 16
/* Lines for ranks behind, one per position, before the rest are counted. */
#define BEHIND_LINES 6

const char *cb_hang_answer_name(cb_hang_answer a)
{
    switch (a) {
    case CB_HANG_ANSWERED: return "answered";
    case CB_HANG_SILENT: return "silent";
    case CB_HANG_LEFT: return "ended";
    case CB_HANG_UNREACHED: return "unreachable";
    }
    return "unknown";
}

void cb_hang_where(const cb_hang_state *s, char *buf, size_t len)
{
    if (s->units > 0 && s->iteration + 1 >= s->units)
        snprintf(buf, len, "%s, all %lld launched, waiting for them to complete (launch %llu of "
                 "the run)", s->doing, (long long)s->units, (unsigned long long)s->launches);
    else if (s->units > 0)
        snprintf(buf, len, "%s, %lld of %lld launched (launch %llu of the run)", s->doing,
                 (long long)s->iteration + 1, (long long)s->units,
                 (unsigned long long)s->launches);
    else
        snprintf(buf, len, "%s (launch %llu of the run)", s->doing,
                 (unsigned long long)s->launches);
}

/* -1, 0 or 1 as a is short of, level with or past b. */
static int compare_position(const cb_hang_state *a, const cb_hang_state *b)
{
    if (a->step != b->step)
        return a->step < b->step ? -1 : 1;
    if (a->launches != b->launches)
        return a->launches < b->launches ? -1 : 1;
    return 0;
}

/* Behind: at an earlier step than the furthest rank, or more than one
 * launch short of it in the same step. One launch apart is how ranks that
 * wait for the same missing peer stand (a rank may have launched the next
 * operation while its neighbour still waits in the last: seen with a node's
 * cable cut), so it names nobody. */
static int is_behind(const cb_hang_state *a, const cb_hang_state *furthest)
{
    if (a->step != furthest->step)
        return a->step < furthest->step;
    return a->launches + 1 < furthest->launches;
}

/* "ranks 2 (h2), 5 (h3)": every rank that pick selects, with its host. */
typedef int (*rank_pick)(const cb_hang_report *rep, int r, const void *arg);

/* "rank " or "ranks " by how many ranks pick selects; returns that count. */
static int lead_word(char *line, const cb_hang_report *rep, rank_pick pick, const void *arg)
{
    int n = 0;
    for (int r = 0; r < rep->nranks; r++)
        n += pick(rep, r, arg);
    cb_append(line, CB_HANG_LINELEN, "%s", n == 1 ? "rank " : "ranks ");
    return n;
}

static int name_ranks(char *line, const cb_hang_report *rep, rank_pick pick, const void *arg)
{
    int n = lead_word(line, rep, pick, arg);
    int named = 0;
    /* Room is kept for the count and the words after it. */
    for (int r = 0; r < rep->nranks && named < NAMED_PER_LINE; r++) {
        if (!pick(rep, r, arg))
            continue;
        if (strlen(line) + strlen(rep->ranks[r].state.host) + 16 > CB_HANG_LINELEN - 96)
            break;
        cb_append(line, CB_HANG_LINELEN, "%s%d (%s)", named++ ? ", " : "", r,
                  rep->ranks[r].state.host);
    }
    if (n > named)
        cb_append(line, CB_HANG_LINELEN, " and %d more", n - named);
    return n;
}

/* "ranks 0-3,5": every rank that pick selects, as ranges, without hosts. */
static void range_ranks(char *line, const cb_hang_report *rep, rank_pick pick, const void *arg)
{
    lead_word(line, rep, pick, arg);
    int first = 1;
    for (int r = 0; r < rep->nranks; r++) {
        if (!pick(rep, r, arg))
            continue;
        int last = r;
        while (last + 1 < rep->nranks && pick(rep, last + 1, arg))
            last++;
        if (last == r)
            cb_append(line, CB_HANG_LINELEN, "%s%d", first ? "" : ",", r);
        else
            cb_append(line, CB_HANG_LINELEN, "%s%d-%d", first ? "" : ",", r, last);
        first = 0;
        r = last;
    }
}

static int pick_answer(const cb_hang_report *rep, int r, const void *arg)
{
    return rep->ranks[r].answer == *(const cb_hang_answer *)arg;
}

static int pick_at(const cb_hang_report *rep, int r, const void *arg)
{
    const cb_hang_rank *x = &rep->ranks[r];
    return x->answer == CB_HANG_ANSWERED &&
           compare_position(&x->state, (const cb_hang_state *)arg) == 0;
}

/* The ranks at the furthest position or within a launch of it. */
static int pick_waiting(const cb_hang_report *rep, int r, const void *arg)
{
    (void)arg;
    return rep->ranks[r].answer == CB_HANG_ANSWERED && !rep->ranks[r].behind;
}

static char *next_line(cb_hang_report *rep)
{
    if (rep->nlines >= CB_HANG_MAXLINES)
        return NULL;
    char *line = rep->lines[rep->nlines++];
    snprintf(line, CB_HANG_LINELEN, "# Hang: ");
    return line;
}

/* One line per position behind the furthest, lowest first. */
static void behind_lines(cb_hang_report *rep)
{
    const cb_hang_state *last = NULL;   /* the position last written */
    int lines = 0, unlisted = 0;
    for (;;) {
        /* The lowest position past the last one written. */
        const cb_hang_state *low = NULL;
        for (int r = 0; r < rep->nranks; r++) {
            const cb_hang_rank *x = &rep->ranks[r];
            if (!x->behind || (last != NULL && compare_position(&x->state, last) <= 0))
                continue;
            if (low == NULL || compare_position(&x->state, low) < 0)
                low = &x->state;
        }
        if (low == NULL)
            break;
        last = low;
        char *line = lines < BEHIND_LINES ? next_line(rep) : NULL;
        if (line == NULL) {
            for (int r = 0; r < rep->nranks; r++)
                unlisted += pick_at(rep, r, low);
            continue;
        }
        lines++;
        cb_append(line, CB_HANG_LINELEN, "behind: ");
        name_ranks(line, rep, pick_at, low);
        char where[CB_HANG_LINELEN];
        cb_hang_where(low, where, sizeof where);
        cb_append(line, CB_HANG_LINELEN, " in %s", where);
    }
    char *line = unlisted > 0 ? next_line(rep) : NULL;
    if (line != NULL)
        cb_append(line, CB_HANG_LINELEN,
                  "behind: %d more ranks at other positions (the JSON document lists all)",
                  unlisted);
}

void cb_hang_merge(cb_hang_report *rep)
{
    rep->answered = rep->silent = rep->left = rep->behind = 0;
    rep->furthest = -1;
    rep->nlines = 0;
    int unreached = 0;
    for (int r = 0; r < rep->nranks; r++) {
        cb_hang_rank *x = &rep->ranks[r];
        x->behind = 0;
        rep->answered += x->answer == CB_HANG_ANSWERED;
        rep->silent += x->answer == CB_HANG_SILENT;
        rep->left += x->answer == CB_HANG_LEFT;
        unreached += x->answer == CB_HANG_UNREACHED;
        if (x->answer == CB_HANG_ANSWERED &&
            (rep->furthest < 0 ||
             compare_position(&x->state, &rep->ranks[rep->furthest].state) > 0))
            rep->furthest = r;
    }
    for (int r = 0; r < rep->nranks && rep->furthest >= 0; r++) {
        cb_hang_rank *x = &rep->ranks[r];
        x->behind = x->answer == CB_HANG_ANSWERED &&
                    is_behind(&x->state, &rep->ranks[rep->furthest].state);
        rep->behind += x->behind;
    }

    char *line = next_line(rep);
    const char *trigger_host =
        rep->trigger >= 0 && rep->trigger < rep->nranks ? rep->ranks[rep->trigger].state.host : "";
    cb_append(line, CB_HANG_LINELEN,
              "rank %d (%s) saw no progress for %.0f s (-T); of %d rank%s, %d answered within "
              "%.0f s, %d silent", rep->trigger, trigger_host, rep->limit_s, rep->nranks,
              cb_plural(rep->nranks), rep->answered, rep->wait_s, rep->silent + unreached);
    if (rep->left > 0)
        cb_append(line, CB_HANG_LINELEN, ", %d had ended", rep->left);
    static const struct {
        cb_hang_answer answer;
        const char *label, *why;
    } kinds[] = {
        {CB_HANG_SILENT, "silent: ", " did not answer (stopped, dead or cut off)"},
        {CB_HANG_UNREACHED, "silent: ", " never reached rank 0's side channel at start-up"},
    };
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        int none = 1;
        for (int r = 0; r < rep->nranks && none; r++)
            none = rep->ranks[r].answer != kinds[k].answer;
        if (none || (line = next_line(rep)) == NULL)
            continue;
        cb_append(line, CB_HANG_LINELEN, "%s", kinds[k].label);
        name_ranks(line, rep, pick_answer, &kinds[k].answer);
        cb_append(line, CB_HANG_LINELEN, "%s", kinds[k].why);
    }
    behind_lines(rep);
    if (rep->furthest >= 0 && (line = next_line(rep)) != NULL) {
        const cb_hang_state *far = &rep->ranks[rep->furthest].state;
        char where[CB_HANG_LINELEN];
        cb_hang_where(far, where, sizeof where);
        cb_append(line, CB_HANG_LINELEN, "%s",
                  rep->behind + rep->silent + unreached > 0 ? "waiting: " : "none behind: ");
        range_ranks(line, rep, pick_waiting, NULL);
        cb_append(line, CB_HANG_LINELEN, " in %s", where);
        if (rep->behind + rep->silent + unreached == 0)
            cb_append(line, CB_HANG_LINELEN,
                      "; every rank that answered is at the same step, so the hang is inside "
                      "that operation");
    }
    if (rep->left > 0 && (line = next_line(rep)) != NULL) {
        cb_hang_answer left = CB_HANG_LEFT;
        cb_append(line, CB_HANG_LINELEN, "ended: ");
        range_ranks(line, rep, pick_answer, &left);
        cb_append(line, CB_HANG_LINELEN, " had ended their run");
    }
}

void cb_hang_print(const cb_hang_report *rep, FILE *f)
{
    for (int i = 0; i < rep->nlines; i++)
        fprintf(f, "%s\n", rep->lines[i]);
    fflush(f);
}
