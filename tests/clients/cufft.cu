// SPDX-License-Identifier: Apache-2.0
// cuFFT on the fake GPU: NVIDIA's libcufft over the fake driver. A 1-D complex plan is
// made, executed both ways and destroyed; bad sizes and a bad plan get cuFFT's own codes.
// Prints key=value facts; run_client_tests.py checks them.
#include "lib_check.h"

#include <cufft.h>

int main() {
  const int n = 1024;
  cufftComplex* data = nullptr;
  CK(cudaMalloc(&data, n * sizeof(cufftComplex)));
  lib_check::print_used("used_with_data");
  cufftHandle plan = 0;
  FACT_STATUS("plan1d", cufftPlan1d(&plan, n, CUFFT_C2C, 1));
  lib_check::print_used("used_with_plan");
  size_t work = 0;
  FACT_STATUS("get_size", cufftGetSize(plan, &work));
  std::printf("work_size=%zu\n", work);
  FACT_STATUS("exec_forward", cufftExecC2C(plan, data, data, CUFFT_FORWARD));
  FACT_STATUS("exec_inverse", cufftExecC2C(plan, data, data, CUFFT_INVERSE));
  FACT_ERR("sync", cudaDeviceSynchronize());
  FACT_STATUS("destroy", cufftDestroy(plan));
  lib_check::print_used("used_after_destroy");
  cufftHandle bad = 0;
  FACT_STATUS("plan_size_0", cufftPlan1d(&bad, 0, CUFFT_C2C, 1));
  FACT_STATUS("exec_destroyed_plan", cufftExecC2C(plan, data, data, CUFFT_FORWARD));
  lib_check::free_at_exit({data});
  return 0;
}
