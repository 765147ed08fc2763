// SPDX-License-Identifier: Apache-2.0
// Unit tests: device profiles, identities, FAKEGPU_DEVICES and FAKEGPU_CONFIG parsing.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "../../fakebackend/src/core/config.h"

#ifndef FAKEGPU_SOURCE_DIR
#define FAKEGPU_SOURCE_DIR "."  // the repository root, when the build does not say
#endif

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

constexpr const char* kKnown = "a100-80gb, a100-40gb, h100-80gb, h200, l4, t4";

// The ConfigError message of f(), or "<no error>".
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const fg::ConfigError& e) {
    return e.what();
  }
  return "<no error>";
}

std::string spec_error(const char* spec) {
  return error_of([&] { (void)fg::parse_devices_spec(spec); });
}

std::string json_error(const std::string& text, const char* origin = "/etc/fakegpu/test.json") {
  return error_of([&] { (void)fg::parse_config_json(text, origin); });
}

std::string example_path() { return std::string(FAKEGPU_SOURCE_DIR) + "/fakebackend/profiles/example.json"; }

// A temporary file that removes itself.
struct TempFile {
  std::string path;
  explicit TempFile(const std::string& text) {
    char tmpl[] = "/tmp/fakegpu-test-config-XXXXXX";
    const int fd = ::mkstemp(tmpl);
    REQUIRE(fd >= 0);
    ::close(fd);
    path = tmpl;
    std::ofstream(path) << text;
  }
  ~TempFile() { std::remove(path.c_str()); }
};

void check_identity_invariants(const std::vector<fg::DeviceModel>& v) {
  std::set<std::string> uuids, buses, serials;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const auto& d = v[i];
    CHECK(d.index == static_cast<int>(i));
    CHECK(d.minor_number == i);
    CHECK(d.uuid_str == fg::format_uuid(d.uuid));
    CHECK(d.uuid_str.size() == 40);
    CHECK_THAT(d.uuid_str, StartsWith("GPU-"));
    CHECK(d.serial.size() == 13);
    CHECK(d.serial.find_first_not_of("0123456789") == std::string::npos);
    CHECK(d.pci_bus_id == fg::nvml_pci_bus_id(d));
    CHECK(d.pci_domain == i / 8);
    CHECK(d.pci_device == 0);
    // Identity attributes agree with the identity fields.
    CHECK(d.attributes[33] == static_cast<int>(d.pci_bus));
    CHECK(d.attributes[34] == static_cast<int>(d.pci_device));
    CHECK(d.attributes[50] == static_cast<int>(d.pci_domain));
    CHECK(d.attributes[85] == d.index);
    uuids.insert(d.uuid_str);
    buses.insert(d.pci_bus_id);
    serials.insert(d.serial);
  }
  CHECK(uuids.size() == v.size());
  CHECK(buses.size() == v.size());
  CHECK(serials.size() == v.size());
}

