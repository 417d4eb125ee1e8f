/* The health scan's verdict: robust scoring of nodes, node pairs (links)
 * and rails against the median of their class, in two steps so that
 * nobody is named on one noisy measurement:
 *
 *   cb_scan_candidates(&in, &v)        who looks slow or wrong
 *   for each candidate c needing it:   cb_scan_remeasure_of(&in, c, &what),
 *                                      cb_scan_control_of(&in, v, c, &ctl),
 *                                      up to CB_SCAN_REMEASURES times:
 *                                      measure `what` alone, then `ctl`
 *                                      alone (when there is one),
 *                                      cb_scan_recheck(c, figure, control),
 *                                      and stop once
 *                                      cb_scan_cleared_for_sure(v, c)
 *   cb_scan_unmasked_links(&in, &v)    links a cleared node hid; each
 *                                      re-measured as above
 *   cb_scan_settle(&v)                 keep only those still slow: suspects
 *   cb_scan_confidence(c)              how far each suspect can be trusted
 *   cb_scan_verdict_free(&v)
 *
 * Each part is compared with the others of its kind, never with itself
 * (with 2 rails the reference is the other rail, not the mean of both),
 * and a re-measure with a control of its kind measured beside it, so
 * that neither the load of the moment nor one lucky figure in the
 * reference names a healthy part. Pure: no MPI, no I/O. Figures are GB/s;
 * NaN means "not measured". */
#ifndef CB_SCAN_VERDICT_H
#define CB_SCAN_VERDICT_H

#define CB_SCAN_THRESHOLD_DEFAULT 0.8
/* A candidate is measured alone up to this many times and accused only
 * when every figure is slow: a rank descheduled once (a shared or
 * oversubscribed node) clears on the next try, a slow part never does. */
#define CB_SCAN_REMEASURES 3
/* and each re-measure runs this many times the scan's iterations: a figure
 * of a few milliseconds is at the mercy of one descheduled rank. */
#define CB_SCAN_REMEASURE_LONGER 4
/* and at least long enough to last this many seconds at the pace of its
 * scan figure: 12 operations of 256 KiB between 2 ranks take about 1 ms,
 * and one rank descheduled for 10 ms on a loaded machine made a healthy
 * node read 0.3 of its control in every try. */
#define CB_SCAN_REMEASURE_MIN_S 0.1
/* A re-measure's iterations never exceed this many times the least. */
#define CB_SCAN_REMEASURE_MOST 64

/* What a finding accuses and why. */
typedef enum cb_scan_reason {
    CB_SCAN_NODE_FIGURE = 0, /* node a's own all-reduce is slow */
    CB_SCAN_NODE_PAIRS,      /* node a is slow in 3 in 4 of its pairs or more */
    CB_SCAN_NODE_WRONG,      /* node a's ranks saw wrong elements */
    CB_SCAN_LINK,            /* pair a-b is slow, neither node slow in its pairs */
    CB_SCAN_RAIL             /* rail a (local index a) is slow */
} cb_scan_reason;

/* The measurements. Any array may be NULL (that part was not run). */
typedef struct cb_scan_input {
    int nnodes;
    const double *node_busbw;          /* [nnodes] each node's own all-reduce */
    const double *pair_bw;             /* [nnodes * nnodes] row-major; [a*n+b] and
                                        * [b*n+a] are the same pair: the lower of
                                        * the two finite ones counts */
    int nrails;
    const double *rail_busbw;          /* [nrails] */
    const unsigned long long *wrong;   /* [nnodes] wrong elements seen per node */
    double threshold;                  /* below threshold x median is slow; 0:
                                        * CB_SCAN_THRESHOLD_DEFAULT */
} cb_scan_input;

/* The robust centre and spread of one class of figures. */
typedef struct cb_scan_class {
    double median;     /* NaN when the class has no finite figure */
    double mad;        /* median absolute deviation from median */
    int n;             /* finite figures */
} cb_scan_class;

typedef struct cb_scan_finding {
    cb_scan_reason reason;
    int a, b;            /* node (a), link (a < b), rail (a); b = -1 otherwise */
    double first;        /* the figure the scan measured */
    double again;        /* the best re-measured figure; NaN until cb_scan_recheck */
    double best_control; /* the best control measured beside the re-measures; NaN: none */
    double figure;       /* the figure judged: again when finite, else first */
    double median;       /* the reference it is compared with: the median of
                          * the others of its kind, or the control measured
                          * beside the re-measures (the best of them) */
    double ratio;        /* figure / median */
    double first_median; /* the first reference: the median of the others */
    int reference_n;     /* figures the first reference was the median of */
    int controlled;      /* the judged figure was compared with a control */
    unsigned long long wrong; /* CB_SCAN_NODE_WRONG: the count */
    int needs_remeasure; /* 0 for wrong elements: a count is not noise */
} cb_scan_finding;

/* How far a suspect can be trusted (cb_scan_confidence):
 * certain  wrong elements (a count, not a timing);
 * high     slow in every measurement, against a control measured beside
 *          it, and first against the median of 3 figures or more;
 * medium   as high but with no control (none of its kind was left to
 *          measure), or within a quarter of the threshold;
 * low      its kind had only 1 or 2 other figures (3 nodes' pairs, 2
 *          rails, 2 or 3 nodes): a slow part cannot be told from a fast
 *          reference. */
