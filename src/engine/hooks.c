/* The core's side of the feature table: each hook of every feature, in the
 * table's order. The table reaches the core through e->features (set by
 * lifecycle.c), so that no core file names a feature. */
#include "engine_int.h"

void cb_eng_features_setup(engine *e)
{
    for (int i = 0; i < e->nfeatures; i++)
        if (e->features[i]->setup != NULL)
            e->feature_state[i] = e->features[i]->setup(e);
}

void cb_eng_features_buffers(engine *e)
{
    for (int i = 0; i < e->nfeatures; i++)
        if (e->features[i]->buffers != NULL && e->feature_state[i] != NULL)
            e->features[i]->buffers(e, e->feature_state[i]);
}

void cb_eng_features_table_begin(engine *e, const cb_collective *coll)
{
    for (int i = 0; i < e->nfeatures; i++)
        if (e->features[i]->table_begin != NULL && e->feature_state[i] != NULL)
            e->features[i]->table_begin(e, e->feature_state[i], coll);
}

void cb_eng_features_row_before(engine *e, cb_result *res)
{
    for (int i = 0; i < e->nfeatures; i++)
        if (e->features[i]->row_before != NULL && e->feature_state[i] != NULL)
            e->features[i]->row_before(e, e->feature_state[i], res);
}

void cb_eng_features_row_after(engine *e, const char *what, const cb_result *res)
{
    for (int i = 0; i < e->nfeatures; i++)
        if (e->features[i]->row_after != NULL && e->feature_state[i] != NULL)
            e->features[i]->row_after(e, e->feature_state[i], what, res);
}

void cb_eng_features_count(engine *e, cb_eng_fault kind, unsigned long long n)
{
    for (int i = 0; i < e->nfeatures; i++)
        if (e->features[i]->count != NULL && e->feature_state[i] != NULL)
            e->features[i]->count(e, e->feature_state[i], kind, n);
}

/* How many features on measure in each cycle (cycle_run). */
int cb_eng_features_cycle_runs(const engine *e)
{
    int n = 0;
    for (int i = 0; i < e->nfeatures; i++)
        n += e->features[i]->cycle_run != NULL && e->feature_state[i] != NULL;
    return n;
}

int cb_eng_features_cycle_run(engine *e)
{
    int rc = CB_EXIT_OK;
    for (int i = 0; i < e->nfeatures && rc == CB_EXIT_OK; i++)
        if (e->features[i]->cycle_run != NULL && e->feature_state[i] != NULL)
            rc = e->features[i]->cycle_run(e, e->feature_state[i]);
    return rc;
}

void cb_eng_features_cycle_end(engine *e)
{
    for (int i = 0; i < e->nfeatures; i++)
        if (e->features[i]->cycle_end != NULL && e->feature_state[i] != NULL)
            e->features[i]->cycle_end(e, e->feature_state[i]);
}

void cb_eng_features_cycles_done(engine *e, int cycles_run)
{
    for (int i = 0; i < e->nfeatures; i++)
        if (e->features[i]->cycles_done != NULL && e->feature_state[i] != NULL)
            e->features[i]->cycles_done(e, e->feature_state[i], cycles_run);
}

void cb_eng_features_finish(engine *e)
{
    for (int i = 0; i < e->nfeatures; i++)
        if (e->features[i]->finish != NULL && e->feature_state[i] != NULL)
            e->features[i]->finish(e, e->feature_state[i]);
}

void cb_eng_features_preamble(engine *e)
{
    for (int i = 0; i < e->nfeatures; i++)
        if (e->features[i]->preamble != NULL && e->feature_state[i] != NULL)
            e->features[i]->preamble(e, e->feature_state[i]);
}

int cb_eng_features_sweep(engine *e, const cb_collective *coll, cb_dtype dtype, int *rc)
{
    for (int i = 0; i < e->nfeatures; i++)
        if (e->features[i]->sweep != NULL && e->feature_state[i] != NULL &&
            e->features[i]->sweep(e, e->feature_state[i], coll, dtype, rc))
            return 1;
    return 0;
}

int cb_eng_features_measure_begin(engine *e, const cb_eng_measure *m, int *singly)
{
    int rc = 0;
    *singly = 0;
    for (int i = 0; i < e->nfeatures && rc == 0; i++)
        if (e->features[i]->measure_begin != NULL && e->feature_state[i] != NULL)
            rc = e->features[i]->measure_begin(e, e->feature_state[i], m, singly);
    return rc;
}

int cb_eng_features_before_launch(engine *e, const cb_eng_measure *m)
{
    int rc = 0;
    for (int i = 0; i < e->nfeatures && rc == 0; i++)
        if (e->features[i]->before_launch != NULL && e->feature_state[i] != NULL)
            rc = e->features[i]->before_launch(e, e->feature_state[i], m);
    return rc;
}

int cb_eng_features_after_launch(engine *e, const cb_eng_measure *m)
{
    int rc = 0;
    for (int i = 0; i < e->nfeatures && rc == 0; i++)
        if (e->features[i]->after_launch != NULL && e->feature_state[i] != NULL)
            rc = e->features[i]->after_launch(e, e->feature_state[i], m);
    return rc;
}

void cb_eng_features_on_result(engine *e, cb_result *res)
{
    for (int i = 0; i < e->nfeatures; i++)
        if (e->features[i]->on_result != NULL && e->feature_state[i] != NULL)
            e->features[i]->on_result(e, e->feature_state[i], res);
}

void cb_eng_features_teardown(engine *e)
{
    for (int i = e->nfeatures - 1; i >= 0; i--) {
        if (e->features[i]->teardown != NULL && e->feature_state[i] != NULL)
            e->features[i]->teardown(e, e->feature_state[i]);
        e->feature_state[i] = NULL;
    }
}