void check_attribute_sanity(const fg::DeviceModel& d) {
  CAPTURE(d.profile, d.name);
  CHECK_THAT(d.name, StartsWith("Fake "));
  CHECK(d.name.size() <= fg::kMaxNameLength);
  CHECK(d.attributes[0] == 0);
  CHECK(d.attributes[16] == d.sm_count);  // MULTIPROCESSOR_COUNT
  CHECK(d.attributes[75] == d.cc_major);
  CHECK(d.attributes[76] == d.cc_minor);
  CHECK(d.attributes[13] == static_cast<int>(d.max_clock_sm_mhz * 1000));   // CLOCK_RATE
  CHECK(d.attributes[36] == static_cast<int>(d.max_clock_mem_mhz * 1000));  // MEMORY_CLOCK_RATE
  CHECK(d.attributes[139] == static_cast<int>(d.pci_device_id));
  CHECK(d.attributes[140] == static_cast<int>(d.pci_subsystem_id));
  CHECK((d.pci_device_id & 0xFFFFu) == 0x10DEu);
  CHECK(d.attributes[1] == 1024);               // MAX_THREADS_PER_BLOCK
  CHECK(d.attributes[10] == 32);                // WARP_SIZE
  CHECK(d.attributes[8] == 49152);              // MAX_SHARED_MEMORY_PER_BLOCK
  CHECK(d.attributes[97] >= d.attributes[8]);   // opt-in >= default
  CHECK(d.attributes[81] >= d.attributes[97]);  // per SM >= per block
  CHECK(d.attributes[12] == 65536);
  CHECK(d.attributes[82] == 65536);
  CHECK(d.attributes[41] == 1);   // UNIFIED_ADDRESSING
  CHECK(d.attributes[83] == 1);   // MANAGED_MEMORY
  CHECK(d.attributes[89] == 1);   // CONCURRENT_MANAGED_ACCESS
  CHECK(d.attributes[88] == 0);   // PAGEABLE_MEMORY_ACCESS
  CHECK(d.attributes[20] == 0);   // COMPUTE_MODE default
  CHECK(d.attributes[18] == 0);   // INTEGRATED
  CHECK(d.attributes[19] == 1);   // CAN_MAP_HOST_MEMORY
  CHECK(d.attributes[115] == 1);  // MEMORY_POOLS_SUPPORTED
  CHECK(d.attributes[102] == 1);  // VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED
  CHECK(d.attributes[125] == 1);  // IPC_EVENT_SUPPORTED
  CHECK(d.attributes[90] == 1);   // COMPUTE_PREEMPTION_SUPPORTED
  CHECK(d.attributes[95] == 1);   // COOPERATIVE_LAUNCH
  CHECK(d.attributes[86] == 0);   // HOST_NATIVE_ATOMIC_SUPPORTED (PCIe host)
  CHECK(d.attributes[37] > 0);    // bus width
  CHECK(d.attributes[38] > 0);    // L2
  CHECK(d.attributes[39] >= 1024);
  CHECK(d.attributes[106] >= 16);
  CHECK(d.brand == 14);
  CHECK(d.total_memory > 0);
  CHECK(d.bar1_total > 0);
  CHECK(d.power_min_limit_mw <= d.power_limit_mw);
  CHECK(d.power_limit_mw <= d.power_max_limit_mw);
  CHECK(d.clock_sm_mhz <= d.max_clock_sm_mhz);
  CHECK(d.clock_mem_mhz <= d.max_clock_mem_mhz);
  CHECK(d.pcie_cur_gen <= d.pcie_max_gen);
}

}  // namespace

TEST_CASE("profile ids and the unknown-profile message", "[config]") {
  CHECK(fg::profile_ids() == std::vector<std::string>{"a100-80gb", "a100-40gb", "h100-80gb", "h200", "l4", "t4"});
  CHECK(fg::known_profiles_text() == kKnown);
  CHECK(error_of([] { (void)fg::make_profile("a100"); }) ==
        std::string("unknown profile \"a100\"; known profiles: ") + kKnown);
  CHECK(fg::make_profile("H100-80GB").profile == "h100-80gb");  // ids are case-insensitive
  for (const auto& id : fg::profile_ids()) check_attribute_sanity(fg::make_profile(id));
}

