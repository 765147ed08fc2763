// SPDX-License-Identifier: Apache-2.0
// fakegpu — device configuration: FAKEGPU_DEVICES (a short spec) or FAKEGPU_CONFIG (a
// JSON file).  The user-facing description, with a complete example, is
// fakebackend/profiles/README.md; keep the two in step.
//
// Every function here throws ConfigError (device_model.h) on bad input; the message
// starts with where the input came from (FAKEGPU_DEVICES="..." or FAKEGPU_CONFIG=path),
// names the problem and says how to fix it.  The returned devices already carry their
// identity (assign_identity).
#pragma once

#include <string_view>
#include <vector>

#include "device_model.h"

namespace fg {

// FAKEGPU_DEVICES.  Grammar (whitespace around every token is ignored):
//   spec  := "0" | item ("," item)*
//   item  := COUNT | PROFILE | PROFILE ":" COUNT
//   COUNT := decimal 1..256 ; PROFILE := a profile id (case-insensitive)
// "8" = 8 x a100-80gb; "t4" = one t4; "a100-80gb:4,h100-80gb:2" = 6 devices in that
// order.  "0" = no devices (like a machine without GPUs: cudaGetDeviceCount returns
// cudaErrorNoDevice, nvmlDeviceGetCount returns 0).  At most 256 devices in total.
std::vector<DeviceModel> parse_devices_spec(std::string_view spec);

// FAKEGPU_CONFIG file contents.  origin (the path) is used in messages.  Schema:
// fakebackend/profiles/README.md.
std::vector<DeviceModel> parse_config_json(std::string_view json_text, std::string_view origin);

// The backend's entry point.  devices_env / config_env are the values of FAKEGPU_DEVICES
// and FAKEGPU_CONFIG (nullptr = unset; an empty or all-blank value counts as unset).
// Neither set: the default 8 x a100-80gb.  Both set: ConfigError (ambiguous).
// config_env is a file path; an unreadable file is a ConfigError naming the path and the
// errno text.
std::vector<DeviceModel> load_device_models(const char* devices_env, const char* config_env);

// The default list: kDefaultDeviceCount x kDefaultProfile, with identities.
std::vector<DeviceModel> default_device_models();

}  // namespace fg
