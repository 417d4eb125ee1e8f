#include "common/names.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

int cb_name_matches(const char *text, const char *name, const char *aliases)
{
    if (strcasecmp(text, name) == 0)
        return 1;
    size_t len = strlen(text);
    const char *p = aliases;
    while (p != NULL && *p != '\0') {
        const char *end = strchr(p, ' ');
        size_t alias_len = end ? (size_t)(end - p) : strlen(p);
        if (alias_len == len && len > 0 && strncasecmp(p, text, len) == 0)
            return 1;
        p = end ? end + 1 : NULL;
    }
    return 0;
}

/* Edit distance between a and b, case ignored: insertions, deletions,
 * substitutions and swaps of two neighbours ("flaot") each cost 1. Names
 * are short; longer words are cut at CB_NAME_MAX characters. */
#define CB_NAME_MAX 63

static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > CB_NAME_MAX)
        la = CB_NAME_MAX;
    if (lb > CB_NAME_MAX)
        lb = CB_NAME_MAX;
    /* Three rows of the table: two back, one back, this one. */
    size_t rows[3][CB_NAME_MAX + 1];
    for (size_t j = 0; j <= lb; j++)
        rows[1][j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t *cur = rows[(i + 1) % 3], *prev = rows[i % 3], *prev2 = rows[(i + 2) % 3];
        cur[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            int ca = tolower((unsigned char)a[i - 1]), cb = tolower((unsigned char)b[j - 1]);
            size_t best = prev[j - 1] + (ca != cb);
            if (prev[j] + 1 < best)
                best = prev[j] + 1;
            if (cur[j - 1] + 1 < best)
                best = cur[j - 1] + 1;
            if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
                tolower((unsigned char)a[i - 2]) == cb && prev2[j - 2] + 1 < best)
                best = prev2[j - 2] + 1;
            cur[j] = best;
        }
    }
    return rows[(la + 1) % 3][lb];
}

void cb_nearest_start(cb_nearest *n, const char *text)
{
    n->text = text;
    n->best[0] = '\0';
    n->distance = (size_t)-1;
}

/* One candidate of len characters at name. */
static void offer(cb_nearest *n, const char *name, size_t len)
{
    char word[CB_NAME_MAX + 1];
    if (len == 0 || len > CB_NAME_MAX)
        return;
    memcpy(word, name, len);
    word[len] = '\0';
    /* A typo changes few letters: a third of the name, at least one. */
    size_t limit = len / 3 > 1 ? len / 3 : 1;
    size_t d = edit_distance(n->text, word);
    if (d <= limit && d < n->distance) {
        n->distance = d;
        memcpy(n->best, word, len + 1);
    }
}

void cb_nearest_offer(cb_nearest *n, const char *names)
{
    for (const char *p = names; p != NULL && *p != '\0';) {
        const char *end = strchr(p, ' ');
        offer(n, p, end ? (size_t)(end - p) : strlen(p));
        p = end ? end + 1 : NULL;
    }
}

const char *cb_nearest_name(const cb_nearest *n)
{
    return n->best[0] != '\0' ? n->best : NULL;
}