TEST_CASE("profile values", "[config]") {
  struct Expected {
    const char* id;
    const char* name;
    uint64_t total_memory;
    int cc_major, cc_minor, sm_count;
    unsigned power_limit_mw;
    int architecture;  // NVML_DEVICE_ARCH_*
    unsigned pcie_max_gen, pci_device_id;
    std::vector<std::pair<std::size_t, int>> attributes;  // by CUdevice_attribute number
  };
  // clang-format off
  const Expected profiles[] = {
      {"a100-80gb", "Fake NVIDIA A100-SXM4-80GB", 85899345920ull, 8, 0, 108, 400000, 7, 4, 0x20B210DEu,
       {{13, 1410000}, {36, 1593000}, {37, 5120}, {38, 41943040}, {39, 2048}, {81, 167936}, {97, 166912},
        {106, 32}, {111, 1024}, {2, 1024}, {4, 64}, {5, 2147483647}, {6, 65535},
        {120, 0}}},  // no cluster launch before Hopper
      {"a100-40gb", "Fake NVIDIA A100-SXM4-40GB", 42949672960ull, 8, 0, 108, 400000, 7, 4, 0x20B010DEu,
       {{36, 1215000}}},
      {"h100-80gb", "Fake NVIDIA H100 80GB HBM3", 85520809984ull, 9, 0, 132, 700000, 9, 5, 0x233010DEu,
       {{38, 52428800}, {81, 233472}, {97, 232448},
        {120, 1},    // CLUSTER_LAUNCH
        {126, 4},    // MEM_SYNC_DOMAIN_COUNT
        {127, 1}}},  // TENSOR_MAP_ACCESS_SUPPORTED
      // As a real H200 reports them (tests/clients/golden/h200.facts).
      {"h200", "Fake NVIDIA H200", 150754820096ull, 9, 0, 132, 700000, 9, 5, 0x233510DEu,
       {{37, 6016}, {38, 62914560},
        {109, 134217728},  // MAX_ACCESS_POLICY_WINDOW_SIZE
        {129, 1}}},        // UNIFIED_FUNCTION_POINTERS
      {"l4", "Fake NVIDIA L4", 24152899584ull, 8, 9, 58, 72000, 8, 4, 0x27B810DEu,
       {{39, 1536}, {106, 24}, {81, 102400}}},
      {"t4", "Fake NVIDIA Tesla T4", 16106127360ull, 7, 5, 40, 70000, 6, 3, 0x1EB810DEu,
       {{39, 1024}, {106, 16}, {81, 65536},
        {111, 0},    // no reserved shared memory before Ampere
        {108, 0}}},  // no persisting L2 before Ampere
  };
  // clang-format on
  for (const Expected& e : profiles) {
    CAPTURE(e.id);
    const auto d = fg::make_profile(e.id);
    CHECK(d.name == e.name);
    CHECK(d.total_memory == e.total_memory);
    CHECK(d.cc_major == e.cc_major);
    CHECK(d.cc_minor == e.cc_minor);
    CHECK(d.sm_count == e.sm_count);
    CHECK(d.power_limit_mw == e.power_limit_mw);
    CHECK(d.architecture == e.architecture);
    CHECK(d.pcie_max_gen == e.pcie_max_gen);
    CHECK(d.pci_device_id == e.pci_device_id);
    for (const auto& [attribute, value] : e.attributes) {
      INFO("attribute " << attribute);
      CHECK(d.attributes[attribute] == value);
    }
  }

  const auto a100 = fg::make_profile("a100-80gb");
  CHECK(a100.power_max_limit_mw == 400000);
  CHECK(a100.power_min_limit_mw == 100000);
  CHECK(a100.pci_subsystem_id == 0x147F10DEu);
  CHECK(a100.max_clock_sm_mhz == 1410);
  CHECK(a100.max_clock_mem_mhz == 1593);
  CHECK(a100.pcie_max_width == 16);
  CHECK_FALSE(a100.has_fan);
  CHECK(a100.fan_speed_pct == 0);
  const auto h200 = fg::make_profile("h200");
  CHECK(h200.temp_shutdown_c == 95);
  CHECK(h200.pci_subsystem_id == 0x18BF10DEu);
  CHECK_FALSE(fg::make_profile("l4").has_fan);
}

TEST_CASE("default configuration: 8 x a100-80gb", "[config]") {
  const auto v = fg::load_device_models(nullptr, nullptr);
  REQUIRE(v.size() == 8);
  const char* buses[8] = {"00000000:07:00.0", "00000000:0F:00.0", "00000000:47:00.0", "00000000:4E:00.0",
                          "00000000:87:00.0", "00000000:90:00.0", "00000000:B7:00.0", "00000000:BD:00.0"};
  const unsigned bus_numbers[8] = {0x07, 0x0F, 0x47, 0x4E, 0x87, 0x90, 0xB7, 0xBD};
  for (int i = 0; i < 8; ++i) {
    CAPTURE(i);
    const auto& d = v[static_cast<std::size_t>(i)];
    CHECK(d.profile == "a100-80gb");
    CHECK(d.name == "Fake NVIDIA A100-SXM4-80GB");
    CHECK(d.total_memory == 85899345920ull);
    CHECK(d.pci_bus_id == buses[i]);
    CHECK(d.pci_bus == bus_numbers[i]);
    CHECK(fg::cuda_pci_bus_id(d) == std::string(buses[i]).substr(4));
    check_attribute_sanity(d);
  }
  CHECK(fg::cuda_pci_bus_id(v[0]) == "0000:07:00.0");
  check_identity_invariants(v);

  // The same configuration gives the same identities (every process must agree), and
  // the identity scheme is stable across versions.
  const auto again = fg::parse_devices_spec("8");
  for (std::size_t i = 0; i < 8; ++i) {
    CHECK(again[i].uuid_str == v[i].uuid_str);
    CHECK(again[i].serial == v[i].serial);
  }
  CHECK(fg::default_device_models()[3].uuid == v[3].uuid);
  CHECK(v[0].uuid_str == "GPU-bc0e79c8-443b-5882-0357-c228f0201802");
  CHECK(v[0].serial == "1675856866000");

  // Empty or blank variables count as unset.
  CHECK(fg::load_device_models("", nullptr).size() == 8);
  CHECK(fg::load_device_models("  ", "").size() == 8);
}

