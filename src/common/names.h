/* Matching user-typed names against a table's name and aliases. */
#ifndef CB_NAMES_H
#define CB_NAMES_H

/*
 * True when text equals name or one of the space-separated aliases,
 * ignoring case.
 */
int cb_name_matches(const char *text, const char *name, const char *aliases);

#endif
