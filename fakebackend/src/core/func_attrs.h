// SPDX-License-Identifier: Apache-2.0
// The settable function attributes both APIs share (cudaFuncSetAttribute and
// cuFuncSetAttribute): the rules on their values, in core statuses.
#pragma once
#include "core/backend.h"

namespace fg {

// The dynamic shared memory a launch of `f` may ask for on `dev`: from 0 up to the device's
// opt-in maximum per block less the function's static shared memory, else InvalidValue.
Status set_max_dynamic_shared(Function* f, const Device* dev, int value);

// The preferred shared-memory carveout, in percent of the maximum, or -1 for no preference;
// anything else is InvalidValue.
Status set_preferred_carveout(Function* f, int value);

}  // namespace fg