TEST_CASE("mixed FAKEGPU_DEVICES spec", "[config]") {
  const auto v = fg::parse_devices_spec("a100-80gb:4,h100-80gb:2");
  REQUIRE(v.size() == 6);
  for (std::size_t i = 0; i < 4; ++i) {
    CHECK(v[i].profile == "a100-80gb");
    CHECK(v[i].name == "Fake NVIDIA A100-SXM4-80GB");
  }
  for (std::size_t i = 4; i < 6; ++i) {
    CHECK(v[i].profile == "h100-80gb");
    CHECK(v[i].name == "Fake NVIDIA H100 80GB HBM3");
    CHECK(v[i].sm_count == 132);
  }
  CHECK(v[4].pci_bus_id == "00000000:87:00.0");
  CHECK(v[5].pci_bus_id == "00000000:90:00.0");
  check_identity_invariants(v);
  for (const auto& d : v) check_attribute_sanity(d);

  // UUIDs depend on the profile as well as the position.
  CHECK(fg::parse_devices_spec("t4")[0].uuid_str != fg::parse_devices_spec("l4")[0].uuid_str);

  SECTION("whitespace, case and bare counts") {
    const auto w = fg::parse_devices_spec("  T4 : 2 ,\tl4  ");
    REQUIRE(w.size() == 3);
    CHECK(w[0].profile == "t4");
    CHECK(w[1].profile == "t4");
    CHECK(w[2].profile == "l4");
    CHECK(w[2].name == "Fake NVIDIA L4");
    const auto b = fg::parse_devices_spec("2, t4:2");
    REQUIRE(b.size() == 4);
    CHECK(b[1].profile == "a100-80gb");
    CHECK(b[2].profile == "t4");
    CHECK(fg::parse_devices_spec("t4").size() == 1);
    CHECK(fg::parse_devices_spec("h200:1")[0].total_memory == 150754820096ull);
  }
  SECTION("zero devices") {
    CHECK(fg::parse_devices_spec("0").empty());
    CHECK(fg::parse_devices_spec(" 0 ").empty());
    CHECK(fg::load_device_models("0", nullptr).empty());
  }
}

TEST_CASE("64 and 256 devices", "[config]") {
  const auto v = fg::parse_devices_spec("64");
  REQUIRE(v.size() == 64);
  check_identity_invariants(v);
  CHECK(v[8].pci_bus_id == "00000001:07:00.0");
  CHECK(v[63].pci_bus_id == "00000007:BD:00.0");
  CHECK(fg::cuda_pci_bus_id(v[63]) == "0007:BD:00.0");
  CHECK(v[63].attributes[50] == 7);
  CHECK(v[63].attributes[33] == 0xBD);

  const auto big = fg::parse_devices_spec("a100-80gb:200,t4:56");
  REQUIRE(big.size() == 256);
  check_identity_invariants(big);
  CHECK(big[255].profile == "t4");
  CHECK(big[255].pci_bus_id == "0000001F:BD:00.0");
  CHECK(fg::parse_devices_spec("256").size() == 256);
}

