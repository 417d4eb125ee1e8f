# make_tarball DIR: the release tarball made as make dist makes it (the
# distdir rule and automake's own tar command, read from the build's
# Makefile), into DIR; sets dist_name (PACKAGE-VERSION), dist_tar (its
# command) and tarball (the .tar.gz). Sourced after lib.sh; skips (77)
# without tar, gzip or make.
make_tarball() {
    command -v tar >/dev/null 2>&1 && command -v gzip >/dev/null 2>&1 ||
        skip "tar or gzip is missing, so no tarball can be made"
    MAKE=${MAKE:-make}
    # Under make check the parent's flags would make these makes print
    # "Entering directory" lines into what is read back.
    unset MAKEFLAGS MFLAGS MAKELEVEL
    command -v "$MAKE" >/dev/null 2>&1 || skip "no make to run the distdir rule"
    cat >"$1/print-dist.mk" <<'MK'
print-dist: ; @printf '%s\n%s\n' '$(distdir)' '$(am__tar)'
MK
    "$MAKE" -s --no-print-directory -C "$CB_BUILDDIR" -f Makefile -f "$1/print-dist.mk" \
        print-dist >"$1/dist" || fail "cannot read the distdir and tar command from $CB_BUILDDIR/Makefile"
    dist_name=$(sed -n 1p "$1/dist")
    dist_tar=$(sed -n 2p "$1/dist")
    mkdir "$1/pkg"
    "$MAKE" -s -C "$CB_BUILDDIR" distdir distdir="$1/pkg/$dist_name" >"$1/distdir.log" 2>&1 ||
        { cat "$1/distdir.log"; fail "make distdir"; }
    tarball="$1/$dist_name.tar.gz"
    # shellcheck disable=SC2034 # tardir is read by automake's tar command
    (cd "$1/pkg" && tardir=$dist_name && eval "$dist_tar") 2>"$1/tar.err" | gzip -c >"$tarball"
    grep -i 'too long\|not dumped' "$1/tar.err" && fail "tar dropped files"
    rm -rf "$1/pkg/$dist_name"
}
