# ci/demo.sh (the Quick start's first command) on systems it can only
# pretend to be, through CB_DEMO_DRY_RUN=1: it installs only what building
# and running need, with apt on Debian and dnf on the RHEL family, prints
# the package names elsewhere or without root, never installs a daemon,
# and skips autogen and configure once a build is configured.
. "$CB_SRCDIR/tests/support/lib.sh"
demo="$CB_SRCDIR/ci/demo.sh"

# A PATH with no compiler, make, autotools or MPI: only what the script
# itself calls.
mkdir "$CB_TMP/bin"
for tool in dirname sed tr id; do
    where=$(command -v "$tool") || skip "no $tool here"
    ln -s "$where" "$CB_TMP/bin/$tool"
done
printf 'ID=debian\nVERSION_ID="12"\n' >"$CB_TMP/debian"
printf 'ID="rocky"\nID_LIKE="rhel centos fedora"\n' >"$CB_TMP/rocky"
printf 'ID=ubuntu\nID_LIKE=debian\n' >"$CB_TMP/ubuntu"
printf 'ID=arch\n' >"$CB_TMP/arch"

# demo OS-RELEASE [BUILD_DIR]: the dry run on a bare PATH, output in $CB_TMP/demo.
demo() {
    rc=0
    PATH="$CB_TMP/bin" CB_DEMO_DRY_RUN=1 CB_DEMO_OS_RELEASE="$CB_TMP/$1" \
        CB_DEMO_MPI_DIRS=/nonexistent BUILD_DIR="${2:-$CB_TMP/nobuild}" \
        /bin/sh "$demo" >"$CB_TMP/demo" 2>&1 || rc=$?
}
no_daemon() {
    grep -Eiq 'slurm|munge|prometheus|exporter|sshd' "$CB_TMP/demo" &&
        fail "$1: the demo would install a daemon: $(cat "$CB_TMP/demo")"
    return 0
}

as_root=1
[ "$(id -u)" = 0 ] || as_root=0
if [ "$as_root" = 1 ] || command -v sudo >/dev/null 2>&1; then
    ln -s "$(command -v sudo || echo /bin/true)" "$CB_TMP/bin/sudo"
    demo debian
    [ "$rc" = 0 ] || fail "debian dry run: status $rc: $(cat "$CB_TMP/demo")"
    grep -q 'apt-get install -y --no-install-recommends libopenmpi-dev openmpi-bin gcc make autoconf automake$' \
        "$CB_TMP/demo" || fail "debian: $(cat "$CB_TMP/demo")"
    no_daemon debian
    demo ubuntu
    grep -q 'apt-get install .* libopenmpi-dev openmpi-bin gcc make autoconf automake$' "$CB_TMP/demo" ||
        fail "ubuntu (ID_LIKE=debian): $(cat "$CB_TMP/demo")"
    demo rocky
    [ "$rc" = 0 ] || fail "rocky dry run: status $rc: $(cat "$CB_TMP/demo")"
    grep -q 'dnf install -y openmpi-devel openmpi gcc make autoconf automake$' "$CB_TMP/demo" ||
        fail "rocky: $(cat "$CB_TMP/demo")"
    no_daemon rocky
    grep -q 'would run: ci/build.sh' "$CB_TMP/demo" || fail "no build planned: $(cat "$CB_TMP/demo")"
    grep -q 'would run: mpirun --oversubscribe -np 2 .*/src/nccl-collbench .*-o allreduce' "$CB_TMP/demo" ||
        fail "no run planned: $(cat "$CB_TMP/demo")"
    rm "$CB_TMP/bin/sudo"
fi

# Another system: the package names for both families, status 1.
demo arch
[ "$rc" = 1 ] || fail "unknown system: status $rc, expected 1"
grep -q 'apt-get install libopenmpi-dev' "$CB_TMP/demo" && grep -q 'dnf install openmpi-devel' "$CB_TMP/demo" ||
    fail "unknown system: $(cat "$CB_TMP/demo")"
no_daemon arch

