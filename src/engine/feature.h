/*
 * The feature table: how a feature driver (-B, --expect, ...) plugs into
 * the sweep core. The core calls every feature's hooks at fixed points of
 * the run through e->features; it never names a feature. Each feature owns
 * its state: setup returns it, every other hook gets it back, teardown
 * frees it. A hook left NULL is skipped. Hooks that return int give 0, or
 * -1 with e->st set.
 */
#ifndef CB_ENGINE_FEATURE_H
#define CB_ENGINE_FEATURE_H

#include "collectives/collective.h"
#include "result.h"

struct engine;

/* One measurement: coll's call at size_index, in place or not (both -1
 * around a launch, where only coll and call are given). */
typedef struct eng_measure {
    const cb_collective *coll;
    const cb_call *call;
    int size_index;
    int in_place;
} eng_measure;

typedef struct eng_feature {
    const char *name;
    /* After the buffers are allocated, on every rank: the feature's state,
     * or NULL where it is off (or failed, with e->st set). */
    void *(*setup)(struct engine *e);
    /* After the preamble's own notes: the feature's notes. */
    void (*preamble)(struct engine *e, void *state);
    /* Before a measurement's launches; *singly set to 1 asks the core to
     * launch one at a time, each waited for (and timed alone). A failure
     * is agreed on after the launches. */
    int (*measure_begin)(struct engine *e, void *state, const eng_measure *m, int *singly);
    /* Around each launch launched singly, outside any timed span. */
    int (*before_launch)(struct engine *e, void *state, const eng_measure *m);
    int (*after_launch)(struct engine *e, void *state, const eng_measure *m);
    /* After the launches were agreed on, collective over the group: the
     * feature's fields of res. */
    void (*on_result)(struct engine *e, void *state, cb_result *res);
    /* Before the buffers are freed and the backend ends. */
    void (*teardown)(struct engine *e, void *state);
} eng_feature;

/* The table (features.c), in the order the hooks run. */
extern const eng_feature *const eng_feature_table[];
extern const int eng_nfeatures;

/* The core's calls of every feature's hook (hooks.c). */
void eng_features_setup(struct engine *e);
void eng_features_preamble(struct engine *e);
int eng_features_measure_begin(struct engine *e, const eng_measure *m, int *singly);
int eng_features_before_launch(struct engine *e, const eng_measure *m);
int eng_features_after_launch(struct engine *e, const eng_measure *m);
void eng_features_on_result(struct engine *e, cb_result *res);
void eng_features_teardown(struct engine *e);

#endif
