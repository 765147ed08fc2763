// SPDX-License-Identifier: Apache-2.0
// The dashboard's files, embedded in the binary at build time (embed_assets.cmake writes
// page_assets.cpp in the build tree from page/ and Chart.js): the page works offline, with no
// CDN and nothing installed next to the binary.
#pragma once
#include <span>
#include <string_view>

namespace fgtrace::server {

struct Asset {
  std::string_view path;          // "/assets/app.js"; the page is "/index.html"
  std::string_view content_type;  // "text/javascript; charset=utf-8"
  std::string_view body;
};

std::span<const Asset> assets() noexcept;
const Asset* find_asset(std::string_view path) noexcept;

}  // namespace fgtrace::server