# Neither root nor sudo: what to install, as root, and status 1.
# The link first: writing through it would overwrite the real id.
rm -f "$CB_TMP/bin/id"
printf '#!/bin/sh\necho 1000\n' >"$CB_TMP/bin/id"
chmod +x "$CB_TMP/bin/id"
rm -f "$CB_TMP/bin/sudo"
demo rocky
[ "$rc" = 1 ] || fail "without root or sudo: status $rc, expected 1"
grep -q 'As root, install them with' "$CB_TMP/demo" &&
    grep -q 'dnf install openmpi-devel openmpi gcc make autoconf automake$' "$CB_TMP/demo" ||
    fail "without root or sudo: $(cat "$CB_TMP/demo")"
rm "$CB_TMP/bin/id"
ln -s "$(command -v id)" "$CB_TMP/bin/id"

# Everything installed (this machine's PATH) and a configured build: make
# only, nothing installed.
mkdir "$CB_TMP/built"
: >"$CB_TMP/built/config.status"
: >"$CB_TMP/built/Makefile"
rc=0
CB_DEMO_DRY_RUN=1 CB_DEMO_OS_RELEASE="$CB_TMP/debian" BUILD_DIR="$CB_TMP/built" \
    sh "$demo" >"$CB_TMP/demo" 2>&1 || rc=$?
if [ "$rc" = 0 ]; then
    grep -q 'would install' "$CB_TMP/demo" && fail "installs with everything there: $(cat "$CB_TMP/demo")"
    grep -q "would run: make -C $CB_TMP/built (configured already" "$CB_TMP/demo" ||
        fail "a configured build is configured again: $(cat "$CB_TMP/demo")"
    grep -q 'ci/build.sh' "$CB_TMP/demo" && fail "autogen and configure again: $(cat "$CB_TMP/demo")"
else
    echo "note: this machine lacks some of what the demo needs: $(cat "$CB_TMP/demo")"
fi

# The demo for real, on a built tree (a Makefile with nothing to do, the
# program under test): a short, steady, verified table, no word of CUDA's
# driver without a GPU, and one closing line saying what ran and what next.
if [ "$rc" = 0 ] && command -v mpirun >/dev/null 2>&1; then
    mkdir -p "$CB_TMP/built/src"
    printf 'all:\n\t@:\n' >"$CB_TMP/built/Makefile"
    ln -s "$CB_BIN" "$CB_TMP/built/src/nccl-collbench"
    rc=0
    BUILD_DIR="$CB_TMP/built" timeout -k 5 120 sh "$demo" >"$CB_TMP/demo" 2>"$CB_TMP/demo.err" || rc=$?
    [ "$rc" = 0 ] || fail "the demo: status $rc: $(cat "$CB_TMP/demo" "$CB_TMP/demo.err")"
    grep -q '^# Result: PASS' "$CB_TMP/demo" || fail "the demo's run is not verified: $(cat "$CB_TMP/demo")"
    grep -qi 'driver version' "$CB_TMP/demo" "$CB_TMP/demo.err" &&
        fail "the demo talks of CUDA's driver: $(grep -i 'driver version' "$CB_TMP/demo")"
    rows=$(grep -c '^ *[0-9]' "$CB_TMP/demo")
    [ "$rows" -ge 4 ] && [ "$rows" -le 10 ] || fail "the demo's table has $rows rows"
    # Steady: each size's time (the faster placement) within 20x the last.
    jump=$(awk '/^ *[0-9]/ { t = $6 < $10 ? $6 : $10; if (last > 0 && t > 20 * last) print $1; last = t }' \
        "$CB_TMP/demo")
    [ -z "$jump" ] || fail "the demo's times jump at $jump: $(cat "$CB_TMP/demo")"
    [ "$(tail -n 1 "$CB_TMP/demo" | grep -c '^ci/demo.sh: ran .*; next: ')" = 1 ] ||
        fail "the demo does not end with what ran and what next: $(tail -n 2 "$CB_TMP/demo")"
fi
# ar's flags: GNU ar warns of cru's 'u' on every build.
grep -q '^ARFLAGS = cr$' "$CB_BUILDDIR/Makefile" || fail "ARFLAGS is not cr: ar warns on stderr"
echo "ok"
