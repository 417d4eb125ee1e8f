#!/bin/sh
# Commit subjects stay under 72 characters (HACKING.md, Commits).
# Usage: sh ci/commit_subjects.sh [BASE]
# Checks the subjects of the commits in BASE..HEAD, names each one of 72
# characters or more, and exits 1 if there is one.
#
# Without BASE it checks every commit after the one named in
# ci/commit_subjects.since: the history before it has long subjects that
# cannot be rewritten on main, and everything after it must be short. That
# range is never empty on CI's clone of main (comparing with main itself
# was, so the check could not fail there). In a shallow clone that lacks
# that commit, every commit present is newer than it and all are checked.
# Outside a git checkout it says so and exits 0.
set -eu
limit=72
here=$(cd "$(dirname "$0")" && pwd)
if ! git rev-parse --git-dir >/dev/null 2>&1; then
    echo "commit_subjects.sh: not a git checkout; nothing to check"
    exit 0
fi
base=${1:-}
if [ -n "$base" ]; then
    git rev-parse -q --verify "$base^{commit}" >/dev/null || {
        echo "commit_subjects.sh: $base is not a commit" >&2
        exit 2
    }
    range="$base..HEAD"
    what="since $base"
else
    since=$(sed -n '/^[0-9a-f]\{7,40\}$/p' "$here/commit_subjects.since" 2>/dev/null | head -n 1)
    [ -n "$since" ] || {
        echo "commit_subjects.sh: $here/commit_subjects.since names no commit" >&2
        exit 2
    }
    if git rev-parse -q --verify "$since^{commit}" >/dev/null; then
        range="$since..HEAD"
        what="since $since (ci/commit_subjects.since)"
    else
        range=HEAD
        what="in this shallow clone (it lacks $since)"
    fi
fi
bad=$(git log --no-merges --format='%h %s' $range |
    awk -v limit="$limit" '{ s = substr($0, index($0, " ") + 1) }
        length(s) >= limit { print $1 " (" length(s) " characters): " s }')
n=$(git rev-list --no-merges --count $range)
if [ -n "$bad" ]; then
    echo "commit_subjects.sh: subjects of $limit characters or more $what:" >&2
    echo "$bad" >&2
    exit 1
fi
echo "commit_subjects.sh: $n commit(s) $what, every subject under $limit characters"