TEST_CASE("bad FAKEGPU_DEVICES specs", "[config]") {
  CHECK(spec_error("a100:2") ==
        std::string("FAKEGPU_DEVICES=\"a100:2\": unknown profile \"a100\"; known profiles: ") + kKnown);

  CHECK_THAT(spec_error(""), StartsWith("FAKEGPU_DEVICES=\"\": ") && Contains("empty") && Contains("unset"));
  // Each spec's message names what is wrong and, where it helps, the form to use.
  const std::pair<const char*, std::vector<const char*>> cases[] = {
      {"   ", {"empty"}},
      {"t4:x", {"\"x\"", "not a whole number", "PROFILE:COUNT"}},
      {"t4:-1", {"\"-1\"", "not a whole number"}},
      {"t4:2:3", {"\"2:3\"", "not a whole number"}},
      {"t4:", {"not a whole number"}},
      {"t4:0", {"count 0", "FAKEGPU_DEVICES=0"}},
      {"0,t4", {"count 0"}},
      {"t4,,l4", {"entry 2 is empty", "comma"}},
      {"t4,", {"entry 2 is empty", "trailing comma"}},
      {":3", {"no profile", "PROFILE:COUNT"}},
      {"257", {"257 devices requested", "at most 256", "lower"}},
      {"a100-80gb:200,t4:57", {"257 devices requested"}},
      {"99999999999999999999999999", {"at most 256"}},
      {"a100-80gb 4", {"unknown profile \"a100-80gb 4\"", "PROFILE:COUNT"}},
      {"-1", {"unknown profile \"-1\""}},
  };
  for (const auto& [spec, parts] : cases) {
    CAPTURE(spec);
    const std::string e = spec_error(spec);
    for (const char* part : parts) CHECK_THAT(e, Contains(part));
  }
}

TEST_CASE("load_device_models: sources and file errors", "[config]") {
  auto e = error_of([] { (void)fg::load_device_models("8", "/tmp/x.json"); });
  CHECK_THAT(e, Contains("FAKEGPU_DEVICES=\"8\"") && Contains("FAKEGPU_CONFIG=\"/tmp/x.json\"") &&
                    Contains("unset one of them"));

  e = error_of([] { (void)fg::load_device_models(nullptr, "/nonexistent/fakegpu/devices.json"); });
  CHECK_THAT(e, StartsWith("FAKEGPU_CONFIG=/nonexistent/fakegpu/devices.json: ") &&
                    Contains("No such file or directory") && Contains("unset it"));

  e = error_of([] { (void)fg::load_device_models(nullptr, "/tmp"); });
  CHECK_THAT(e, Contains("/tmp") && Contains("directory"));

  TempFile f(R"({"devices": ["l4", {"profile": "t4", "count": 2}]})");
  const auto v = fg::load_device_models("", f.path.c_str());
  REQUIRE(v.size() == 3);
  CHECK(v[0].profile == "l4");
  CHECK(v[2].profile == "t4");
  check_identity_invariants(v);

  TempFile bad("{\"devices\": [}");
  e = error_of([&] { (void)fg::load_device_models(nullptr, bad.path.c_str()); });
  CHECK_THAT(e, StartsWith("FAKEGPU_CONFIG=" + bad.path + ": ") && Contains("invalid JSON"));
}

TEST_CASE("FAKEGPU_CONFIG: the documented example", "[config]") {
  const std::string path = example_path();
  INFO("example file: " << path);
  REQUIRE(std::filesystem::exists(path));
  const auto v = fg::load_device_models(nullptr, path.c_str());
  REQUIRE(v.size() == 6);
  check_identity_invariants(v);
  for (const auto& d : v) check_attribute_sanity(d);

  CHECK(v[0].profile == "a100-80gb");
  CHECK(v[1].profile == "a100-80gb");
  CHECK(v[1].name == "Fake NVIDIA A100-SXM4-80GB");
  CHECK(v[1].pci_bus_id == "00000000:0F:00.0");
  CHECK(v[2].profile == "t4");
  CHECK(v[2].name == "Fake NVIDIA Tesla T4");
  CHECK(v[2].pci_bus_id == "00000000:47:00.0");
  for (std::size_t i = 3; i <= 4; ++i) {
    const auto& d = v[i];
    CHECK(d.profile == "h100-80gb");
    CHECK(d.name == "Fake NVIDIA H100 80GB HBM3 (40GiB test slice)");
    CHECK(d.total_memory == 42949672960ull);
    CHECK(d.power_limit_mw == 350000);
    CHECK(d.power_max_limit_mw == 700000);
    CHECK(d.attributes[40] == 2);    // ASYNC_ENGINE_COUNT
    CHECK(d.attributes[108] == 0);   // MAX_PERSISTING_L2_CACHE_SIZE
    CHECK(d.attributes[87] == 3);    // SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO
    CHECK(d.attributes[16] == 132);  // untouched
  }
  CHECK(v[3].pci_bus_id == "00000000:4E:00.0");
  CHECK(v[4].pci_bus_id == "00000000:87:00.0");
  const auto& l4 = v[5];
  CHECK(l4.profile == "l4");
  CHECK(l4.name == "Fake NVIDIA L4 (fan-cooled)");
  CHECK(l4.sm_count == 30);
  CHECK(l4.attributes[16] == 30);
  CHECK(l4.max_clock_sm_mhz == 1800);
  CHECK(l4.attributes[13] == 1800000);
  CHECK(l4.has_fan);
  CHECK(l4.fan_speed_pct == 35);
  CHECK(l4.temperature_c == 41);
  CHECK(l4.total_memory == 24152899584ull);  // untouched
  CHECK(l4.pci_bus_id == "00000000:90:00.0");
}

