// SPDX-License-Identifier: Apache-2.0
// The sanitizers' options of the test executables of a sanitizer build (FAKEGPU_SANITIZE):
// the runtimes call these functions at start-up, and ASAN_OPTIONS, UBSAN_OPTIONS and
// TSAN_OPTIONS from the environment still override them. In the executable rather than in
// ctest's environment so that a test binary run by hand, and the copies of itself that the
// backend tests spawn, check the same way. Default visibility: the runtimes look them up.
#define FG_SANITIZER_HOOK extern "C" __attribute__((visibility("default"), used)) const char*

// - detect_leaks: every leak fails the test; there are no suppressions.
// - allocator_may_return_null: an allocation too large for the host returns nullptr as glibc's
//   does (the backend answers out of memory: "pinned allocations of SIZE_MAX"), instead of
//   ASan's report of a size beyond its maximum.
// - detect_stack_use_after_return: a thread, callback or stream item that keeps a reference
//   to a caller's stack frame after it returned.
// - check_initialization_order / strict_init_order: globals read before their initialiser ran.
FG_SANITIZER_HOOK __asan_default_options() {
  return "detect_leaks=1:allocator_may_return_null=1:detect_stack_use_after_return=1:"
         "check_initialization_order=1:strict_init_order=1";
}

// Built with -fno-sanitize-recover=all: the first finding ends the process; with its stack.
FG_SANITIZER_HOOK __ubsan_default_options() { return "print_stacktrace=1:halt_on_error=1"; }

// Every race of the run is reported and the process then exits with 66 (a failed test);
// second_deadlock_stack: both stacks of a lock-order inversion.
FG_SANITIZER_HOOK __tsan_default_options() { return "second_deadlock_stack=1:history_size=4"; }
