# The release tarball holds the whole tree: made as make dist makes it (the
# distdir rule and automake's own tar command, into a folder of the test's),
# it must carry every file under tests/expect/sysfs/ (names over 99 bytes,
# which the default v7 format drops) and, in a git checkout, every tracked
# file (ci/dist_contents.sh, which make distcheck also runs).
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/support/dist.sh"
mkdir "$CB_TMP/made"
make_tarball "$CB_TMP/made"
case $dist_tar in
*format=posix* | *pax*) ;;
*) fail "the tarball is not made in the pax format (tar-pax in AM_INIT_AUTOMAKE): $dist_tar" ;;
esac
name=$dist_name
cp "$tarball" "$CB_TMP/$name.tar.gz"
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
    mkdir "$CB_TMP/pkg"
    (cd "$CB_TMP/pkg" && tar xzf "$CB_TMP/$name.tar.gz" && rm -f "$name/HACKING.md" &&
        tar czf "$CB_TMP/short.tar.gz" "$name")
    sh "$CB_SRCDIR/ci/dist_contents.sh" "$CB_SRCDIR" "$CB_TMP/short.tar.gz" 2>"$CB_TMP/short.err" &&
        fail "dist_contents.sh passed a tarball without HACKING.md"
    grep -q 'HACKING.md' "$CB_TMP/short.err" || fail "dist_contents.sh: $(cat "$CB_TMP/short.err")"
fi
echo "ok"