TEST_CASE("FAKEGPU_CONFIG: accepted forms", "[config]") {
  // Comments, string entries, default profile, byte units, boolean attribute values,
  // attribute names without prefix / by number / deprecated alias, name prefixing.
  const auto v = fg::parse_config_json(R"({
    // a comment
    "devices": [
      {},
      "H200",
      {"profile": "t4", "total_memory": 1048576, "bar1_total": "512MiB",
       "name": "My Test GPU",
       "attributes": {"ecc_enabled": false, "38": 1024,
                      "CU_DEVICE_ATTRIBUTE_SHARED_MEMORY_PER_BLOCK": 32768,
                      "NUMA_ID": -1}}
    ]
  })",
                                       "inline");
  REQUIRE(v.size() == 3);
  CHECK(v[0].profile == "a100-80gb");
  CHECK(v[1].profile == "h200");
  CHECK(v[2].total_memory == 1048576);
  CHECK(v[2].bar1_total == 512ull << 20);
  CHECK(v[2].name == "Fake My Test GPU");
  CHECK(v[2].attributes[32] == 0);
  CHECK(v[2].attributes[38] == 1024);
  CHECK(v[2].attributes[8] == 32768);
  CHECK(v[2].attributes[131] == -1);
  check_identity_invariants(v);

  CHECK(fg::parse_config_json(R"({"devices": []})", "x").empty());
  CHECK(fg::parse_config_json(R"({"version": 1, "comment": "none", "devices": []})", "x").empty());
  CHECK(fg::parse_config_json(R"({"devices": [{"total_memory": "2TiB", "count": 3}]})", "x")[2].total_memory ==
        2ull << 40);
}

