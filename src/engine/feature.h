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
typedef struct cb_eng_measure {
    const cb_collective *coll;
    const cb_call *call;
    int size_index;
    int in_place;
} cb_eng_measure;

/* What a rank found wrong, as it finds it. */
typedef enum cb_eng_fault {
    ENG_FAULT_WRONG,          /* wrong elements (verification, the scan) */
    ENG_FAULT_UNREPEATABLE    /* launches whose output did not repeat (-B) */
} cb_eng_fault;

typedef struct cb_eng_feature {
    const char *name;
    /* A set-up step, on every rank, after the ranks' facts are gathered
     * and before the sizes are planned; collective, agreed on after: the
     * feature's state, or NULL where it is off. On a failure it sets e->st
     * and may return its state still (teardown frees it). */
    void *(*setup)(struct engine *e);
    /* Right after the buffers are allocated, on every rank, not
     * collective: the feature's own buffers, which -M counts with them. */
    void (*buffers)(struct engine *e, void *state);
    /* After the preamble's own notes: the feature's notes. */
    void (*preamble)(struct engine *e, void *state);
    /* Rank 0, as a table begins: coll is measured next. */
    void (*table_begin)(struct engine *e, void *state, const cb_collective *coll);
    /* In place of the sweep of coll in dtype: 1 where the feature measures
     * coll its own way (*rc: the sweep's status), 0 where coll is not its. */
    int (*sweep)(struct engine *e, void *state, const cb_collective *coll, cb_dtype dtype,
                 int *rc);
    /* Before a measurement's launches; *singly set to 1 asks the core to
     * launch one at a time, each waited for (and timed alone). A failure
     * is agreed on after the launches. */
    int (*measure_begin)(struct engine *e, void *state, const cb_eng_measure *m, int *singly);
    /* Around each launch launched singly, outside any timed span. */
    int (*before_launch)(struct engine *e, void *state, const cb_eng_measure *m);
    int (*after_launch)(struct engine *e, void *state, const cb_eng_measure *m);
    /* After the launches were agreed on, collective over the group: the
     * feature's fields of res. */
    void (*on_result)(struct engine *e, void *state, cb_result *res);
    /* On the rank that found them: n of kind (n may be 0). */
    void (*count)(struct engine *e, void *state, cb_eng_fault kind, unsigned long long n);
    /* Every rank, in each cycle after its collectives (collective): the
     * feature's own measurements (the health scan). Returns CB_EXIT_OK to
     * go on, else the code that ends the cycles. A feature with this hook
     * on is measuring: the core does not call a cycle without rows empty. */
    int (*cycle_run)(struct engine *e, void *state);
    /* Every rank, after each cycle of -N, and after the last (collective;
     * cycles_run of them ran). */
    void (*cycle_end)(struct engine *e, void *state);
    void (*cycles_done)(struct engine *e, void *state, int cycles_run);
    /* Rank 0, each half of a row: before the printers have it (res is the
     * row's copy, the feature may fill its fields), and after, with what
     * names the row (the feature's gate and notes). */
    void (*row_before)(struct engine *e, void *state, cb_result *res);
    void (*row_after)(struct engine *e, void *state, const char *what, const cb_result *res);
    /* Rank 0, before the printers end: the feature's last notes and
     * counts in the summary. */
    void (*finish)(struct engine *e, void *state);
    /* With the buffers, before the backend ends. */
    void (*teardown)(struct engine *e, void *state);
} cb_eng_feature;

/* The table (features.c), in the order the hooks run. */
extern const cb_eng_feature *const cb_eng_feature_table[];
extern const int cb_eng_nfeatures;

/* The core's calls of every feature's hook (hooks.c). */
void cb_eng_features_setup(struct engine *e);
void cb_eng_features_buffers(struct engine *e);
void cb_eng_features_preamble(struct engine *e);
void cb_eng_features_table_begin(struct engine *e, const cb_collective *coll);
int cb_eng_features_sweep(struct engine *e, const cb_collective *coll, cb_dtype dtype, int *rc);
int cb_eng_features_measure_begin(struct engine *e, const cb_eng_measure *m, int *singly);
int cb_eng_features_before_launch(struct engine *e, const cb_eng_measure *m);
int cb_eng_features_after_launch(struct engine *e, const cb_eng_measure *m);
void cb_eng_features_on_result(struct engine *e, cb_result *res);
void cb_eng_features_row_before(struct engine *e, cb_result *res);
void cb_eng_features_row_after(struct engine *e, const char *what, const cb_result *res);
void cb_eng_features_count(struct engine *e, cb_eng_fault kind, unsigned long long n);
int cb_eng_features_cycle_runs(const struct engine *e);
int cb_eng_features_cycle_run(struct engine *e);
void cb_eng_features_cycle_end(struct engine *e);
void cb_eng_features_cycles_done(struct engine *e, int cycles_run);
void cb_eng_features_finish(struct engine *e);
void cb_eng_features_teardown(struct engine *e);

#endif
