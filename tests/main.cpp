// SPDX-License-Identifier: Apache-2.0
// The one Catch2 main of every test executable.
//
// Tests run on private devices and write no report unless the environment says otherwise,
// so parallel ctest processes never see each other's memory; the library directory and
// source directory default to this build's. Set here rather than through ctest's
// ENVIRONMENT property so a test binary run by hand behaves the same.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdlib>

int main(int argc, char** argv) {
  ::setenv("FAKEGPU_ISOLATED", "1", 0);
  ::setenv("FAKEGPU_REPORT", "off", 0);
#ifdef FAKEGPU_TEST_LIBDIR
  ::setenv("FAKEGPU_TEST_LIBDIR", FAKEGPU_TEST_LIBDIR, 0);
#endif
#ifdef FAKEGPU_SOURCE_DIR
  ::setenv("FAKEGPU_SOURCE_DIR", FAKEGPU_SOURCE_DIR, 0);
#endif
  return Catch::Session().run(argc, argv);
}
