#include "common/names.h"

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
