# Every global symbol the tool's library defines carries the cb_ prefix
# (HACKING.md, "Rules the code keeps"), so that no name of ours can clash
# with MPI's, NCCL's, CUDA's or a user's. The one exception is what the
# compiler adds for a cb_ global itself: AddressSanitizer's ODR indicator,
# "__odr_asan.cb_NAME", one per global variable in the sanitizer build
# (GCC 12 has no option to leave them out; they name our symbol, so they
# cannot clash either). The check is also shown to name a bad symbol.
. "$CB_SRCDIR/tests/support/lib.sh"
command -v nm >/dev/null 2>&1 || skip "no nm"
lib="$CB_BUILDDIR/src/libcollbench.a"
[ -f "$lib" ] || fail "no $lib"

# The unprefixed global symbols defined in the archives or objects given.
unprefixed() {
    nm -g --defined-only "$@" 2>/dev/null |
        awk 'NF == 3 { print $3 }' |
        grep -v -e '^cb_' -e '^__odr_asan\.cb_' || true
}

# The check names a symbol without the prefix.
printf 'int helper_without_prefix(void) { return 1; }\nint cb_fine(void) { return 0; }\n' \
    >"$CB_TMP/bad.c"
${CC:-cc} -c -o "$CB_TMP/bad.o" "$CB_TMP/bad.c" || skip "no C compiler to test the check with"
[ "$(unprefixed "$CB_TMP/bad.o")" = helper_without_prefix ] ||
    fail "the check did not name exactly the unprefixed symbol: $(unprefixed "$CB_TMP/bad.o")"

bad=$(unprefixed "$lib")
[ -z "$bad" ] || fail "global symbols without the cb_ prefix in libcollbench.a: $(echo $bad)"
exit 0
