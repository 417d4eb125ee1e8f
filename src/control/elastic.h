/*
 * torchrun's elastic agent, as its workers see it: the error file it hands
 * each worker (TORCHELASTIC_ERROR_FILE), which its failure report reads,
 * and the attempt a worker is (TORCHELASTIC_RESTART_COUNT, 0 the first).
 * Read through a reader of the environment so that tests can fake one.
 */
#ifndef CB_ELASTIC_H
#define CB_ELASTIC_H

#include <stddef.h>

/* TORCHELASTIC_RESTART_COUNT: the attempt (0 the first), or -1 when unset
 * or not a whole number from 0. */
int cb_elastic_restart_count(const char *(*get)(const char *));

/*
 * When TORCHELASTIC_ERROR_FILE is set and code is not 0: write it as
 * PyTorch's ErrorHandler.record_exception does (the agent reads
 * message.message and message.extraInfo.timestamp; errorCode is the field
 * the agent itself fills with a worker's status), replacing what is there,
 * as record_exception does: torchrun gives every attempt and rank a path of
 * its own. message: what went wrong, one line. Returns 0, or -1 with a line
 * in err when the file cannot be written (nothing when it is not asked for).
 */
int cb_elastic_error_file(const char *(*get)(const char *), int code, const char *message,
                          char *err, size_t len);

/*
 * Before attempt restart (>= 1) writes path: an earlier attempt's file
 * there is kept as PATH.before-attemptN, so that a retry that passes does
 * not silently replace a failure's record. 0 when there was nothing to
 * keep or it was kept (*kept then names where, "" when nothing), -1 with
 * a line in err when it could not be (the run must not overwrite it).
 */
int cb_elastic_keep_earlier(const char *path, int restart, char *kept, size_t kept_len,
                            char *err, size_t len);

#endif
