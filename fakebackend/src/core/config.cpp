// SPDX-License-Identifier: Apache-2.0
// fakegpu — FAKEGPU_DEVICES / FAKEGPU_CONFIG parsing.  See config.h and
// fakebackend/profiles/README.md.
#include "config.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <system_error>
#include <vector>

namespace fg {
namespace {

using nlohmann::json;

constexpr uint64_t kMaxBytes = 1ull << 50;             // 1 PiB: total_memory, bar1_total
constexpr std::size_t kMaxConfigFileSize = 16u << 20;  // 16 MiB
constexpr const char* kReadme = "fakebackend/profiles/README.md";

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

// Decimal digits -> value, saturating at UINT64_MAX / 10 (anything that large is "too many").
uint64_t parse_digits(std::string_view s) {
  uint64_t v = 0;
  for (char c : s) {
    if (v > std::numeric_limits<uint64_t>::max() / 20) return std::numeric_limits<uint64_t>::max() / 10;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  return v;
}

std::string dq(std::string_view s) { return "\"" + std::string(s) + "\""; }

// ---------------------------------------------------------------------------------------
// FAKEGPU_DEVICES
// ---------------------------------------------------------------------------------------

[[noreturn]] void spec_fail(std::string_view spec, const std::string& msg) {
  throw ConfigError("FAKEGPU_DEVICES=" + dq(spec) + ": " + msg);
}

std::string too_many_text(uint64_t n) {
  return std::to_string(n) + " devices requested, at most " + std::to_string(kMaxDevices) +
         " are supported; lower the counts";
}

}  // namespace

std::vector<DeviceModel> default_device_models() {
  std::vector<DeviceModel> v(static_cast<std::size_t>(kDefaultDeviceCount), make_profile(kDefaultProfile));
  assign_identity(v);
  return v;
}

std::vector<DeviceModel> parse_devices_spec(std::string_view spec) {
  const std::string_view body = trim(spec);
  if (body.empty()) {
    spec_fail(spec,
              "empty device list; write a count (\"8\"), a profile list "
              "(\"a100-80gb:4,h100-80gb:2\"), \"0\" for no devices, or unset the variable for "
              "the default 8 x " +
                  std::string(kDefaultProfile));
  }
  if (body == "0") return {};

  std::vector<DeviceModel> out;
  uint64_t total = 0;
  std::size_t pos = 0;
  int item_no = 0;
  while (true) {
    const std::size_t comma = body.find(',', pos);
    const std::string_view item = trim(
        body.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos));
    ++item_no;
    if (item.empty()) {
      spec_fail(spec, "entry " + std::to_string(item_no) +
                          " is empty (a doubled or trailing comma?); remove it, e.g. "
                          "\"a100-80gb:2,t4\"");
    }

    std::string_view profile_part, count_part;
    const std::size_t colon = item.find(':');
    if (colon == std::string_view::npos) {
      if (all_digits(item)) {
        profile_part = kDefaultProfile;
        count_part = item;
      } else {
        profile_part = item;
      }
    } else {
      profile_part = trim(item.substr(0, colon));
      count_part = trim(item.substr(colon + 1));
      if (profile_part.empty()) {
        spec_fail(spec, "entry " + dq(item) + " has no profile before ':'; write PROFILE:COUNT, e.g. \"" +
                            std::string(kDefaultProfile) + ":4\"");
      }
      if (!all_digits(count_part)) {
        spec_fail(spec, "count " + dq(count_part) + " in entry " + dq(item) +
                            " is not a whole number; write PROFILE:COUNT with COUNT 1.." + std::to_string(kMaxDevices) +
                            ", e.g. \"" + std::string(profile_part) + ":2\"");
      }
    }

    uint64_t count = 1;
    if (!count_part.empty()) {
      count = parse_digits(count_part);
      if (count == 0) {
        spec_fail(spec, "entry " + dq(item) +
                            " has count 0; counts must be at least 1: drop the entry, or use "
                            "FAKEGPU_DEVICES=0 (alone) for no devices");
      }
    }

    DeviceModel model;
    if (!find_profile(profile_part, model)) {
      std::string msg = "unknown profile " + dq(profile_part) + "; known profiles: " + known_profiles_text();
      if (profile_part.find_first_of(" \t=") != std::string_view::npos)
        msg += " (entries are PROFILE or PROFILE:COUNT, separated by commas)";
      spec_fail(spec, msg);
    }

    total += count;
    if (total > static_cast<uint64_t>(kMaxDevices)) spec_fail(spec, too_many_text(total));
    for (uint64_t i = 0; i < count; ++i) out.push_back(model);

    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  assign_identity(out);
  return out;
}

// ---------------------------------------------------------------------------------------
// FAKEGPU_CONFIG (JSON)
// ---------------------------------------------------------------------------------------
namespace {

std::string describe(const json& j) {
  switch (j.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return std::string("boolean ") + (j.get<bool>() ? "true" : "false");
    case json::value_t::string: {
      std::string s = j.get<std::string>();
      if (s.size() > 40) s = s.substr(0, 37) + "...";
      return "string " + dq(s);
    }
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float: return "number " + j.dump();
    case json::value_t::array: return "an array";
    case json::value_t::object: return "an object";
    default: return "a value of unexpected type";
  }
}

class JsonConfig {
 public:
  explicit JsonConfig(std::string_view origin)
      : prefix_("FAKEGPU_CONFIG=" + std::string(origin.empty() ? "<inline>" : origin) + ": ") {}

