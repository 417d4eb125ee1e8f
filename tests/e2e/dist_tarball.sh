# The release tarball holds the whole tree: made as make dist makes it (the
# distdir rule and automake's own tar command, into a folder of the test's),
# it must carry every file under tests/expect/sysfs/ (names over 99 bytes,
# which the default v7 format drops) and, in a git checkout, every tracked
# file (ci/dist_contents.sh, which make distcheck also runs).
. "$CB_SRCDIR/tests/support/lib.sh"
command -v tar >/dev/null 2>&1 && command -v gzip >/dev/null 2>&1 ||
    skip "tar or gzip is missing, so no tarball can be made"
MAKE=${MAKE:-make}
command -v "$MAKE" >/dev/null 2>&1 || skip "no make to run the distdir rule"

cat >"$CB_TMP/print.mk" <<'MK'
print-dist: ; @printf '%s\n%s\n' '$(distdir)' '$(am__tar)'
MK
"$MAKE" -s --no-print-directory -C "$CB_BUILDDIR" -f Makefile -f "$CB_TMP/print.mk" print-dist >"$CB_TMP/dist" ||
    fail "cannot read the distdir and tar command from $CB_BUILDDIR/Makefile"
name=$(sed -n 1p "$CB_TMP/dist")
am_tar=$(sed -n 2p "$CB_TMP/dist")
case $am_tar in
*format=posix* | *pax*) ;;
*) fail "the tarball is not made in the pax format (tar-pax in AM_INIT_AUTOMAKE): $am_tar" ;;
esac

mkdir "$CB_TMP/pkg"
"$MAKE" -s -C "$CB_BUILDDIR" distdir distdir="$CB_TMP/pkg/$name" >"$CB_TMP/distdir.log" 2>&1 ||
    { cat "$CB_TMP/distdir.log"; fail "make distdir"; }
# shellcheck disable=SC2034 # tardir is read by automake's tar command
(cd "$CB_TMP/pkg" && tardir=$name && eval "$am_tar") 2>"$CB_TMP/tar.err" |
    gzip -c >"$CB_TMP/$name.tar.gz"
grep -i 'too long\|not dumped' "$CB_TMP/tar.err" && fail "tar dropped files"
tar tzf "$CB_TMP/$name.tar.gz" | sed -n 's|^[^/]*/||p' | sort -u >"$CB_TMP/listed"

(cd "$CB_SRCDIR" && find tests/expect/sysfs -type f) | sort >"$CB_TMP/sysfs"
[ "$(wc -l <"$CB_TMP/sysfs")" -ge 50 ] || fail "only $(wc -l <"$CB_TMP/sysfs") sysfs fixture files found"
missing=$(comm -23 "$CB_TMP/sysfs" "$CB_TMP/listed")
[ -z "$missing" ] || fail "sysfs fixtures missing from the tarball:
$missing"

sh "$CB_SRCDIR/ci/dist_contents.sh" "$CB_SRCDIR" "$CB_TMP/$name.tar.gz" ||
    fail "the tarball lacks tracked files"
# The check itself fails on a tarball that lacks a tracked file.
if [ "$(git -C "$CB_SRCDIR" rev-parse --show-toplevel 2>/dev/null)" = "$(cd "$CB_SRCDIR" && pwd -P)" ]; then
    (cd "$CB_TMP/pkg" && rm -f "$name/HACKING.md" && tar czf "$CB_TMP/short.tar.gz" "$name")
    sh "$CB_SRCDIR/ci/dist_contents.sh" "$CB_SRCDIR" "$CB_TMP/short.tar.gz" 2>"$CB_TMP/short.err" &&
        fail "dist_contents.sh passed a tarball without HACKING.md"
    grep -q 'HACKING.md' "$CB_TMP/short.err" || fail "dist_contents.sh: $(cat "$CB_TMP/short.err")"
fi
echo "ok"
