# The man page lints clean and documents every option that --help lists.
. "$CB_SRCDIR/tests/support/lib.sh"
page="$CB_BUILDDIR/man/nccl-collbench.1"
[ -f "$page" ] || fail "$page was not built"
if command -v mandoc >/dev/null 2>&1; then
    mandoc -Tlint -W warning "$page" >"$CB_TMP/lint" 2>&1 || { cat "$CB_TMP/lint"; fail "mandoc -Tlint reports problems"; }
else
    echo "note: mandoc not installed, lint skipped; checking the options only"
fi
need_mpirun
run 1 --help
expect_rc 0 "--help"
for opt in $(grep -oE -- '--[a-z][a-z0-9-]+' "$CB_TMP/out" | sort -u); do
    escaped=$(printf '%s' "$opt" | sed 's/-/\\\\-/g')
    grep -qF -- "$opt" "$page" || grep -q -- "$escaped" "$page" || fail "man page lacks $opt"
done
for section in 'EXIT STATUS' 'CSV OUTPUT' 'EXAMPLES' 'OUTPUT'; do
    grep -q "^\.SH \"*$section" "$page" || fail "man page lacks section $section"
done
echo "ok"
