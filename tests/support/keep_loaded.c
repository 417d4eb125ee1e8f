/*
 * For make check in a build with --enable-sanitizers only
 * (tests/support/wrapper.sh preloads it): dlclose leaves the library
 * loaded. Open MPI unloads its plugins (mca_*.so) at MPI_Finalize; memory
 * they keep until exit then has no module LeakSanitizer can name, and
 * tests/support/lsan.supp cannot tell it from ours, unless every
 * allocation's stack is unwound the slow way, which made the sanitizer
 * tests three times slower. With the plugins kept, the fast unwinder's
 * first frame names the plugin. The program's own dlclose calls (NVML, in
 * src/expect/facts.c) only keep a library they no longer use.
 */
int dlclose(void *handle);

int dlclose(void *handle)
{
    (void)handle;
    return 0;
}
