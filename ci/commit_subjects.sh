#!/bin/sh
# Commit subjects stay under 72 characters (HACKING.md, Commits).
# Usage: sh ci/commit_subjects.sh [BASE]
# Checks the subjects of the commits in BASE..HEAD (BASE: by default
# origin/main, else main), names each one of 72 characters or more, and
# exits 1 if there is one. Outside a git checkout, or with no BASE to
# compare with, it says so and exits 0: there is nothing it can check.
set -eu
limit=72
if ! git rev-parse --git-dir >/dev/null 2>&1; then
    echo "commit_subjects.sh: not a git checkout; nothing to check"
    exit 0
fi
base=${1:-}
if [ -z "$base" ]; then
    for b in origin/main main; do
        if git rev-parse -q --verify "$b^{commit}" >/dev/null; then
            base=$b
            break
        fi
    done
fi
if [ -z "$base" ]; then
    echo "commit_subjects.sh: no origin/main or main to compare with; nothing to check"
    exit 0
fi
git rev-parse -q --verify "$base^{commit}" >/dev/null || {
    echo "commit_subjects.sh: $base is not a commit" >&2
    exit 2
}
bad=$(git log --no-merges --format='%h %s' "$base..HEAD" |
    awk -v limit="$limit" '{ s = substr($0, index($0, " ") + 1) }
        length(s) >= limit { print $1 " (" length(s) " characters): " s }')
n=$(git rev-list --no-merges --count "$base..HEAD")
if [ -n "$bad" ]; then
    echo "commit_subjects.sh: subjects of $limit characters or more since $base:" >&2
    echo "$bad" >&2
    exit 1
fi
echo "commit_subjects.sh: $n commit(s) since $base, every subject under $limit characters"
