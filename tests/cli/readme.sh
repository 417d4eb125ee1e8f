# README.md: within 300 lines, a Quick start of two commands, and, before
# anything is installed, which daemons the test command installs, that
# Debian starts them on a systemd host, and how to run the tests without
# them (make check; make check-cluster for the rest).
. "$CB_SRCDIR/tests/support/lib.sh"
readme="$CB_SRCDIR/README.md"
lines=$(wc -l <"$readme")
[ "$lines" -le 300 ] || fail "README.md has $lines lines, more than 300"
quick=$(sed -n '/^## Quick start/,/^## /p' "$readme")
[ "$(echo "$quick" | sed -n '/^```sh$/,/^```$/p' | grep -c '^bash ')" = 2 ] ||
    fail "the Quick start is not two commands: $quick"
# Said in the Quick start, before Building and any install.
for word in Prometheus node-exporter slurmd slurmctld munge systemd Debian \
    'make -C _build -j2 check' 'check-cluster'; do
    echo "$quick" | grep -q -- "$word" || fail "the Quick start does not say '$word'"
done
exit 0
