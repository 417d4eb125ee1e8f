/* A minimal unit-test harness: CHECK records failures, unit_done reports. */
#ifndef CB_UNIT_H
#define CB_UNIT_H

#include <stdio.h>

typedef struct unit_state {
    int checks;
    int failures;
} unit_state;

#define CHECK(u, cond)                                                            \
    do {                                                                          \
        (u)->checks++;                                                            \
        if (!(cond)) {                                                            \
            (u)->failures++;                                                      \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                         \
    } while (0)

static inline int unit_done(const unit_state *u, const char *name)
{
    printf("%s: %d checks, %d failed\n", name, u->checks, u->failures);
    return u->failures ? 1 : 0;
}

#endif
