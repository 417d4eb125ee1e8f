# CB_CHECK_CUDA: find the CUDA runtime (headers and libcudart).
#   --with-cuda       (guess, default) try /usr/local/cuda; quietly off if absent
#   --with-cuda=yes   as guess, but failure stops configure
#   --with-cuda=DIR   use DIR (include/, lib64/ or lib/); failure stops configure
#   --without-cuda    do not look
# Substitutes CUDA_CPPFLAGS, CUDA_LDFLAGS, CUDA_LIBS; sets cb_have_cuda.
AC_DEFUN([CB_CHECK_CUDA], [
  AC_ARG_WITH([cuda],
    [AS_HELP_STRING([--with-cuda@<:@=DIR@:>@],
      [CUDA toolkit location (default: guess /usr/local/cuda, off if not found)])],
    [], [with_cuda=guess])
  cb_have_cuda=no
  cb_cuda_where=""
  CUDA_CPPFLAGS=""; CUDA_LDFLAGS=""; CUDA_LIBS=""
  AS_IF([test "x$with_cuda" != "xno"], [
    AS_CASE([$with_cuda],
      [guess|yes], [cb_cuda_dir=/usr/local/cuda],
      [cb_cuda_dir="$with_cuda"])
    AS_CASE([$with_cuda], [guess|yes], [],
      [AS_IF([test ! -f "$cb_cuda_dir/include/cuda_runtime_api.h"],
        [AC_MSG_ERROR([--with-cuda=$with_cuda: $cb_cuda_dir/include/cuda_runtime_api.h not found])])])
    CB_FIND_LIBDIR([cb_cuda_libdir], [$cb_cuda_dir], [cudart])
    cb_save_CPPFLAGS="$CPPFLAGS"; cb_save_LDFLAGS="$LDFLAGS"; cb_save_LIBS="$LIBS"
    CPPFLAGS="$CPPFLAGS -I$cb_cuda_dir/include"
    LDFLAGS="$LDFLAGS -L$cb_cuda_libdir"
    LIBS="-lcudart $LIBS"
    AC_MSG_CHECKING([for the CUDA runtime in $cb_cuda_dir])
    AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <cuda_runtime_api.h>]],
                     [[int n = 0; return (int)cudaGetDeviceCount(&n);]])],
      [cb_have_cuda=yes], [cb_have_cuda=no])
    AC_MSG_RESULT([$cb_have_cuda])
    # -B's GPU compare loads its kernel with cudaLibraryLoadData, which
    # older CUDA 12 runtimes lack: without it -B compares on the host.
    AS_IF([test "x$cb_have_cuda" = "xyes"], [
      AC_MSG_CHECKING([for cudaLibraryLoadData in the CUDA runtime])
      AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <cuda_runtime_api.h>]],
                       [[cudaLibrary_t lib; cudaKernel_t k;
                         return (int)cudaLibraryLoadData(&lib, "", 0, 0, 0, 0, 0, 0) +
                                (int)cudaLibraryGetKernel(&k, lib, "") +
                                (int)cudaLibraryUnload(lib);]])],
        [cb_cuda_library=yes
         AC_DEFINE([CB_HAVE_CUDA_LIBRARY], [1],
           [Define to 1 if the CUDA runtime has cudaLibraryLoadData.])],
        [cb_cuda_library=no])
      AC_MSG_RESULT([$cb_cuda_library])])
    CPPFLAGS="$cb_save_CPPFLAGS"; LDFLAGS="$cb_save_LDFLAGS"; LIBS="$cb_save_LIBS"
    AS_IF([test "x$cb_have_cuda" = "xyes"],
      [CUDA_CPPFLAGS="-I$cb_cuda_dir/include"
       CUDA_LDFLAGS="-L$cb_cuda_libdir -Wl,-rpath,$cb_cuda_libdir"
       CUDA_LIBS="-lcudart"
       cb_cuda_where="$cb_cuda_dir"],
      [AS_IF([test "x$with_cuda" != "xguess"],
        [AC_MSG_ERROR([--with-cuda=$with_cuda: cuda_runtime_api.h and libcudart not usable under $cb_cuda_dir (see config.log)])])])
  ])
  AC_SUBST([CUDA_CPPFLAGS])
  AC_SUBST([CUDA_LDFLAGS])
  AC_SUBST([CUDA_LIBS])
])

# CB_FIND_LIBDIR(VAR, PREFIX, LIBNAME): the first of PREFIX/lib64, PREFIX/lib
# that holds libLIBNAME.so or .a, else PREFIX/lib64.
AC_DEFUN([CB_FIND_LIBDIR], [
  $1="$2/lib64"
  for cb_d in "$2/lib64" "$2/lib" "$2/lib/x86_64-linux-gnu" "$2/lib/aarch64-linux-gnu"; do
    AS_IF([test -e "$cb_d/lib$3.so" || test -e "$cb_d/lib$3.a"], [$1="$cb_d"; break])
  done
])
