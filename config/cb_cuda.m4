# CB_CHECK_CUDA: find the CUDA runtime (headers and libcudart).
#   --with-cuda       (guess, default) try /usr/local/cuda (CB_CUDA_SYSTEM_DIRS,
#                     which may be empty), then python3's CUDA runtime wheels:
#                     nvidia-cuda-runtime 13 (import nvidia.cu13), then
#                     nvidia-cuda-runtime-cu12 (import nvidia.cuda_runtime);
#                     quietly off if none is usable
#   --with-cuda=yes   as guess, but failure stops configure
#   --with-cuda=DIR   use DIR (include/, lib64/ or lib/); failure stops configure
# A lib/ with libcudart.so.13 or .12 and no libcudart.so (the wheels'
# layout) links the versioned file by name; the rpath makes the program
# load that library.
#   --without-cuda    do not look
# Substitutes CUDA_CPPFLAGS, CUDA_LDFLAGS, CUDA_LIBS; sets cb_have_cuda,
# cb_cuda_where (the folder), cb_cuda_file (the library) and
# cb_cuda_library (whether the headers have cudaLibraryLoadData).
AC_DEFUN([CB_CHECK_CUDA], [
  AC_ARG_WITH([cuda],
    [AS_HELP_STRING([--with-cuda@<:@=DIR@:>@],
      [CUDA runtime location (default: guess /usr/local/cuda, then python3's nvidia-cuda-runtime wheel; off if not found)])],
    [], [with_cuda=guess])
  AC_ARG_VAR([CB_CUDA_SYSTEM_DIRS],
    [folders that --with-cuda's guess tries before python3's CUDA runtime wheels; may be empty (default: /usr/local/cuda)])
  cb_have_cuda=no
  cb_cuda_where=""
  cb_cuda_file=""
  cb_cuda_library=""
  CUDA_CPPFLAGS=""; CUDA_LDFLAGS=""; CUDA_LIBS=""
  AS_IF([test "x$with_cuda" != "xno"], [
    AS_CASE([$with_cuda],
      [guess|yes], [cb_cuda_candidates="${CB_CUDA_SYSTEM_DIRS-/usr/local/cuda}"
        # Last, so that a system CUDA wins: the pip wheels' folders (CUDA 13
        # shares nvidia/cu13 with its other wheels; CUDA 12 has its own).
        for cb_m in nvidia.cu13 nvidia.cuda_runtime; do
          cb_cuda_wheel=`${PYTHON3:-python3} -c "import $cb_m as m; print(next(iter(m.__path__)))" 2>/dev/null`
          AS_IF([test -n "$cb_cuda_wheel" && test -f "$cb_cuda_wheel/include/cuda_runtime_api.h"],
            [cb_cuda_candidates="$cb_cuda_candidates $cb_cuda_wheel"])
        done],
      [cb_cuda_candidates="$with_cuda"
       AS_IF([test ! -f "$with_cuda/include/cuda_runtime_api.h"],
        [AC_MSG_ERROR([--with-cuda=$with_cuda: $with_cuda/include/cuda_runtime_api.h not found])])])
    for cb_cuda_dir in $cb_cuda_candidates; do
      CB_FIND_LIBDIR([cb_cuda_libdir], [$cb_cuda_dir], [cudart])
      cb_cuda_lib="-lcudart"
      cb_cuda_file="$cb_cuda_libdir/libcudart.so"
      AS_IF([test ! -e "$cb_cuda_libdir/libcudart.so" && test ! -e "$cb_cuda_libdir/libcudart.a"],
        [for cb_d in "$cb_cuda_dir/lib" "$cb_cuda_dir/lib64"; do
           for cb_v in 13 12; do
             AS_IF([test -e "$cb_d/libcudart.so.$cb_v"],
               [cb_cuda_libdir="$cb_d"; cb_cuda_lib="-l:libcudart.so.$cb_v"
                cb_cuda_file="$cb_d/libcudart.so.$cb_v"; break 2])
           done
         done])
      AS_IF([test ! -e "$cb_cuda_file" && test -e "$cb_cuda_libdir/libcudart.a"],
        [cb_cuda_file="$cb_cuda_libdir/libcudart.a"])
      # Only a candidate that holds both files: the compiler's own search
      # paths could otherwise pass the link test for a folder without CUDA.
      AS_IF([test ! -f "$cb_cuda_dir/include/cuda_runtime_api.h" ||
             test ! -e "$cb_cuda_file"],
        [AC_MSG_CHECKING([for the CUDA runtime in $cb_cuda_dir])
         AC_MSG_RESULT([no (no cuda_runtime_api.h and libcudart there)])
         cb_cuda_file=""
         continue])
      cb_save_CPPFLAGS="$CPPFLAGS"; cb_save_LDFLAGS="$LDFLAGS"; cb_save_LIBS="$LIBS"
      CPPFLAGS="$CPPFLAGS -I$cb_cuda_dir/include"
      LDFLAGS="$LDFLAGS -L$cb_cuda_libdir"
      LIBS="$cb_cuda_lib $LIBS"
      AC_MSG_CHECKING([for the CUDA runtime in $cb_cuda_dir])
      AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <cuda_runtime_api.h>]],
                       [[int n = 0; return (int)cudaGetDeviceCount(&n);]])],
        [cb_have_cuda=yes], [cb_have_cuda=no])
      AC_MSG_RESULT([$cb_have_cuda])
      # -B's GPU compare loads its kernel with cudaLibraryLoadData, which
      # older CUDA 12 runtimes lack: without it -B compares on the host. The
      # program refers to it weakly (src/backends/nccl/weak.h), so a runtime
      # loaded without it starts too.
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
         CUDA_LIBS="$cb_cuda_lib"
         cb_cuda_where="$cb_cuda_dir"
         break])
      cb_cuda_file=""
    done
    AS_IF([test "x$cb_have_cuda" != "xyes" && test "x$with_cuda" != "xguess"],
      [AC_MSG_ERROR([--with-cuda=$with_cuda: cuda_runtime_api.h and libcudart not usable in: $cb_cuda_candidates (see config.log)])])
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
