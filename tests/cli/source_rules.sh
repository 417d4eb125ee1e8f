# The source tree's own rules (HACKING.md): no C file in src/ over 700
# lines; and no asprintf or vasprintf in src/, which
# tests/support/lsan.supp relies on when it passes over leaks from
# __vasprintf_internal as Open MPI's.
. "$CB_SRCDIR/tests/support/lib.sh"
long=$(find "$CB_SRCDIR/src" -name '*.c' -exec wc -l {} + | awk '$2 != "total" && $1 > 700')
[ -z "$long" ] || fail "C files over 700 lines: $long"
if grep -rnE '\b(v?asprintf)[[:space:]]*\(' "$CB_SRCDIR/src" >"$CB_TMP/asprintf"; then
    cat "$CB_TMP/asprintf"
    fail "src/ calls asprintf or vasprintf: tests/support/lsan.supp would hide its leaks"
fi
n=$(find "$CB_SRCDIR/src" -name '*.c' | wc -l)
[ "$n" -gt 50 ] || fail "only $n C files found under $CB_SRCDIR/src"
echo "ok: $n C files"
