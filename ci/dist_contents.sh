#!/bin/sh
# dist_contents.sh SRCDIR TREE: fail (status 1) naming each file that git
# tracks in SRCDIR and that TREE lacks, where TREE is an unpacked release
# tarball (make distcheck's distcheck-hook) or the tarball itself (.tar.gz,
# read with tar). A file left out of EXTRA_DIST, or dropped by tar (a name
# too long for the archive format), then stops the release. Without git or
# a git checkout there is nothing to compare with: it says so, status 0.
set -eu
[ $# = 2 ] || { echo "usage: $0 SRCDIR TREE|TARBALL" >&2; exit 2; }
src=$1
tree=$2
# The top of a git checkout only: an unpacked tarball inside another
# checkout (make distcheck's, under the build folder) tracks nothing.
top=$(git -C "$src" rev-parse --show-toplevel 2>/dev/null || true)
if [ -z "$top" ] || [ "$(cd "$top" && pwd -P)" != "$(cd "$src" && pwd -P)" ]; then
    echo "dist_contents: $src is not the top of a git checkout; nothing to compare the tarball with"
    exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Tracked and present (a file deleted but not yet committed is not expected).
git -C "$src" ls-files -z | tr '\0' '\n' | while IFS= read -r f; do
    [ -f "$src/$f" ] && printf '%s\n' "$f"
done | LC_ALL=C sort >"$work/tracked"
case $tree in
*.tar.gz | *.tgz)
    # Names in the archive, less their first folder (PACKAGE-VERSION/).
    tar tzf "$tree" | sed -n 's|^[^/]*/||p' | grep -v '/$' | LC_ALL=C sort -u >"$work/shipped" ;;
*)
    (cd "$tree" && find . -type f | sed 's|^\./||') | LC_ALL=C sort >"$work/shipped" ;;
esac
LC_ALL=C comm -23 "$work/tracked" "$work/shipped" >"$work/missing"
if [ -s "$work/missing" ]; then
    echo "dist_contents: $(wc -l <"$work/missing") tracked file(s) missing from $tree:" >&2
    sed 's/^/  /' "$work/missing" >&2
    echo "(add them to EXTRA_DIST in Makefile.am; a name tar dropped needs tar-pax)" >&2
    exit 1
fi
echo "dist_contents: all $(wc -l <"$work/tracked") tracked files are in $tree"
