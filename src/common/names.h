/* Matching user-typed names against a table's name and aliases. */
#ifndef CB_NAMES_H
#define CB_NAMES_H

#include <stddef.h>

/*
 * True when text equals name or one of the space-separated aliases,
 * ignoring case.
 */
int cb_name_matches(const char *text, const char *name, const char *aliases);

/*
 * "Did you mean": the name nearest to a misspelt word among those offered,
 * by edit distance with case ignored (an insertion, deletion, substitution
 * or swap of two neighbours costs 1), and only when it is near enough to
 * be a likely typo: at most a third of the name's letters, at least 1.
 * Ties keep the first offered. Pure: no I/O, no allocation.
 */

typedef struct cb_nearest {
    const char *text;      /* the word the user typed */
    char best[64];         /* the nearest name so far, "" when none */
    size_t distance;
} cb_nearest;

void cb_nearest_start(cb_nearest *n, const char *text);
/* Offer one name, or several separated by spaces (a table's aliases). */
void cb_nearest_offer(cb_nearest *n, const char *names);
/* The nearest name offered, or NULL when none is near enough. */
const char *cb_nearest_name(const cb_nearest *n);

#endif
