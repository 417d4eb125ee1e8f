# CB_CHECK_NCCL: find NCCL (nccl.h and libnccl); needs CUDA.
#   --with-nccl       (guess, default) try the CUDA prefix, /usr, /usr/local
#                     (CB_NCCL_SYSTEM_DIRS, which may be empty), then
#                     python3's nvidia-nccl wheel (import nvidia.nccl)
#   --with-nccl=yes   as guess, but failure stops configure
#   --with-nccl=DIR   use DIR (include/, lib64/ or lib/); failure stops configure
# A lib/ with libnccl.so.2 and no libnccl.so (the wheels' layout) links the
# versioned file by name; the rpath makes the program load that library.
#   --without-nccl    do not build the NCCL backend
# Substitutes NCCL_CPPFLAGS, NCCL_LDFLAGS, NCCL_LIBS; defines HAVE_NCCL and
# the conditional HAVE_NCCL; sets cb_have_nccl, cb_nccl_version and
# cb_nccl_backend (the summary's "yes (...)" or "no (reason)").
AC_DEFUN([CB_CHECK_NCCL], [
  AC_ARG_WITH([nccl],
    [AS_HELP_STRING([--with-nccl@<:@=DIR@:>@],
      [NCCL location (default: guess the CUDA prefix and system paths, off if not found)])],
    [], [with_nccl=guess])
  AC_ARG_VAR([CB_NCCL_SYSTEM_DIRS],
    [folders that --with-nccl's guess tries after the CUDA prefix and before python3's nvidia-nccl wheel; may be empty (default: /usr /usr/local)])
  cb_have_nccl=no
  cb_nccl_where=""
  cb_nccl_version=""
  cb_nccl_backend="no (--without-nccl)"
  NCCL_CPPFLAGS=""; NCCL_LDFLAGS=""; NCCL_LIBS=""
  AS_IF([test "x$with_nccl" != "xno" && test "x$cb_have_cuda" != "xyes"],
    [cb_nccl_backend="no (the CUDA runtime was not found; see --with-cuda)"
     AS_IF([test "x$with_nccl" != "xguess"],
      [AC_MSG_ERROR([--with-nccl=$with_nccl needs the CUDA runtime, which was not found (use --with-cuda=DIR)])])],
  [test "x$with_nccl" != "xno"], [
    AS_CASE([$with_nccl],
      [guess|yes], [cb_nccl_candidates="$cb_cuda_where ${CB_NCCL_SYSTEM_DIRS-/usr /usr/local}"
        # Last, so that a system NCCL wins: the pip wheel's folder.
        cb_nccl_wheel=`${PYTHON3:-python3} -c 'import nvidia.nccl as m; print(next(iter(m.__path__)))' 2>/dev/null`
        AS_IF([test -n "$cb_nccl_wheel" && test -f "$cb_nccl_wheel/include/nccl.h"],
          [cb_nccl_candidates="$cb_nccl_candidates $cb_nccl_wheel"])],
      [cb_nccl_candidates="$with_nccl"])
    AS_CASE([$with_nccl], [guess|yes], [],
      [AS_IF([test ! -f "$with_nccl/include/nccl.h"],
        [AC_MSG_ERROR([--with-nccl=$with_nccl: $with_nccl/include/nccl.h not found])])])
    for cb_nccl_dir in $cb_nccl_candidates; do
      CB_FIND_LIBDIR([cb_nccl_libdir], [$cb_nccl_dir], [nccl])
      cb_nccl_lib="-lnccl"
      AS_IF([test ! -e "$cb_nccl_libdir/libnccl.so" && test ! -e "$cb_nccl_libdir/libnccl.a"],
        [for cb_d in "$cb_nccl_dir/lib" "$cb_nccl_dir/lib64"; do
           AS_IF([test -e "$cb_d/libnccl.so.2"],
             [cb_nccl_libdir="$cb_d"; cb_nccl_lib="-l:libnccl.so.2"; break])
         done])
      AS_IF([test "x$cb_nccl_lib" = "x-lnccl"],
        [cb_nccl_file="$cb_nccl_libdir/libnccl.so"],
        [cb_nccl_file="$cb_nccl_libdir/libnccl.so.2"])
      # Only a candidate that holds both files: the compiler's own search
      # paths could otherwise pass the link test for a folder without NCCL.
      AS_IF([test ! -f "$cb_nccl_dir/include/nccl.h" ||
             { test ! -e "$cb_nccl_file" && test ! -e "$cb_nccl_libdir/libnccl.a"; }],
        [AC_MSG_CHECKING([for NCCL in $cb_nccl_dir])
         AC_MSG_RESULT([no (no nccl.h and libnccl there)])
         continue])
      cb_save_CPPFLAGS="$CPPFLAGS"; cb_save_LDFLAGS="$LDFLAGS"; cb_save_LIBS="$LIBS"
      CPPFLAGS="$CPPFLAGS $CUDA_CPPFLAGS -I$cb_nccl_dir/include"
      LDFLAGS="$LDFLAGS $CUDA_LDFLAGS -L$cb_nccl_libdir"
      LIBS="$cb_nccl_lib $CUDA_LIBS $LIBS"
      AC_MSG_CHECKING([for NCCL in $cb_nccl_dir])
      AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <nccl.h>]],
                       [[int v = 0; return (int)ncclGetVersion(&v);]])],
        [cb_have_nccl=yes], [cb_have_nccl=no])
      AC_MSG_RESULT([$cb_have_nccl])
      AS_IF([test "x$cb_have_nccl" = "xyes"], [
        AC_COMPUTE_INT([cb_nccl_major], [NCCL_MAJOR], [[#include <nccl.h>]], [cb_nccl_major=0])
        AC_COMPUTE_INT([cb_nccl_minor], [NCCL_MINOR], [[#include <nccl.h>]], [cb_nccl_minor=0])
        AC_COMPUTE_INT([cb_nccl_patch], [NCCL_PATCH], [[#include <nccl.h>]], [cb_nccl_patch=0])
        cb_nccl_version="$cb_nccl_major.$cb_nccl_minor.$cb_nccl_patch"])
      CPPFLAGS="$cb_save_CPPFLAGS"; LDFLAGS="$cb_save_LDFLAGS"; LIBS="$cb_save_LIBS"
      AS_IF([test "x$cb_have_nccl" = "xyes"], [
        NCCL_CPPFLAGS="-I$cb_nccl_dir/include"
        NCCL_LDFLAGS="-L$cb_nccl_libdir -Wl,-rpath,$cb_nccl_libdir"
        NCCL_LIBS="$cb_nccl_lib"
        cb_nccl_where="$cb_nccl_dir"
        break])
    done
    AS_IF([test "x$cb_have_nccl" != "xyes" && test "x$with_nccl" != "xguess"],
      [AC_MSG_ERROR([--with-nccl=$with_nccl: nccl.h and libnccl not usable (see config.log)])])
    AS_IF([test "x$cb_have_nccl" = "xyes"],
      [cb_nccl_backend="yes (NCCL $cb_nccl_version from $cb_nccl_file, CUDA runtime from $cb_cuda_where)"],
      [cb_nccl_backend="no (nccl.h and libnccl not usable in: $cb_nccl_candidates; see --with-nccl)"])
  ])
  AS_IF([test "x$cb_have_nccl" = "xyes"],
        [AC_DEFINE([HAVE_NCCL], [1], [Define to 1 to build the NCCL backend])])
  AM_CONDITIONAL([HAVE_NCCL], [test "x$cb_have_nccl" = "xyes"])
  AC_SUBST([NCCL_CPPFLAGS])
  AC_SUBST([NCCL_LDFLAGS])
  AC_SUBST([NCCL_LIBS])
])
