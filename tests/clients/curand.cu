// SPDX-License-Identifier: Apache-2.0
// cuRAND on the fake GPU: NVIDIA's libcurand over the fake driver. A pseudo-random generator
// is created, seeded and generates; an odd normal count and a null generator get cuRAND's
// own codes. Prints key=value facts; run_client_tests.py checks them.
#include "lib_check.h"

#include <curand.h>

int main() {
  const size_t n = 1 << 16;
  float* out = nullptr;
  CK(cudaMalloc(&out, n * sizeof(float)));
  curandGenerator_t gen = nullptr;
  FACT_STATUS("create", curandCreateGenerator(&gen, CURAND_RNG_PSEUDO_DEFAULT));
  FACT_STATUS("seed", curandSetPseudoRandomGeneratorSeed(gen, 1234ULL));
  FACT_STATUS("uniform", curandGenerateUniform(gen, out, n));
  lib_check::print_used("used_with_generator");
  FACT_STATUS("normal", curandGenerateNormal(gen, out, n, 0.0f, 1.0f));
  FACT_STATUS("normal_odd_count", curandGenerateNormal(gen, out, 3, 0.0f, 1.0f));
  FACT_ERR("sync", cudaDeviceSynchronize());
  FACT_STATUS("destroy", curandDestroyGenerator(gen));
  lib_check::print_used("used_after_destroy");
  FACT_STATUS("uniform_null_generator", curandGenerateUniform(nullptr, out, n));
  lib_check::free_at_exit({out});
  return 0;
}
