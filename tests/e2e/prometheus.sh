. "$CB_SRCDIR/tests/support/lib.sh"
skip "not written yet"