TEST_CASE("FAKEGPU_CONFIG: errors", "[config]") {
  const std::string origin = "FAKEGPU_CONFIG=/etc/fakegpu/test.json: ";

  SECTION("unknown keys") {
    auto e = json_error(R"({"devices": [{"profile": "t4", "sm_cnt": 3}]})");
    CHECK_THAT(e, StartsWith(origin + "devices[0]: unknown key \"sm_cnt\"; allowed keys: profile, count") &&
                      Contains("sm_count") && Contains("attributes"));
    e = json_error(R"({"device": []})");
    CHECK_THAT(e, Contains("unknown top-level key \"device\"") && Contains("allowed keys: devices"));
    e = json_error(R"({"devices": [{"profile": "t4", "attributes": {"L2_CACHE": 3}}]})");
    CHECK_THAT(e, Contains("devices[0].attributes.L2_CACHE") && Contains("unknown attribute") && Contains("1..147"));
    e = json_error(R"({"devices": [{"attributes": {"148": 3}}]})");
    CHECK_THAT(e, Contains("unknown attribute \"148\""));
  }
  SECTION("wrong types and values") {
    auto e = json_error(R"({"devices": [{"profile": "t4", "sm_count": "many"}]})");
    CHECK_THAT(e,
               StartsWith(origin + "devices[0].sm_count: ") && Contains("whole number") && Contains("string \"many\""));
    e = json_error(R"({"devices": [{"sm_count": 1.5}]})");
    CHECK_THAT(e, Contains("devices[0].sm_count") && Contains("number 1.5"));
    e = json_error(R"({"devices": [{"total_memory": -5}]})");
    CHECK_THAT(e, Contains("devices[0].total_memory") && Contains("positive"));
    e = json_error(R"({"devices": [{"total_memory": 0}]})");
    CHECK_THAT(e, Contains("devices[0].total_memory") && Contains("positive"));
    e = json_error(R"({"devices": [{"total_memory": "80GB"}]})");
    CHECK_THAT(e, Contains("devices[0].total_memory") && Contains("GiB"));
    e = json_error(R"({"devices": [{"total_memory": "0GiB"}]})");
    CHECK_THAT(e, Contains("positive"));
    e = json_error(R"({"devices": [{"total_memory": "2048TiB"}]})");
    CHECK_THAT(e, Contains("1 PiB"));
    e = json_error(R"({"devices": [{"has_fan": 1}]})");
    CHECK_THAT(e, Contains("devices[0].has_fan") && Contains("true or false"));
    e = json_error(R"({"devices": [{"name": 7}]})");
    CHECK_THAT(e, Contains("devices[0].name") && Contains("expected a string"));
    e = json_error(R"({"devices": [{"name": "   "}]})");
    CHECK_THAT(e, Contains("devices[0].name") && Contains("empty"));
    e = json_error(R"({"devices": [{"name": ")" + std::string(100, 'x') + R"("}]})");
    CHECK_THAT(e, Contains("devices[0].name") && Contains("at most 95") && Contains("shorten"));
    e = json_error(R"({"devices": [{"cc_minor": 10}]})");
    CHECK_THAT(e, Contains("devices[0].cc_minor") && Contains("out of range 0..9"));
    e = json_error(R"({"devices": [{"profile": 4}]})");
    CHECK_THAT(e, Contains("devices[0].profile") && Contains("known profiles"));
    e = json_error(R"({"devices": [{"profile": "a100"}]})");
    CHECK_THAT(e, Contains("devices[0].profile: unknown profile \"a100\"; known profiles: " + std::string(kKnown)));
    e = json_error(R"({"devices": [7]})");
    CHECK_THAT(e, Contains("devices[0]") && Contains("number 7") && Contains("\"profile\""));
    e = json_error(R"({"devices": {"profile": "t4"}})");
    CHECK_THAT(e, Contains("devices: expected an array"));
    e = json_error(R"([{"profile": "t4"}])");
    CHECK_THAT(e, Contains("top level must be an object"));
    e = json_error(R"({"comment": "no devices key"})");
    CHECK_THAT(e, Contains("missing \"devices\""));
    e = json_error(R"({"version": 2, "devices": []})");
    CHECK_THAT(e, Contains("version") && Contains("only version 1"));
    e = json_error(R"({"devices": [{"attributes": {"WARP_SIZE": 3000000000}}]})");
    CHECK_THAT(e, Contains("devices[0].attributes.WARP_SIZE") && Contains("does not fit"));
    e = json_error(R"({"devices": [{"attributes": {"WARP_SIZE": "32"}}]})");
    CHECK_THAT(e, Contains("whole number"));
    e = json_error(R"({"devices": [{"attributes": [1, 2]}]})");
    CHECK_THAT(e, Contains("devices[0].attributes") && Contains("expected an object"));
  }
  SECTION("counts") {
    auto e = json_error(R"({"devices": [{"profile": "t4", "count": 0}]})");
    CHECK_THAT(e, Contains("devices[0].count") && Contains("out of range 1..256"));
    e = json_error(R"({"devices": [{"count": 300}]})");
    CHECK_THAT(e, Contains("devices[0].count") && Contains("out of range 1..256"));
    e = json_error(R"({"devices": [{"count": -1}]})");
    CHECK_THAT(e, Contains("devices[0].count") && Contains("out of range"));
    e = json_error(R"({"devices": [{"count": 200}, {"profile": "t4", "count": 100}]})");
    CHECK_THAT(e, Contains("devices[1].count") && Contains("300 devices") && Contains("at most 256"));
  }
  SECTION("attributes owned by fields or identity") {
    auto e = json_error(R"({"devices": [{"attributes": {"CU_DEVICE_ATTRIBUTE_CLOCK_RATE": 1}}]})");
    CHECK_THAT(e, Contains("CU_DEVICE_ATTRIBUTE_CLOCK_RATE") && Contains("\"max_clock_sm_mhz\""));
    e = json_error(R"({"devices": [{"attributes": {"16": 1}}]})");
    CHECK_THAT(e, Contains("\"sm_count\""));
    e = json_error(R"({"devices": [{"attributes": {"PCI_BUS_ID": 1}}]})");
    CHECK_THAT(e, Contains("identity") && Contains("remove it"));
    e = json_error(R"({"devices": [{"attributes": {"38": 1, "L2_CACHE_SIZE": 2}}]})");
    CHECK_THAT(e, Contains("second time"));
  }
  SECTION("consistency") {
    auto e = json_error(R"({"devices": [{"power_limit_mw": 800000}]})");
    CHECK_THAT(
        e, Contains("devices[0]") && Contains("power_limit_mw (800000)") && Contains("power_max_limit_mw (400000)"));
    e = json_error(R"({"devices": [{"fan_speed_pct": 40}]})");
    CHECK_THAT(e, Contains("no fan") && Contains("\"has_fan\": true"));
    e = json_error(R"({"devices": [{"clock_sm_mhz": 5000}]})");
    CHECK_THAT(e, Contains("clock_sm_mhz (5000)") && Contains("max_clock_sm_mhz (1410)"));
    e = json_error(R"({"devices": [{"pcie_cur_gen": 5}]})");
    CHECK_THAT(e, Contains("pcie_cur_gen"));
  }
  SECTION("JSON syntax") {
    auto e = json_error("{\n  \"devices\": [\n    {\"profile\": \"t4\",}\n  ]\n}");
    CHECK_THAT(
        e, StartsWith(origin + "invalid JSON at line 3, column ") && Contains("byte") && Contains("fix the syntax"));
    e = json_error("");
    CHECK_THAT(e, StartsWith(origin + "invalid JSON at line 1"));
    e = json_error(R"({"devices": [], "devices": [{}]})");
    CHECK_THAT(e, Contains("\"devices\" appears twice"));
    e = json_error(R"({"devices": []})", "");
    CHECK(e == "<no error>");
    e = json_error("{", "");
    CHECK_THAT(e, StartsWith("FAKEGPU_CONFIG=<inline>: invalid JSON"));
    // A number no JSON number type holds (found by tests/fuzz/fuzz_config.cpp): a ConfigError
    // like any other syntax problem, not nlohmann's out_of_range.
    e = json_error("{\"version\": 1" + std::string(400, '0') + "}");
    CHECK(e == origin + "invalid JSON: number overflow parsing '1" + std::string(50, '0') +
                   "...'; no setting takes a number that large: write a smaller one");
  }
}