  [[noreturn]] void fail(const std::string& path, const std::string& msg) const {
    throw ConfigError(prefix_ + (path.empty() ? "" : path + ": ") + msg);
  }

  std::vector<DeviceModel> parse(std::string_view text);

 private:
  enum class Kind { U32, I32, BYTES, BOOL };
  struct Field {
    const char* key;
    Kind kind;
    unsigned DeviceModel::*u;
    int DeviceModel::*i;
    uint64_t DeviceModel::*b;
    bool DeviceModel::*f;
    int64_t min;
    uint64_t max;
    const char* example;
  };
  static const std::vector<Field>& fields();
  static std::string allowed_entry_keys();

  int64_t get_integer(const json& j, const std::string& path, int64_t min, uint64_t max,
                      const std::string& example) const;
  uint64_t get_bytes(const json& j, const std::string& path) const;
  void apply_field(const Field& f, const json& v, DeviceModel& d, const std::string& path) const;
  void apply_name(const json& v, DeviceModel& d, const std::string& path) const;
  void apply_attributes(const json& v, DeviceModel& d, const std::string& path) const;
  void validate(const DeviceModel& d, const std::string& path) const;

  std::string prefix_;
};

const std::vector<JsonConfig::Field>& JsonConfig::fields() {
  constexpr uint64_t kU32 = std::numeric_limits<uint32_t>::max();
  auto u32 = [](const char* k, unsigned DeviceModel::*m, int64_t lo, uint64_t hi, const char* ex) {
    return Field{k, Kind::U32, m, nullptr, nullptr, nullptr, lo, hi, ex};
  };
  auto i32 = [](const char* k, int DeviceModel::*m, int64_t lo, uint64_t hi, const char* ex) {
    return Field{k, Kind::I32, nullptr, m, nullptr, nullptr, lo, hi, ex};
  };
  auto bytes = [](const char* k, uint64_t DeviceModel::*m, const char* ex) {
    return Field{k, Kind::BYTES, nullptr, nullptr, m, nullptr, 1, kMaxBytes, ex};
  };
  static const std::vector<Field> f = {
      bytes("total_memory", &DeviceModel::total_memory, "85899345920 or \"80GiB\""),
      i32("cc_major", &DeviceModel::cc_major, 1, 99, "8"),
      i32("cc_minor", &DeviceModel::cc_minor, 0, 9, "0"),
      i32("sm_count", &DeviceModel::sm_count, 1, 1024, "108"),
      u32("power_limit_mw", &DeviceModel::power_limit_mw, 1, kU32, "400000"),
      u32("power_default_limit_mw", &DeviceModel::power_default_limit_mw, 1, kU32, "400000"),
      u32("power_min_limit_mw", &DeviceModel::power_min_limit_mw, 1, kU32, "100000"),
      u32("power_max_limit_mw", &DeviceModel::power_max_limit_mw, 1, kU32, "400000"),
      u32("power_usage_mw", &DeviceModel::power_usage_mw, 0, kU32, "62000"),
      u32("temperature_c", &DeviceModel::temperature_c, 0, 200, "32"),
      u32("temp_slowdown_c", &DeviceModel::temp_slowdown_c, 0, 200, "89"),
      u32("temp_shutdown_c", &DeviceModel::temp_shutdown_c, 0, 200, "92"),
      u32("temp_max_gpu_c", &DeviceModel::temp_max_gpu_c, 0, 200, "85"),
      u32("temp_max_mem_c", &DeviceModel::temp_max_mem_c, 0, 200, "95"),
      u32("fan_speed_pct", &DeviceModel::fan_speed_pct, 0, 100, "30"),
      Field{"has_fan", Kind::BOOL, nullptr, nullptr, nullptr, &DeviceModel::has_fan, 0, 1, "true"},
      u32("max_clock_graphics_mhz", &DeviceModel::max_clock_graphics_mhz, 1, 100000, "1410"),
      u32("max_clock_sm_mhz", &DeviceModel::max_clock_sm_mhz, 1, 100000, "1410"),
      u32("max_clock_mem_mhz", &DeviceModel::max_clock_mem_mhz, 1, 100000, "1593"),
      u32("max_clock_video_mhz", &DeviceModel::max_clock_video_mhz, 1, 100000, "1290"),
      u32("clock_graphics_mhz", &DeviceModel::clock_graphics_mhz, 0, 100000, "210"),
      u32("clock_sm_mhz", &DeviceModel::clock_sm_mhz, 0, 100000, "210"),
      u32("clock_mem_mhz", &DeviceModel::clock_mem_mhz, 0, 100000, "1593"),
      u32("clock_video_mhz", &DeviceModel::clock_video_mhz, 0, 100000, "585"),
      u32("pcie_max_gen", &DeviceModel::pcie_max_gen, 1, 6, "4"),
      u32("pcie_max_width", &DeviceModel::pcie_max_width, 1, 32, "16"),
      u32("pcie_cur_gen", &DeviceModel::pcie_cur_gen, 1, 6, "4"),
      u32("pcie_cur_width", &DeviceModel::pcie_cur_width, 1, 32, "16"),
      bytes("bar1_total", &DeviceModel::bar1_total, "137438953472 or \"128GiB\""),
      i32("brand", &DeviceModel::brand, 0, 16, "14 (NVML_BRAND_NVIDIA)"),
      i32("architecture", &DeviceModel::architecture, 0, 255, "7 (NVML_DEVICE_ARCH_AMPERE)"),
      u32("pci_device_id", &DeviceModel::pci_device_id, 0, kU32, "548540638 (0x20B210DE)"),
      u32("pci_subsystem_id", &DeviceModel::pci_subsystem_id, 0, kU32, "343871710 (0x147F10DE)"),
  };
  return f;
}

std::string JsonConfig::allowed_entry_keys() {
  std::string s = "profile, count, comment, name";
  for (const auto& f : fields()) {
    s += ", ";
    s += f.key;
  }
  s += ", attributes";
  return s;
}

int64_t JsonConfig::get_integer(const json& j, const std::string& path, int64_t min, uint64_t max,
                                const std::string& example) const {
  const std::string range = std::to_string(min) + ".." + std::to_string(max);
  if (!j.is_number_integer()) {
    fail(path, "expected a whole number " + range + ", got " + describe(j) + "; write e.g. " + example);
  }
  if (j.is_number_unsigned()) {
    const uint64_t v = j.get<uint64_t>();
    if (v > max || static_cast<int64_t>(v) < min)
      fail(path, "value " + std::to_string(v) + " is out of range " + range + "; write e.g. " + example);
    return static_cast<int64_t>(v);
  }
  const int64_t v = j.get<int64_t>();
  if (v < min || (v >= 0 && static_cast<uint64_t>(v) > max))
    fail(path, "value " + std::to_string(v) + " is out of range " + range + "; write e.g. " + example);
  return v;
}

// Bytes: a positive integer, or a string "<integer><unit>" with unit B, KiB, MiB, GiB, TiB.
uint64_t JsonConfig::get_bytes(const json& j, const std::string& path) const {
  const std::string hint =
      "; write a positive byte count (85899345920) or a string with a binary unit "
      "(\"80GiB\", \"40960MiB\"; units B, KiB, MiB, GiB, TiB)";
  uint64_t v = 0;
  if (j.is_string()) {
    const std::string s = j.get<std::string>();
    std::string_view t = trim(s);
    std::size_t n = 0;
    while (n < t.size() && t[n] >= '0' && t[n] <= '9') ++n;
    const std::string_view digits = t.substr(0, n);
    const std::string_view unit = trim(t.substr(n));
    uint64_t mult = 0;
    if (unit == "B" || unit.empty())
      mult = 1;
    else if (unit == "KiB")
      mult = 1ull << 10;
    else if (unit == "MiB")
      mult = 1ull << 20;
    else if (unit == "GiB")
      mult = 1ull << 30;
    else if (unit == "TiB")
      mult = 1ull << 40;
    if (digits.empty() || mult == 0 || digits.size() > 16) fail(path, "cannot read " + describe(j) + hint);
    const uint64_t base = parse_digits(digits);
    if (base != 0 && base > kMaxBytes / mult)
      v = kMaxBytes + 1;
    else
      v = base * mult;
  } else if (j.is_number_unsigned()) {
    v = j.get<uint64_t>();
  } else if (j.is_number_integer()) {
    fail(path, "must be positive, got " + describe(j) + hint);
  } else {
    fail(path, "expected a byte count, got " + describe(j) + hint);
  }
  if (v == 0) fail(path, "must be positive, got 0" + hint);
  if (v > kMaxBytes) fail(path, std::to_string(v) + " bytes is more than the 1 PiB limit" + hint);
  return v;
}

void JsonConfig::apply_field(const Field& f, const json& v, DeviceModel& d, const std::string& path) const {
  switch (f.kind) {
    case Kind::U32: d.*(f.u) = static_cast<unsigned>(get_integer(v, path, f.min, f.max, f.example)); break;
    case Kind::I32: d.*(f.i) = static_cast<int>(get_integer(v, path, f.min, f.max, f.example)); break;
    case Kind::BYTES: d.*(f.b) = get_bytes(v, path); break;
    case Kind::BOOL:
      if (!v.is_boolean()) fail(path, "expected true or false, got " + describe(v));
      d.*(f.f) = v.get<bool>();
      break;
  }
}

void JsonConfig::apply_name(const json& v, DeviceModel& d, const std::string& path) const {
  if (!v.is_string())
    fail(path, "expected a string, got " + describe(v) + "; write e.g. \"Fake NVIDIA A100-SXM4-80GB\"");
  std::string name(trim(v.get<std::string>()));
  if (name.empty()) fail(path, "is empty; give the device a name, e.g. \"Fake NVIDIA A100-SXM4-80GB\"");
  for (unsigned char c : name)
    if (c < 0x20 || c == 0x7F) fail(path, "contains a control character; use printable text only");
  if (name.rfind(kNamePrefix, 0) != 0) name = std::string(kNamePrefix) + name;
  if (name.size() > kMaxNameLength) {
    fail(path, "is " + std::to_string(name.size()) +
                   " characters long (with the \"Fake \" prefix); NVML allows at most " +
                   std::to_string(kMaxNameLength) + ": shorten it");
  }
  d.name = std::move(name);
}

void JsonConfig::apply_attributes(const json& v, DeviceModel& d, const std::string& path) const {
  if (!v.is_object()) {
    fail(path, "expected an object of attribute: value pairs, got " + describe(v) +
                   "; write e.g. {\"CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT\": 2, \"38\": 41943040}");
  }
  std::map<int, std::string> seen;
  for (const auto& [key, value] : v.items()) {
    const std::string p = path + "." + key;
    const int a = attribute_from_name(key);
    if (a < 0) {
      fail(p, "unknown attribute " + dq(key) +
                  "; use a CUdevice_attribute name from cuda.h (the CU_DEVICE_ATTRIBUTE_ prefix is "
                  "optional), e.g. \"CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE\", or its number 1..147");
    }
    const char* field = nullptr;
    switch (a) {
      case attr::CLOCK_RATE: field = "max_clock_sm_mhz"; break;
      case attr::MEMORY_CLOCK_RATE: field = "max_clock_mem_mhz"; break;
      case attr::MULTIPROCESSOR_COUNT: field = "sm_count"; break;
      case attr::COMPUTE_CAPABILITY_MAJOR: field = "cc_major"; break;
      case attr::COMPUTE_CAPABILITY_MINOR: field = "cc_minor"; break;
      case attr::GPU_PCI_DEVICE_ID: field = "pci_device_id"; break;
      case attr::GPU_PCI_SUBSYSTEM_ID: field = "pci_subsystem_id"; break;
      default: break;
    }
    if (field) {
      fail(p, std::string(attribute_name(a)) + " is derived from the field \"" + field +
                  "\" (NVML reports it too); set \"" + field + "\" in this entry instead");
    }
    if (a == attr::PCI_BUS_ID || a == attr::PCI_DEVICE_ID || a == attr::PCI_DOMAIN_ID ||
        a == attr::MULTI_GPU_BOARD_GROUP_ID) {
      fail(p, std::string(attribute_name(a)) +
                  " is part of the device's identity, assigned from its position in the list; "
                  "remove it (reorder the devices to change PCI addresses)");
    }
    if (auto it = seen.find(a); it != seen.end()) {
      fail(p, "sets " + std::string(attribute_name(a)) + " a second time (first as " + dq(it->second) +
                  "); keep one of them");
    }
    seen.emplace(a, key);
    int64_t val;
    if (value.is_boolean()) {
      val = value.get<bool>() ? 1 : 0;
    } else if (value.is_number_integer()) {
      if (value.is_number_unsigned()) {
        const uint64_t u = value.get<uint64_t>();
        if (u > static_cast<uint64_t>(std::numeric_limits<int32_t>::max()))
          fail(p, "value " + std::to_string(u) + " does not fit the attribute's int (max 2147483647)");
        val = static_cast<int64_t>(u);
      } else {
        val = value.get<int64_t>();
        if (val < std::numeric_limits<int32_t>::min())
          fail(p, "value " + std::to_string(val) + " does not fit the attribute's int (min -2147483648)");
      }
    } else {
      fail(p, "expected a whole number (or true/false), got " + describe(value));
    }
    d.attributes[static_cast<std::size_t>(a)] = static_cast<int>(val);
  }
}

void JsonConfig::validate(const DeviceModel& d, const std::string& path) const {
  auto check_le = [&](unsigned lo, const char* lo_name, unsigned hi, const char* hi_name) {
    if (lo > hi) {
      fail(path, std::string(lo_name) + " (" + std::to_string(lo) + ") is greater than " + hi_name + " (" +
                     std::to_string(hi) + "); lower " + lo_name + " or raise " + hi_name);
    }
  };
  check_le(d.power_min_limit_mw, "power_min_limit_mw", d.power_max_limit_mw, "power_max_limit_mw");
  check_le(d.power_min_limit_mw, "power_min_limit_mw", d.power_limit_mw, "power_limit_mw");
  check_le(d.power_limit_mw, "power_limit_mw", d.power_max_limit_mw, "power_max_limit_mw");
  check_le(d.power_min_limit_mw, "power_min_limit_mw", d.power_default_limit_mw, "power_default_limit_mw");
  check_le(d.power_default_limit_mw, "power_default_limit_mw", d.power_max_limit_mw, "power_max_limit_mw");
  check_le(d.clock_graphics_mhz, "clock_graphics_mhz", d.max_clock_graphics_mhz, "max_clock_graphics_mhz");
  check_le(d.clock_sm_mhz, "clock_sm_mhz", d.max_clock_sm_mhz, "max_clock_sm_mhz");
  check_le(d.clock_mem_mhz, "clock_mem_mhz", d.max_clock_mem_mhz, "max_clock_mem_mhz");
  check_le(d.clock_video_mhz, "clock_video_mhz", d.max_clock_video_mhz, "max_clock_video_mhz");
  check_le(d.pcie_cur_gen, "pcie_cur_gen", d.pcie_max_gen, "pcie_max_gen");
  check_le(d.pcie_cur_width, "pcie_cur_width", d.pcie_max_width, "pcie_max_width");
  if (d.temp_slowdown_c != 0 && d.temp_shutdown_c != 0)
    check_le(d.temp_slowdown_c, "temp_slowdown_c", d.temp_shutdown_c, "temp_shutdown_c");
  if (!d.has_fan && d.fan_speed_pct != 0) {
    fail(path, "fan_speed_pct is " + std::to_string(d.fan_speed_pct) +
                   " but the device has no fan; add \"has_fan\": true or remove fan_speed_pct");
  }
}

std::vector<DeviceModel> JsonConfig::parse(std::string_view text) {
  // Duplicate keys: nlohmann keeps the last one silently; we reject them.
  std::vector<std::vector<std::string>> key_stack;
  std::string duplicate;
  json::parser_callback_t cb = [&](int /*depth*/, json::parse_event_t ev, json& parsed) {
    switch (ev) {
      case json::parse_event_t::object_start: key_stack.emplace_back(); break;
      case json::parse_event_t::object_end:
        if (!key_stack.empty()) key_stack.pop_back();
        break;
      case json::parse_event_t::key:
        if (!key_stack.empty() && parsed.is_string()) {
          const std::string k = parsed.get<std::string>();
          for (const auto& s : key_stack.back())
            if (s == k && duplicate.empty()) duplicate = k;
          key_stack.back().push_back(k);
        }
        break;
      default: break;
    }
    return true;
  };

  json root;
  try {
    root = json::parse(text.begin(), text.end(), cb, /*allow_exceptions=*/true,
                       /*ignore_comments=*/true);
  } catch (const json::parse_error& e) {
    const std::size_t upto = std::min<std::size_t>(e.byte > 0 ? e.byte - 1 : 0, text.size());
    std::size_t line = 1, col = 1;
    for (std::size_t i = 0; i < upto; ++i) {
      if (text[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    std::string detail = e.what();
    if (auto p = detail.find("column "); p != std::string::npos) {
      if (auto q = detail.find(": ", p); q != std::string::npos) detail = detail.substr(q + 2);
    }
    fail("", "invalid JSON at line " + std::to_string(line) + ", column " + std::to_string(col) + " (byte " +
                 std::to_string(e.byte) + "): " + detail +
                 "; fix the syntax there (a missing comma, quote or bracket, or a trailing comma, "
                 "is the usual cause)");
  } catch (const json::out_of_range& e) {
    // A number beyond every number type nlohmann has (out_of_range 406, thrown while parsing):
    // "[json.exception.out_of_range.406] number overflow parsing '555…'".
    std::string detail = e.what();
    if (auto p = detail.find("] "); p != std::string::npos) detail = detail.substr(p + 2);
    if (detail.size() > 80) detail = detail.substr(0, 76) + (detail.back() == '\'' ? "...'" : "...");
    fail("", "invalid JSON: " + detail + "; no setting takes a number that large: write a smaller one");
  }
  if (!duplicate.empty()) {
    fail("", "key " + dq(duplicate) +
                 " appears twice in the same object; JSON would silently keep only the last one, "
                 "so remove one of them");
  }

  if (!root.is_object()) {
    fail("",
         "the top level must be an object like {\"devices\": [{\"profile\": \"a100-80gb\", "
         "\"count\": 8}]}, got " +
             describe(root));
  }
  for (const auto& [key, value] : root.items()) {
    if (key == "devices" || key == "comment") continue;
    if (key == "version") {
      if (!value.is_number_integer() || value.get<int64_t>() != 1)
        fail("version",
             "only version 1 is supported, got " + describe(value) + "; write \"version\": 1 or leave it out");
      continue;
    }
    fail("", "unknown top-level key " + dq(key) + "; allowed keys: devices, version, comment");
  }
  if (root.contains("comment") && !root["comment"].is_string())
    fail("comment", "expected a string, got " + describe(root["comment"]));
  if (!root.contains("devices")) {
    fail("",
         "missing \"devices\"; add e.g. \"devices\": [{\"profile\": \"a100-80gb\", \"count\": 8}] "
         "(an empty list means no devices)");
  }
  const json& devices = root["devices"];
  if (!devices.is_array()) {
    fail("devices", "expected an array of device entries, got " + describe(devices) +
                        "; write e.g. \"devices\": [{\"profile\": \"h100-80gb\", \"count\": 2}]");
  }

  std::vector<DeviceModel> out;
  uint64_t total = 0;
  for (std::size_t n = 0; n < devices.size(); ++n) {
    const std::string path = "devices[" + std::to_string(n) + "]";
    json entry = devices[n];
    if (entry.is_string()) entry = json{{"profile", entry}};
    if (!entry.is_object()) {
      fail(path,
           "expected an object like {\"profile\": \"t4\", \"count\": 2} or a profile id "
           "string like \"t4\", got " +
               describe(entry));
    }
    // Unknown keys first: a typo must not be reported as some other problem.
    for (const auto& [key, value] : entry.items()) {
      (void)value;
      bool known = key == "profile" || key == "count" || key == "comment" || key == "name" || key == "attributes";
      for (const auto& f : fields()) known = known || key == f.key;
      if (!known) {
        fail(path, "unknown key " + dq(key) + "; allowed keys: " + allowed_entry_keys());
      }
    }

    std::string profile(kDefaultProfile);
    if (entry.contains("profile")) {
      const json& p = entry["profile"];
      if (!p.is_string()) {
        fail(path + ".profile",
             "expected a profile id string, got " + describe(p) + "; known profiles: " + known_profiles_text());
      }
      profile = p.get<std::string>();
    }
    DeviceModel d;
    if (!find_profile(profile, d)) {
      fail(path + ".profile", "unknown profile " + dq(profile) + "; known profiles: " + known_profiles_text());
    }

    uint64_t count = 1;
    if (entry.contains("count")) {
      count = static_cast<uint64_t>(
          get_integer(entry["count"], path + ".count", 1, static_cast<uint64_t>(kMaxDevices), "2"));
    }
    if (entry.contains("comment") && !entry["comment"].is_string())
      fail(path + ".comment", "expected a string, got " + describe(entry["comment"]));

    for (const auto& f : fields()) {
      if (entry.contains(f.key)) apply_field(f, entry[f.key], d, path + "." + f.key);
    }
    if (entry.contains("name")) apply_name(entry["name"], d, path + ".name");
    if (entry.contains("attributes")) apply_attributes(entry["attributes"], d, path + ".attributes");
    validate(d, path);
    sync_mirrored_attributes(d);

    total += count;
    if (total > static_cast<uint64_t>(kMaxDevices)) {
      fail(path + ".count", "the configuration declares " + std::to_string(total) + " devices so far, at most " +
                                std::to_string(kMaxDevices) + " are supported; lower the counts");
    }
    for (uint64_t i = 0; i < count; ++i) out.push_back(d);
  }
  assign_identity(out);
  return out;
}

bool is_set(const char* v) { return v != nullptr && !trim(v).empty(); }

std::string read_config_file(const char* path) {
  const std::string where = std::string("FAKEGPU_CONFIG=") + path + ": ";
  const std::string fix = "; point FAKEGPU_CONFIG at a readable JSON file (schema: " + std::string(kReadme) +
                          ") or unset it";
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    throw ConfigError(where + "cannot open the file: " + std::error_code(err, std::generic_category()).message() + fix);
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) == 0) {
    if (S_ISDIR(st.st_mode)) throw ConfigError(where + "is a directory, not a file" + fix);
    if (st.st_size > static_cast<off_t>(kMaxConfigFileSize))
      throw ConfigError(where + "the file is " + std::to_string(st.st_size) +
                        " bytes, more than the 16 MiB a device configuration may have" + fix);
  }
  std::string text;
  char buf[65536];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      throw ConfigError(where + "cannot read the file: " + std::error_code(err, std::generic_category()).message() +
                        fix);
    }
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > kMaxConfigFileSize)
      throw ConfigError(where + "the file is larger than the 16 MiB a device configuration may have" + fix);
  }
  return text;
}

}  // namespace

std::vector<DeviceModel> parse_config_json(std::string_view json_text, std::string_view origin) {
  return JsonConfig(origin).parse(json_text);
}

std::vector<DeviceModel> load_device_models(const char* devices_env, const char* config_env) {
  const bool have_devices = is_set(devices_env);
  const bool have_config = is_set(config_env);
  if (have_devices && have_config) {
    throw ConfigError(std::string("both FAKEGPU_DEVICES=") + dq(devices_env) + " and FAKEGPU_CONFIG=" + dq(config_env) +
                      " are set, and they are alternatives; unset one of them (a FAKEGPU_CONFIG "
                      "file can express everything FAKEGPU_DEVICES can)");
  }
  if (have_devices) return parse_devices_spec(devices_env);
  if (have_config) {
    const std::string path(trim(config_env));
    return parse_config_json(read_config_file(path.c_str()), path);
  }
  return default_device_models();
}

}  // namespace fg
