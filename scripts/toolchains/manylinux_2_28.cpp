// Linked into every compiled variant by scripts/build_variant.py (not a kernel source, so not
// in build.toml: kernel-builder's toolchain builds against an old glibc and needs none of it).
// A build on this machine (glibc 2.36, gcc 12) would otherwise need three symbols that glibc
// only versioned after 2.28, the oldest glibc torch's manylinux_2_28 wheels run on; with this
// file the binary runs on glibc >= 2.28 (x86_64) and >= 2.17 (aarch64) as far as glibc goes.
// docs/build.md says why each fix is the one taken; tests/test_package.py holds the result
// with kernel-abi-check.
#include <dlfcn.h>
#include <pthread.h>

// The oldest version of each glibc symbol: the architecture's base.
#if defined(__x86_64__)
#define GLIBC_BASE "GLIBC_2.2.5"
#elif defined(__aarch64__)
#define GLIBC_BASE "GLIBC_2.17"
#else
#error "no glibc base version known for this architecture"
#endif

#define HIDDEN __attribute__((visibility("hidden")))

extern "C" {

// __libc_single_threaded (glibc 2.32): gcc 12's libstdc++ headers read it to skip the atomic
// operations of reference counts (shared_ptr, locale) while the process has one thread. It
// only selects that optimisation: a local definition that always says "more than one thread"
// keeps every count atomic, which is correct in any process. Hidden: the binary's own code
// binds to it; no other library sees it.
HIDDEN char __libc_single_threaded = 0;

// dlsym and pthread_once were moved from libdl / libpthread into libc in glibc 2.34, which
// gave them a new version there; the old version is still exported, under the base version,
// by every glibc (in libdl.so.2 / libpthread.so.0 before 2.34, in libc.so.6 since). The build
// links with --wrap=dlsym --wrap=pthread_once, so the binary's calls land here and go on to
// the base version (.symver). dlsym: torch's stable headers look newer shim functions up at
// run time (torch/csrc/stable/macros.h, RTLD_DEFAULT: the caller's object does not matter).
// pthread_once: std::call_once (the CUDA launch policy's per-device cache).
void* relu_dlsym_base(void*, const char*);
int relu_pthread_once_base(pthread_once_t*, void (*)());
__asm__(".symver relu_dlsym_base, dlsym@" GLIBC_BASE);
__asm__(".symver relu_pthread_once_base, pthread_once@" GLIBC_BASE);

HIDDEN void* __wrap_dlsym(void* handle, const char* symbol) { return relu_dlsym_base(handle, symbol); }

HIDDEN int __wrap_pthread_once(pthread_once_t* once, void (*init)()) { return relu_pthread_once_base(once, init); }

}  // extern "C"