typedef enum cb_scan_confidence_level {
    CB_SCAN_CONFIDENCE_LOW,
    CB_SCAN_CONFIDENCE_MEDIUM,
    CB_SCAN_CONFIDENCE_HIGH,
    CB_SCAN_CONFIDENCE_CERTAIN
} cb_scan_confidence_level;

typedef struct cb_scan_verdict {
    double threshold;         /* suspects: below threshold x reference */
    double screen;            /* candidates: below screen x reference */
    cb_scan_class nodes, pairs, rails;
    double *node_pair_score;  /* [nnodes] median of each node's pairs (NaN: none) */
    cb_scan_class node_scores;/* over node_pair_score */
    int n;                    /* findings */
    cb_scan_finding *items;
} cb_scan_verdict;

/* What to measure again, alone, for one candidate. */
typedef enum cb_scan_part { CB_SCAN_PART_NODE, CB_SCAN_PART_PAIR, CB_SCAN_PART_RAIL } cb_scan_part;
typedef struct cb_scan_remeasure {
    cb_scan_part part;
    int a, b;   /* node a; pair a-b (a < b); rail a; b = -1 when unused */
} cb_scan_remeasure;

/* The bound below which a part is a candidate, for a threshold T:
 * 3T, at most CB_SCAN_THRESHOLD_DEFAULT, never below T. On a loaded machine
 * the scan slows every part and compresses a fault's ratio (a host slowed
 * 50 ms an operation read 0.13 of the others, 8 ranks at a load of 20),
 * while its re-measure alone, which is judged at T, shows it whole: a low
 * T must not make the scan blind. */
double cb_scan_screen(double threshold);

/* Median and MAD of the finite values of x[0..n-1]. */
cb_scan_class cb_scan_class_of(const double *x, int n);

/* Score the input; v gets the candidates, parts below cb_scan_screen(T)
 * x their reference (in the order: nodes by number, links, rails).
 * Returns 0, -1 when out of memory or the threshold is not in (0, 1] (v
 * is then empty). A healthy set yields no candidate. */
int cb_scan_candidates(const cb_scan_input *in, cb_scan_verdict *v);

/* What the caller re-measures for c: node figure: that node's all-reduce;
 * a node slow in its pairs: its pair with its fastest partner that is no
 * candidate itself (if even that is slow, the node is); a link: that pair;
 * a rail: that rail. Returns 0, or -1 when c needs no re-measure. */
int cb_scan_remeasure_of(const cb_scan_input *in, const cb_scan_verdict *v,
                         const cb_scan_finding *c, cb_scan_remeasure *what);

/* The control measured beside c's re-measure: a part of the same kind that
 * is no candidate, the one whose figure is nearest c's reference (a node;
 * for a node slow in its pairs, a pair of two other nodes; for a link,
 * another pair; a rail). Returns 0, or -1 when there is none. */
int cb_scan_control_of(const cb_scan_input *in, const cb_scan_verdict *v,
                       const cb_scan_finding *c, cb_scan_remeasure *what);

/* The scan's figure of a part to re-measure (NaN when not measured). */
double cb_scan_figure_of(const cb_scan_input *in, const cb_scan_remeasure *what);

/* Iterations for a re-measure of a part whose scan figure is `figure` GB/s,
 * at `bytes` per rank: enough for CB_SCAN_REMEASURE_MIN_S at that pace, at
 * least `least` (also when the figure is unknown), at most
 * CB_SCAN_REMEASURE_MOST x least. A slow part costs no more than before. */
int cb_scan_remeasure_iters(double bytes, double figure, int least);

/* Record one re-measured figure of c (NaN: that re-measure failed) and the
 * control's measured beside it (NaN: none or failed; c's first reference
 * stands while no control succeeded). The best re-measure so far is judged
 * against the best control so far, the first figure only when no
 * re-measure succeeded. For a node slow in its pairs the figure is the
 * re-measured pair's. */
void cb_scan_recheck(cb_scan_finding *c, double again, double control);

/* c's confidence, and its name ("low", "medium", "high", "certain"). */
cb_scan_confidence_level cb_scan_confidence(const cb_scan_verdict *v, const cb_scan_finding *c);
const char *cb_scan_confidence_name(cb_scan_confidence_level level);

/* Whether c's judged figure is no longer slow (wrong elements never clear). */
int cb_scan_cleared(const cb_scan_verdict *v, const cb_scan_finding *c);

/* Whether c needs no further re-measure: measured again at least once, and
 * cleared against its best control and against its first reference alike.
 * A control slowed by a load spike in the first try (8 ranks on 2 cores: a
 * pair alone at 0.02 GB/s instead of 0.4) clears a slow part against that
 * control alone; the next tries
 * then measure it again, and cb_scan_settle judges the best of each. */
int cb_scan_cleared_for_sure(const cb_scan_verdict *v, const cb_scan_finding *c);

/* After the re-measures: the links that a node slow in its pairs hid
 * (no link of such a node is a candidate) and that node has since cleared.
 * On a loaded machine one node can read slow to every partner in the scan
 * and fine alone; its pairs below screen x the median of the pairs of
 * nodes not still slow are then links, added to v as candidates to
 * re-measure (after the others, before cb_scan_settle). Returns how many. */
int cb_scan_unmasked_links(const cb_scan_input *in, cb_scan_verdict *v);

/* Drop the candidates whose judged figure is no longer below threshold x
 * median; what is left are the suspects. */
void cb_scan_settle(cb_scan_verdict *v);

void cb_scan_verdict_free(cb_scan_verdict *v);

#endif
