/* Secrets in the environment are written as set, never shown (redact.h). */
#include "common/redact.h"

#include <ctype.h>
#include <string.h>

/* Words that mark a variable as a secret; matched anywhere in the name, so
 * that NCCL_COLLBENCH_KEY, AWS_SECRET_ACCESS_KEY, HF_TOKEN and
 * DB_PASSWORD all count. Too many rather than too few: a name wrongly
 * hidden costs a reader one value, a key shown costs the job. */
static const char *const secret_words[] = {"KEY", "SECRET", "TOKEN", "PASSWORD", "CREDENTIAL"};

static int contains_word(const char *name, size_t len, const char *word)
{
    size_t wlen = strlen(word);
    for (size_t at = 0; at + wlen <= len; at++) {
        size_t i = 0;
        while (i < wlen && toupper((unsigned char)name[at + i]) == word[i])
            i++;
        if (i == wlen)
            return 1;
    }
    return 0;
}

int cb_env_name_secret(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof secret_words / sizeof secret_words[0]; i++)
        if (contains_word(name, len, secret_words[i]))
            return 1;
    return 0;
}

const char *cb_env_shown_value(const char *entry)
{
    const char *eq = strchr(entry, '=');
    if (eq == NULL)
        return "";
    return cb_env_name_secret(entry, (size_t)(eq - entry)) ? CB_REDACTED : eq + 1;
}
