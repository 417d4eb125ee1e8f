# Shared by the tests of --expect (tests/expect/*.sh); sourced after
# tests/support/lib.sh. Fixtures: sysfs trees (tests/expect/sysfs/NAME, with
# their symbolic links listed in NAME.links, made here so that the trees
# travel as plain files) and NVML answers (tests/expect/*.nvml) for the NVML
# stand-in, which make check builds as tests/expect/libnvidia-ml.so.1.

CB_EXPECT_FIXTURES="$CB_SRCDIR/tests/expect"

need_nvml_standin() {
    [ -f "$CB_BUILDDIR/tests/expect/libnvidia-ml.so.1" ] ||
        skip "the NVML stand-in (tests/expect/libnvidia-ml.so.1) was not built"
    LD_LIBRARY_PATH="$CB_BUILDDIR/tests/expect${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    export LD_LIBRARY_PATH
}

# sysfs_fixture NAME: a copy of the fixture with its links, at $CB_TMP/sysfs-NAME.
sysfs_fixture() {
    dir="$CB_TMP/sysfs-$1"
    rm -rf "$dir"
    cp -R "$CB_EXPECT_FIXTURES/sysfs/$1" "$dir" || fail "cannot copy the fixture $1"
    chmod -R u+w "$dir"
    while read -r link target; do
        case $link in '#'* | '') continue ;; esac
        mkdir -p "$dir/$(dirname "$link")"
        ln -s "$target" "$dir/$link" || fail "fixture $1: cannot make the link $link"
    done <"$CB_EXPECT_FIXTURES/sysfs/$1.links"
}

# nodes_launcher "ID:FIXTURE ..." PROGRAM: make $CB_TMP/nodes.sh, which
# runs PROGRAM with NCCL_HOSTID and NCCL_COLLBENCH_SYSFS set to the rank's
# word of the list (rank 0 the first): ranks on this machine become nodes
# with the links of those fixtures (made by sysfs_fixture first).
nodes_launcher() {
    cat >"$CB_TMP/nodes.sh" <<LAUNCHER
#!/bin/sh
rank=\${OMPI_COMM_WORLD_RANK:-\${PMI_RANK:-\${PMIX_RANK:-}}}
[ -n "\$rank" ] || { echo "nodes.sh: the launcher set no rank variable" >&2; exit 99; }
word=\$(echo "$1" | cut -d' ' -f\$((rank + 1)))
NCCL_HOSTID=\${word%%:*}
NCCL_COLLBENCH_SYSFS=$CB_TMP/sysfs-\${word#*:}
export NCCL_HOSTID NCCL_COLLBENCH_SYSFS
exec "$2" "\$@"
LAUNCHER
    chmod +x "$CB_TMP/nodes.sh"
}

# csv_expected FILE: "bytes placement expected efficiency busbw" a row.
csv_expected() {
    "$CB_PYTHON" - "$1" <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1], newline="")):
    print(r["collective"], r["bytes"], r["placement"], r["expected_busbw_gbps"] or "-",
          r["efficiency"] or "-", r["busbw_gbps"])
PY
}
