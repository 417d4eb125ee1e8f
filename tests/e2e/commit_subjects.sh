# ci/commit_subjects.sh names every commit since a base (given, or by
# default the commit in ci/commit_subjects.since) whose subject has 72
# characters or more and fails; it passes a history of short subjects (and
# merges are not its business); ci/commit-msg refuses a long subject and
# takes a short one. On a scratch git repository.
. "$CB_SRCDIR/tests/support/lib.sh"
command -v git >/dev/null 2>&1 || skip "no git"
check="$CB_SRCDIR/ci/commit_subjects.sh"
hook="$CB_SRCDIR/ci/commit-msg"
repo=$CB_TMP/repo
long="this subject runs on and on, naming every file and every reason it had, past 72"
git init -q "$repo" || fail "git init failed"
g() { git -C "$repo" -c user.name=t -c user.email=t@t -c commit.gpgsign=false "$@"; }
g commit -q --allow-empty -m "base" || fail "git commit failed"
g branch -q base
g commit -q --allow-empty -m "a short subject" -m "and a body line that is allowed to be as long as it likes, well past 72 characters"
(cd "$repo" && sh "$check" base) >"$CB_TMP/ok" 2>&1 ||
    { cat "$CB_TMP/ok"; fail "short subjects refused"; }
grep -q "1 commit(s) since base" "$CB_TMP/ok" || { cat "$CB_TMP/ok"; fail "count of commits"; }

g commit -q --allow-empty -m "$long"
rc=0
(cd "$repo" && sh "$check" base) >"$CB_TMP/bad" 2>&1 || rc=$?
[ "$rc" = 1 ] || { cat "$CB_TMP/bad"; fail "a ${#long}-character subject passed (rc $rc)"; }
grep -q "(${#long} characters): $long" "$CB_TMP/bad" || { cat "$CB_TMP/bad"; fail "the long subject is not named"; }
grep -q "a short subject" "$CB_TMP/bad" && { cat "$CB_TMP/bad"; fail "a short subject was named"; }

# With no BASE, as CI runs it on its clone of main (HEAD is main, so
# main..HEAD would be empty): every commit after ci/commit_subjects.since.
mkdir -p "$repo/ci"
cp "$check" "$repo/ci/commit_subjects.sh"
g rev-parse base >"$repo/ci/commit_subjects.since"
g branch -q -f main HEAD
g checkout -q main
rc=0
(cd "$repo" && sh ci/commit_subjects.sh) >"$CB_TMP/ci" 2>&1 || rc=$?
[ "$rc" = 1 ] || { cat "$CB_TMP/ci"; fail "on main, a long subject after the recorded commit passed (rc $rc)"; }
grep -q "(${#long} characters): $long" "$CB_TMP/ci" || { cat "$CB_TMP/ci"; fail "on main, the long subject is not named"; }
# Commits up to the recorded one are not its business.
g rev-parse HEAD >"$repo/ci/commit_subjects.since"
(cd "$repo" && sh ci/commit_subjects.sh) >"$CB_TMP/ci" 2>&1 ||
    { cat "$CB_TMP/ci"; fail "a long subject before the recorded commit was refused"; }
grep -q "0 commit(s) since" "$CB_TMP/ci" || { cat "$CB_TMP/ci"; fail "count since the recorded commit"; }
# A recorded commit this clone lacks (a shallow clone): every commit is checked.
echo 0123456789abcdef0123456789abcdef01234567 >"$repo/ci/commit_subjects.since"
rc=0
(cd "$repo" && sh ci/commit_subjects.sh) >"$CB_TMP/ci" 2>&1 || rc=$?
[ "$rc" = 1 ] || { cat "$CB_TMP/ci"; fail "with the recorded commit absent, a long subject passed (rc $rc)"; }

# A base that is no commit is a usage error.
rc=0
(cd "$repo" && sh "$check" no-such-base) >"$CB_TMP/nobase" 2>&1 || rc=$?
[ "$rc" = 2 ] || { cat "$CB_TMP/nobase"; fail "an unknown base gave rc $rc"; }

# The hook: the first line that is not a comment is the subject.
printf '%s\n\nbody\n' "$long" >"$CB_TMP/msg"
sh "$hook" "$CB_TMP/msg" 2>"$CB_TMP/hook" && fail "the hook took a ${#long}-character subject"
grep -q "${#long} characters" "$CB_TMP/hook" || { cat "$CB_TMP/hook"; fail "the hook's message"; }
printf '# a comment\nmpi: cut ops.c by job\n\n%s\n' "$long" >"$CB_TMP/msg"
sh "$hook" "$CB_TMP/msg" || fail "the hook refused a short subject"
exit 0
