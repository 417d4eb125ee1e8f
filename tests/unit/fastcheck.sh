# The fast check against its definition, over every type, reduction and
# rank count (unit_fastcheck.c): the thorough tier runs the unit test
# program through this script, since automake makes a log rule only for
# the programs in make check's own list.
exec "$CB_BUILDDIR/tests/unit/unit_fastcheck"