TEST_CASE("attribute names and UUID format", "[config]") {
  CHECK(fg::attribute_from_name("CU_DEVICE_ATTRIBUTE_CLOCK_RATE") == 13);
  CHECK(fg::attribute_from_name("clock_rate") == 13);
  CHECK(fg::attribute_from_name("38") == 38);
  CHECK(fg::attribute_from_name("147") == 147);
  CHECK(fg::attribute_from_name("0") == -1);
  CHECK(fg::attribute_from_name("148") == -1);
  CHECK(fg::attribute_from_name("") == -1);
  CHECK(fg::attribute_from_name("NOPE") == -1);
  CHECK(fg::attribute_from_name("CU_DEVICE_ATTRIBUTE_SHARED_MEMORY_PER_BLOCK") == 8);
  CHECK(fg::attribute_from_name("VIRTUAL_ADDRESS_MANAGEMENT_SUPPORTED") == 102);
  CHECK(std::string(fg::attribute_name(102)) == "CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED");
  CHECK(std::string(fg::attribute_name(16)) == "CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT");
  CHECK(std::string(fg::attribute_name(75)) == "CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR");
  CHECK(std::string(fg::attribute_name(147)) == "CU_DEVICE_ATTRIBUTE_ONLY_PARTIAL_HOST_NATIVE_ATOMIC_SUPPORTED");
  CHECK(fg::attribute_name(0) == nullptr);
  CHECK(fg::attribute_name(148) == nullptr);
  for (int a = 1; a < fg::kAttributeSlots; ++a) {
    REQUIRE(fg::attribute_name(a) != nullptr);
    CHECK(fg::attribute_from_name(fg::attribute_name(a)) == a);
  }
  CHECK(fg::format_uuid({0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee,
                         0xff}) == "GPU-00112233-4455-6677-8899-aabbccddeeff");
}
