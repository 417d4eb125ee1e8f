# CB_CHECK_MPI: find the MPI C compiler wrapper.
#   --with-mpi        (default) look for mpicc on PATH
#   --with-mpi=DIR    use DIR/bin/mpicc (and DIR/bin/mpirun for the tests)
#   --with-mpi=FILE   use the wrapper FILE, e.g. /usr/bin/mpicc.mpich; the
#                     launcher is the mpirun beside it with the same suffix
#   --without-mpi     refused: every backend needs MPI to launch ranks
# Sets CC to the wrapper unless the user chose CC; sets cb_mpi_where and
# cb_mpi_bindir for the summary and for finding mpirun.
AC_DEFUN([CB_CHECK_MPI], [
  AC_ARG_WITH([mpi],
    [AS_HELP_STRING([--with-mpi@<:@=DIR@:>@],
      [MPI installation whose bin/ holds mpicc, or the path of an mpicc wrapper such as /usr/bin/mpicc.mpich (required; default: search PATH)])],
    [], [with_mpi=guess])
  cb_mpi_bindir=""
  cb_mpi_launcher=""
  AS_CASE([$with_mpi],
    [no], [AC_MSG_ERROR([MPI is required: every backend uses it to launch ranks and exchange metadata])],
    [yes|guess], [AC_PATH_PROG([MPICC], [mpicc])],
    [AS_IF([test -d "$with_mpi" && test -x "$with_mpi/bin/mpicc"],
           [MPICC="$with_mpi/bin/mpicc"; cb_mpi_bindir="$with_mpi/bin"],
           [test -f "$with_mpi" && test -x "$with_mpi"],
           [# A wrapper named mpicc.SUFFIX (Debian installs several MPIs
            # side by side this way): its launcher is mpirun.SUFFIX.
            MPICC="$with_mpi"
            cb_mpi_bindir=`AS_DIRNAME(["$with_mpi"])`
            cb_mpi_suffix=`echo "$with_mpi" | sed -n 's|.*/mpicc||p'`
            cb_mpi_launcher="mpirun$cb_mpi_suffix"],
           [AC_MSG_ERROR([--with-mpi=$with_mpi: neither a folder with bin/mpicc nor an executable mpicc wrapper])])])
  AS_IF([test -z "$MPICC" && test -z "$CC"],
        [AC_MSG_ERROR([mpicc not found: install an MPI (Open MPI: the openmpi-bin and libopenmpi-dev packages) or pass --with-mpi=DIR])])
  AS_IF([test -z "$CC"], [CC="$MPICC"])
  cb_mpi_where="${MPICC:-$CC}"
])

# CB_CHECK_MPI_WORKS: the chosen compiler must compile and link an MPI program.
AC_DEFUN([CB_CHECK_MPI_WORKS], [
  AC_MSG_CHECKING([whether $CC compiles and links MPI programs])
  AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <mpi.h>]],
                   [[int argc = 0; char **argv = 0; MPI_Init(&argc, &argv); MPI_Finalize();]])],
    [AC_MSG_RESULT([yes])],
    [AC_MSG_RESULT([no])
     AC_MSG_ERROR([$CC cannot build MPI programs; pass --with-mpi=DIR or CC=mpicc])])
  cb_mpi_version=unknown
  AC_COMPUTE_INT([cb_mpi_major], [MPI_VERSION], [[#include <mpi.h>]], [cb_mpi_major=0])
  AC_COMPUTE_INT([cb_mpi_minor], [MPI_SUBVERSION], [[#include <mpi.h>]], [cb_mpi_minor=0])
  cb_mpi_version="MPI standard $cb_mpi_major.$cb_mpi_minor"
])
