// SPDX-License-Identifier: Apache-2.0
// CUDA arrays, texture objects and surface objects in kernels, against a host model of the
// CUDA Programming Guide's appendix "Texture Fetching":
//   tex1Dfetch on linear memory (floats; 8-bit integers read as normalized floats; out of range
//     reads zeros); tex2D point and linear filtering on a float array and on a uchar4 array
//     (normalized float and element reads); each address mode (wrap, clamp, mirror, border)
//     with normalized coordinates; tex3D and tex2DLayered; tex2Dgather;
//   surf2Dwrite + surf2Dread round trips (with the zero and clamp boundary modes);
//   cudaMemcpy2DToArray / cudaMemcpy2DFromArray / cudaMemcpyToArray / cudaMemcpy3D round trips;
//   a texture destroyed before a launch: the launch faults (cudaErrorIllegalAddress), last.
// Coordinates are texel centres plus fractions away from 1/512 steps where a mode's
// formulation (on coordinates or on texel indices) could differ at a texel's edge. Point
// samples and element reads are exact. Linear filtering is compared exactly with the host's
// evaluation of the guide's sum in float with the same weights (the fraction in fixed point
// with 8 fraction bits, rounded to the nearest 1/256): a GPU that rounds the weight otherwise
// differs by at most 2^-8 of the footprint's range.
#include "check.h"

#include <algorithm>
#include <cmath>
#include <vector>

// ---- kernels ---------------------------------------------------------------------------------
__global__ void fetch1d(cudaTextureObject_t t, int first, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex1Dfetch<float>(t, first + i);
}

__global__ void fetch1d_int(cudaTextureObject_t t, int* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex1Dfetch<int>(t, i);
}

__global__ void sample2d(cudaTextureObject_t t, const float2* uv, float4* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2D<float4>(t, uv[i].x, uv[i].y);
}

__global__ void sample2d_uchar4(cudaTextureObject_t t, const float2* uv, uchar4* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2D<uchar4>(t, uv[i].x, uv[i].y);
}

__global__ void sample3d(cudaTextureObject_t t, const float4* p, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex3D<float>(t, p[i].x, p[i].y, p[i].z);
}

__global__ void sample_layered(cudaTextureObject_t t, const float2* uv, const int* layer, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2DLayered<float>(t, uv[i].x, uv[i].y, layer[i]);
}

__global__ void gather(cudaTextureObject_t t, const float2* uv, float4* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2Dgather<float4>(t, uv[i].x, uv[i].y, 1);  // the green channel
}

__device__ float surface_value(int x, int y) { return static_cast<float>(y * 1000 + x) + 0.25f; }

__global__ void surf_write(cudaSurfaceObject_t s, int w, int h) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x < w && y < h) surf2Dwrite(surface_value(x, y), s, x * 4, y);
}

// Reads (x, y) of each point three ways: in range, and with the zero and clamp boundary modes.
__global__ void surf_read(cudaSurfaceObject_t s, const int2* xy, float* in_range, float* zero, float* clamp, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = -1.0f;
  if (xy[i].x >= 0 && xy[i].y >= 0) surf2Dread(&v, s, (xy[i].x % 8) * 4, xy[i].y % 5);
  in_range[i] = v;
  surf2Dread(&v, s, xy[i].x * 4, xy[i].y, cudaBoundaryModeZero);
  zero[i] = v;
  surf2Dread(&v, s, xy[i].x * 4, xy[i].y, cudaBoundaryModeClamp);
  clamp[i] = v;
}

// Adds one to every element of a uchar4 surface, in place.
__global__ void surf_increment(cudaSurfaceObject_t s, int w, int h) {
  const int x = threadIdx.x, y = blockIdx.x;
  if (x >= w || y >= h) return;
  uchar4 c;
  surf2Dread(&c, s, x * 4, y);
  surf2Dwrite(make_uchar4(c.x + 1, c.y + 1, c.z + 1, c.w + 1), s, x * 4, y);
}

// ---- the host model ----------------------------------------------------------------------------
namespace model {

enum Mode { Wrap = 0, Clamp = 1, Mirror = 2, Border = 3 };

// Texel index i on an axis of n under mode (texel-index formulation): -1 for a border texel.
long address(long i, long n, int mode, bool normalized) {
  if (!normalized && (mode == Wrap || mode == Mirror)) mode = Clamp;  // they need normalized coordinates
  switch (mode) {
    case Wrap: return ((i % n) + n) % n;
    case Mirror: {
      const long t = ((i % (2 * n)) + 2 * n) % (2 * n);
      return t < n ? t : 2 * n - 1 - t;
    }
    case Border: return i < 0 || i >= n ? -1 : i;
    default: return std::min(std::max(i, 0L), n - 1);
  }
}

float weight(float frac) { return std::floor(frac * 256.0f + 0.5f) / 256.0f; }

// A 2-D texture of 4-channel float texels (fewer channels: 0, 0, 1 after them).
struct Tex2D {
  int w, h;
  std::vector<float4> texels;
  int mode[2];
  bool linear, normalized;
  float4 border;
  float4 at(long x, long y) const {
    x = address(x, w, mode[0], normalized), y = address(y, h, mode[1], normalized);
    if (x < 0 || y < 0) return border;
    return texels[static_cast<size_t>(y) * w + x];
  }
  float4 sample(float u, float v) const {
    const float x = normalized ? u * static_cast<float>(w) : u, y = normalized ? v * static_cast<float>(h) : v;
    if (!linear) return at(static_cast<long>(std::floor(x)), static_cast<long>(std::floor(y)));
    const float xb = x - 0.5f, yb = y - 0.5f;
    const float fx = std::floor(xb), fy = std::floor(yb);
    const float a = weight(xb - fx), b = weight(yb - fy);
    const long i = static_cast<long>(fx), j = static_cast<long>(fy);
    // (1-α)(1-β)T[i,j] + α(1-β)T[i+1,j] + (1-α)βT[i,j+1] + αβT[i+1,j+1], in this order.
    const float wts[4] = {(1.0f - a) * (1.0f - b), a * (1.0f - b), (1.0f - a) * b, a * b};
    const float4 ts[4] = {at(i, j), at(i + 1, j), at(i, j + 1), at(i + 1, j + 1)};
    float4 r = make_float4(0, 0, 0, 0);
    for (int k = 0; k < 4; ++k) {
      r.x = r.x + wts[k] * ts[k].x;
      r.y = r.y + wts[k] * ts[k].y;
      r.z = r.z + wts[k] * ts[k].z;
      r.w = r.w + wts[k] * ts[k].w;
    }
    return r;
  }
};

}  // namespace model

// ---- helpers -------------------------------------------------------------------------------------
int blocks(int n) { return (n + 127) / 128; }

bool same(float a, float b) { return kt::bits(a) == kt::bits(b); }

// Compares n float4 results (the first `channels` of each) bit for bit; names the first mismatch.
bool check_float4(const char* name, const std::vector<float4>& got, const std::vector<float4>& want, int channels,
                  const std::vector<float2>* uv = nullptr) {
  for (size_t i = 0; i < want.size(); ++i) {
    const float g[4] = {got[i].x, got[i].y, got[i].z, got[i].w}, w[4] = {want[i].x, want[i].y, want[i].z, want[i].w};
    for (int c = 0; c < channels; ++c)
      if (!same(g[c], w[c]))
        return kt::checkf(name, false, "sample %zu (%.6g, %.6g) channel %d: got %s, want %s", i, uv ? (*uv)[i].x : 0.0,
                          uv ? (*uv)[i].y : 0.0, c, kt::show(g[c]).c_str(), kt::show(w[c]).c_str());
  }
  return kt::check(name, true);
}

cudaTextureObject_t make_texture(const cudaResourceDesc& res, cudaTextureAddressMode mode, cudaTextureFilterMode filter,
                                 cudaTextureReadMode read, bool normalized, float4 border = make_float4(0, 0, 0, 0)) {
  cudaTextureDesc td;
  std::memset(&td, 0, sizeof td);
  td.addressMode[0] = td.addressMode[1] = td.addressMode[2] = mode;
  td.filterMode = filter;
  td.readMode = read;
  td.normalizedCoords = normalized;
  td.borderColor[0] = border.x, td.borderColor[1] = border.y, td.borderColor[2] = border.z;
  td.borderColor[3] = border.w;
  cudaTextureObject_t t = 0;
  CK(cudaCreateTextureObject(&t, &res, &td, nullptr));
  return t;
}

cudaResourceDesc array_resource(cudaArray_t a) {
  cudaResourceDesc r;
  std::memset(&r, 0, sizeof r);
  r.resType = cudaResourceTypeArray;
  r.res.array.array = a;
  return r;
}

// ---- checks ---------------------------------------------------------------------------------------
void linear_memory() {
  constexpr int kN = 1000;
  std::vector<float> values(kN);
  for (int i = 0; i < kN; ++i) values[i] = static_cast<float>(i) * 0.75f - 100.0f;
  float* d = kt::to_device(values);
  cudaResourceDesc r;
  std::memset(&r, 0, sizeof r);
  r.resType = cudaResourceTypeLinear;
  r.res.linear.devPtr = d;
  r.res.linear.desc = cudaCreateChannelDesc<float>();
  r.res.linear.sizeInBytes = kN * sizeof(float);
  cudaTextureObject_t t = make_texture(r, cudaAddressModeClamp, cudaFilterModePoint, cudaReadModeElementType, false);
  constexpr int kFirst = -5, kCount = kN + 10;  // 5 elements before and after: zeros
  float* out = nullptr;
  CK(cudaMalloc(&out, kCount * sizeof(float)));
  fetch1d<<<blocks(kCount), 128>>>(t, kFirst, out, kCount);
  CK_LAUNCH();
  const auto got = kt::from_device(out, kCount);
  int bad = -1;
  float want_bad = 0;
  for (int i = 0; i < kCount && bad < 0; ++i) {
    const int e = kFirst + i;
    const float want = e >= 0 && e < kN ? values[e] : 0.0f;
    if (!same(got[i], want)) bad = i, want_bad = want;
  }
  kt::checkf("tex1Dfetch_linear_float", bad < 0, "element %d: got %s, want %s", kFirst + bad,
             bad < 0 ? "" : kt::show(got[bad]).c_str(), kt::show(want_bad).c_str());
  // 8-bit unsigned integers read as normalized floats, and 32-bit integers read as integers.
  std::vector<unsigned char> bytes(kN);
  for (int i = 0; i < kN; ++i) bytes[i] = static_cast<unsigned char>(i * 37 + 11);
  unsigned char* db = kt::to_device(bytes);
  r.res.linear.devPtr = db;
  r.res.linear.desc = cudaCreateChannelDesc<unsigned char>();
  r.res.linear.sizeInBytes = kN;
  cudaTextureObject_t tb = make_texture(r, cudaAddressModeClamp, cudaFilterModePoint, cudaReadModeNormalizedFloat,
                                        false);
  fetch1d<<<blocks(kN), 128>>>(tb, 0, out, kN);
  CK_LAUNCH();
  const auto gotb = kt::from_device(out, kN);
  bad = -1;
  for (int i = 0; i < kN && bad < 0; ++i)
    if (!same(gotb[i], static_cast<float>(bytes[i]) / 255.0f)) bad = i;
  kt::checkf("tex1Dfetch_linear_uchar_normalized", bad < 0, "element %d: got %s, want %s", bad,
             bad < 0 ? "" : kt::show(gotb[bad]).c_str(),
             bad < 0 ? "" : kt::show(static_cast<float>(bytes[bad]) / 255.0f).c_str());
  std::vector<int> ints(kN);
  for (int i = 0; i < kN; ++i) ints[i] = i * i - 7777;
  int* di = kt::to_device(ints);
  r.res.linear.devPtr = di;
  r.res.linear.desc = cudaCreateChannelDesc<int>();
  r.res.linear.sizeInBytes = kN * sizeof(int);
  cudaTextureObject_t ti = make_texture(r, cudaAddressModeClamp, cudaFilterModePoint, cudaReadModeElementType, false);
  int* outi = nullptr;
  CK(cudaMalloc(&outi, kN * sizeof(int)));
  fetch1d_int<<<blocks(kN), 128>>>(ti, outi, kN);
  CK_LAUNCH();
  kt::check("tex1Dfetch_linear_int", kt::from_device(outi, kN) == ints);
  for (cudaTextureObject_t o : {t, tb, ti}) CK(cudaDestroyTextureObject(o));
  CK(cudaFree(d));
  CK(cudaFree(db));
  CK(cudaFree(di));
  CK(cudaFree(out));
  CK(cudaFree(outi));
}

// Coordinates over [lo, hi) of an axis: texel centres plus fractions that keep clear of 1/512.
std::vector<float> axis_points(float lo, float hi, float step) {
  std::vector<float> v;
  for (float x = lo; x < hi; x += step) v.push_back(x);
  return v;
}

void float_array_2d() {
  constexpr int kW = 13, kH = 7;
  std::vector<float> texels(kW * kH);
  for (int y = 0; y < kH; ++y)
    for (int x = 0; x < kW; ++x) texels[y * kW + x] = static_cast<float>((x * 7 + y * 13) % 23) * 0.5f - 3.0f;
  const cudaChannelFormatDesc f1 = cudaCreateChannelDesc<float>();
  cudaArray_t a = nullptr;
  CK(cudaMallocArray(&a, &f1, kW, kH));
  // Uploaded from a host image with 64-byte rows, read back with 60-byte rows.
  std::vector<unsigned char> image(64 * kH, 0);
  for (int y = 0; y < kH; ++y) std::memcpy(&image[y * 64], &texels[y * kW], kW * 4);
  CK(cudaMemcpy2DToArray(a, 0, 0, image.data(), 64, kW * 4, kH, cudaMemcpyHostToDevice));
  std::vector<unsigned char> back(60 * kH, 0);
  CK(cudaMemcpy2DFromArray(back.data(), 60, a, 0, 0, kW * 4, kH, cudaMemcpyDeviceToHost));
  bool round_trip = true;
  for (int y = 0; y < kH; ++y) round_trip = round_trip && std::memcmp(&back[y * 60], &texels[y * kW], kW * 4) == 0;
  kt::check("memcpy2d_to_from_array_round_trip", round_trip);
  // The deprecated linear forms: a run from (8 bytes, row 2) across rows, within the array.
  std::vector<float> run_in(20), run_out(20);
  for (int i = 0; i < 20; ++i) run_in[i] = static_cast<float>(i) - 0.5f;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  CK(cudaMemcpyToArray(a, 8, 2, run_in.data(), 80, cudaMemcpyHostToDevice));
  CK(cudaMemcpyFromArray(run_out.data(), a, 8, 2, 80, cudaMemcpyDeviceToHost));
  // (On a scratch array: NVIDIA's runtime copies the rows that fit before it refuses the rest.)
  cudaArray_t scratch = nullptr;
  CK(cudaMallocArray(&scratch, &f1, kW, kH));
  const cudaError_t past = cudaMemcpyToArray(scratch, 0, kH - 1, run_in.data(), kW * 4 + 4, cudaMemcpyHostToDevice);
  CK(cudaFreeArray(scratch));
#pragma GCC diagnostic pop
  kt::checkf("memcpy_to_from_array_round_trip", run_out == run_in && past == cudaErrorInvalidValue,
             "a run past the array: %s", cudaGetErrorName(past));
  (void)cudaGetLastError();
  std::memcpy(&texels[2 * kW + 2], run_in.data(), 80);  // the texels the run replaced

  model::Tex2D m{kW, kH, {}, {model::Clamp, model::Clamp}, false, false, make_float4(0, 0, 0, 0)};
  for (float v : texels) m.texels.push_back(make_float4(v, 0, 0, 1));
  const cudaResourceDesc res = array_resource(a);
  auto run = [&](const char* name, cudaTextureAddressMode mode, cudaTextureFilterMode filter, bool normalized,
                 const std::vector<float2>& uv, float4 border = make_float4(0, 0, 0, 0)) {
    cudaTextureObject_t t = make_texture(res, mode, filter, cudaReadModeElementType, normalized, border);
    m.mode[0] = m.mode[1] = mode;
    m.linear = filter == cudaFilterModeLinear;
    m.normalized = normalized;
    m.border = border;
    float2* duv = kt::to_device(uv);
    float4* out = nullptr;
    CK(cudaMalloc(&out, uv.size() * sizeof(float4)));
    sample2d<<<blocks(static_cast<int>(uv.size())), 128>>>(t, duv, out, static_cast<int>(uv.size()));
    CK_LAUNCH();
    std::vector<float4> want;
    for (const float2& p : uv) want.push_back(m.sample(p.x, p.y));
    check_float4(name, kt::from_device(out, uv.size()), want, 1, &uv);
    CK(cudaDestroyTextureObject(t));
    CK(cudaFree(duv));
    CK(cudaFree(out));
  };
  // Unnormalized coordinates over and around the array.
  std::vector<float2> uv;
  for (float y : axis_points(-2.3f, kH + 2.0f, 0.37f))
    for (float x : axis_points(-2.9f, kW + 2.0f, 0.41f)) uv.push_back(make_float2(x, y));
  run("tex2D_float_point_clamp", cudaAddressModeClamp, cudaFilterModePoint, false, uv);
  run("tex2D_float_linear_clamp", cudaAddressModeClamp, cudaFilterModeLinear, false, uv);
  run("tex2D_float_linear_border", cudaAddressModeBorder, cudaFilterModeLinear, false, uv, make_float4(4.5f, 0, 0, 0));
  // Normalized coordinates: texel centres of [-2N, 3N) (wrapping and mirroring twice), and a
  // linear filter inside and around the array.
  std::vector<float2> centres;
  for (int j = -2 * kH; j < 3 * kH; ++j)
    for (int i = -2 * kW; i < 3 * kW; ++i)
      centres.push_back(make_float2((static_cast<float>(i) + 0.5f) / kW, (static_cast<float>(j) + 0.5f) / kH));
  run("tex2D_normalized_point_wrap", cudaAddressModeWrap, cudaFilterModePoint, true, centres);
  run("tex2D_normalized_point_clamp", cudaAddressModeClamp, cudaFilterModePoint, true, centres);
  run("tex2D_normalized_point_mirror", cudaAddressModeMirror, cudaFilterModePoint, true, centres);
  run("tex2D_normalized_point_border", cudaAddressModeBorder, cudaFilterModePoint, true, centres,
      make_float4(-7.25f, 0, 0, 0));
  std::vector<float2> norm;
  for (const float2& p : uv) norm.push_back(make_float2(p.x / kW, p.y / kH));
  run("tex2D_normalized_linear_clamp", cudaAddressModeClamp, cudaFilterModeLinear, true, norm);
  CK(cudaFreeArray(a));
}

void uchar4_array_2d() {
  constexpr int kW = 9, kH = 6;
  std::vector<uchar4> texels(kW * kH);
  for (int i = 0; i < kW * kH; ++i)
    texels[i] = make_uchar4(static_cast<unsigned char>(i * 29 + 3), static_cast<unsigned char>(255 - i * 7),
                            static_cast<unsigned char>(i * i), static_cast<unsigned char>(i * 53 + 100));
  const cudaChannelFormatDesc c4 = cudaCreateChannelDesc<uchar4>();
  cudaArray_t a = nullptr;
  CK(cudaMallocArray(&a, &c4, kW, kH, cudaArraySurfaceLoadStore));
  CK(cudaMemcpy2DToArray(a, 0, 0, texels.data(), kW * 4, kW * 4, kH, cudaMemcpyHostToDevice));
  const cudaResourceDesc res = array_resource(a);
  model::Tex2D m{kW, kH, {}, {model::Clamp, model::Clamp}, true, false, make_float4(0, 0, 0, 0)};
  for (const uchar4& c : texels)
    m.texels.push_back(make_float4(c.x / 255.0f, c.y / 255.0f, c.z / 255.0f, c.w / 255.0f));
  std::vector<float2> uv;
  for (float y : axis_points(-1.3f, kH + 1.0f, 0.29f))
    for (float x : axis_points(-1.7f, kW + 1.0f, 0.31f)) uv.push_back(make_float2(x, y));
  float2* duv = kt::to_device(uv);
  float4* out = nullptr;
  CK(cudaMalloc(&out, uv.size() * sizeof(float4)));
  const int n = static_cast<int>(uv.size());
  // Linear filtering of normalized floats.
  cudaTextureObject_t t = make_texture(res, cudaAddressModeClamp, cudaFilterModeLinear, cudaReadModeNormalizedFloat,
                                       false);
  sample2d<<<blocks(n), 128>>>(t, duv, out, n);
  CK_LAUNCH();
  std::vector<float4> want;
  for (const float2& p : uv) want.push_back(m.sample(p.x, p.y));
  check_float4("tex2D_uchar4_normalized_linear", kt::from_device(out, uv.size()), want, 4, &uv);
  CK(cudaDestroyTextureObject(t));
  // tex2Dgather of the green channel: (i, j+1), (i+1, j+1), (i+1, j), (i, j) of the footprint.
  t = make_texture(res, cudaAddressModeClamp, cudaFilterModePoint, cudaReadModeNormalizedFloat, false);
  gather<<<blocks(n), 128>>>(t, duv, out, n);
  CK_LAUNCH();
  want.clear();
  for (const float2& p : uv) {
    const long i = static_cast<long>(std::floor(p.x - 0.5f)), j = static_cast<long>(std::floor(p.y - 0.5f));
    want.push_back(make_float4(m.at(i, j + 1).y, m.at(i + 1, j + 1).y, m.at(i + 1, j).y, m.at(i, j).y));
  }
  check_float4("tex2Dgather_uchar4_green", kt::from_device(out, uv.size()), want, 4, &uv);
  CK(cudaDestroyTextureObject(t));
  // Element reads: the bytes themselves.
  t = make_texture(res, cudaAddressModeClamp, cudaFilterModePoint, cudaReadModeElementType, false);
  uchar4* outc = nullptr;
  CK(cudaMalloc(&outc, uv.size() * sizeof(uchar4)));
  sample2d_uchar4<<<blocks(n), 128>>>(t, duv, outc, n);
  CK_LAUNCH();
  const auto gotc = kt::from_device(outc, uv.size());
  int bad = -1;
  for (int k = 0; k < n && bad < 0; ++k) {
    const long x = model::address(static_cast<long>(std::floor(uv[k].x)), kW, model::Clamp, false);
    const long y = model::address(static_cast<long>(std::floor(uv[k].y)), kH, model::Clamp, false);
    const uchar4 w = texels[y * kW + x];
    if (gotc[k].x != w.x || gotc[k].y != w.y || gotc[k].z != w.z || gotc[k].w != w.w) bad = k;
  }
  kt::checkf("tex2D_uchar4_element_point", bad < 0, "sample %d", bad);
  CK(cudaDestroyTextureObject(t));
  // A surface over the same array: every element incremented in place.
  cudaSurfaceObject_t s = 0;
  CK(cudaCreateSurfaceObject(&s, &res));
  surf_increment<<<kH, 32>>>(s, kW, kH);
  CK_LAUNCH();
  std::vector<uchar4> back(kW * kH);
  CK(cudaMemcpy2DFromArray(back.data(), kW * 4, a, 0, 0, kW * 4, kH, cudaMemcpyDeviceToHost));
  bool ok = true;
  for (int i = 0; i < kW * kH; ++i)
    ok = ok && back[i].x == static_cast<unsigned char>(texels[i].x + 1) &&
         back[i].y == static_cast<unsigned char>(texels[i].y + 1) &&
         back[i].z == static_cast<unsigned char>(texels[i].z + 1) &&
         back[i].w == static_cast<unsigned char>(texels[i].w + 1);
  kt::check("surf2D_uchar4_read_modify_write", ok);
  CK(cudaDestroySurfaceObject(s));
  CK(cudaFree(duv));
  CK(cudaFree(out));
  CK(cudaFree(outc));
  CK(cudaFreeArray(a));
}

void volume_and_layers() {
  constexpr int kW = 5, kH = 4, kD = 3;
  std::vector<float> vol(kW * kH * kD);
  for (int i = 0; i < kW * kH * kD; ++i) vol[i] = static_cast<float>(i * 3 % 17) - 4.0f;
  const cudaChannelFormatDesc f1 = cudaCreateChannelDesc<float>();
  // A 3-D array filled with cudaMemcpy3D, read back whole with cudaMemcpyFromArray.
  cudaArray_t a = nullptr;
  CK(cudaMalloc3DArray(&a, &f1, make_cudaExtent(kW, kH, kD)));
  cudaMemcpy3DParms p;
  std::memset(&p, 0, sizeof p);
  p.srcPtr = make_cudaPitchedPtr(vol.data(), kW * 4, kW, kH);
  p.dstArray = a;
  p.extent = make_cudaExtent(kW, kH, kD);
  p.kind = cudaMemcpyHostToDevice;
  CK(cudaMemcpy3D(&p));
  std::vector<float> back(vol.size());
  cudaMemcpy3DParms q;
  std::memset(&q, 0, sizeof q);
  q.srcArray = a;
  q.dstPtr = make_cudaPitchedPtr(back.data(), kW * 4, kW, kH);
  q.extent = make_cudaExtent(kW, kH, kD);
  q.kind = cudaMemcpyDeviceToHost;
  CK(cudaMemcpy3D(&q));
  kt::check("memcpy3d_array_round_trip", back == vol);
  // tex3D, point and linear, clamping.
  auto texel = [&](long x, long y, long z) {
    x = model::address(x, kW, model::Clamp, false), y = model::address(y, kH, model::Clamp, false);
    z = model::address(z, kD, model::Clamp, false);
    return vol[(z * kH + y) * kW + x];
  };
  std::vector<float4> pts;
  for (float z : axis_points(-0.9f, kD + 0.7f, 0.43f))
    for (float y : axis_points(-0.8f, kH + 0.7f, 0.53f))
      for (float x : axis_points(-1.1f, kW + 0.7f, 0.47f)) pts.push_back(make_float4(x, y, z, 0));
  const int n = static_cast<int>(pts.size());
  float4* dp = kt::to_device(pts);
  float* out = nullptr;
  CK(cudaMalloc(&out, n * sizeof(float)));
  const cudaResourceDesc res = array_resource(a);
  for (cudaTextureFilterMode filter : {cudaFilterModePoint, cudaFilterModeLinear}) {
    cudaTextureObject_t t = make_texture(res, cudaAddressModeClamp, filter, cudaReadModeElementType, false);
    sample3d<<<blocks(n), 128>>>(t, dp, out, n);
    CK_LAUNCH();
    const auto got = kt::from_device(out, n);
    int bad = -1;
    float want_bad = 0;
    for (int k = 0; k < n && bad < 0; ++k) {
      float want = 0;
      if (filter == cudaFilterModePoint) {
        want = texel(static_cast<long>(std::floor(pts[k].x)), static_cast<long>(std::floor(pts[k].y)),
                     static_cast<long>(std::floor(pts[k].z)));
      } else {
        const float xb = pts[k].x - 0.5f, yb = pts[k].y - 0.5f, zb = pts[k].z - 0.5f;
        const float fx = std::floor(xb), fy = std::floor(yb), fz = std::floor(zb);
        const float al[3] = {model::weight(xb - fx), model::weight(yb - fy), model::weight(zb - fz)};
        const long i = static_cast<long>(fx), j = static_cast<long>(fy), l = static_cast<long>(fz);
        // The guide's sum with γ: the k slice's four corners, then the k+1 slice's.
        for (int corner = 0; corner < 8; ++corner) {
          float w = 1.0f;
          for (int ax = 0; ax < 3; ++ax) w = w * ((corner >> ax & 1) ? al[ax] : 1.0f - al[ax]);
          want = want + w * texel(i + (corner & 1), j + (corner >> 1 & 1), l + (corner >> 2 & 1));
        }
      }
      if (!same(got[k], want)) bad = k, want_bad = want;
    }
    kt::checkf(filter == cudaFilterModePoint ? "tex3D_point_clamp" : "tex3D_linear_clamp", bad < 0,
               "point %d (%.4g, %.4g, %.4g): got %s, want %s", bad, bad < 0 ? 0.0 : pts[bad].x,
               bad < 0 ? 0.0 : pts[bad].y, bad < 0 ? 0.0 : pts[bad].z, bad < 0 ? "" : kt::show(got[bad]).c_str(),
               kt::show(want_bad).c_str());
    CK(cudaDestroyTextureObject(t));
  }
  CK(cudaFreeArray(a));
  // A layered 2-D array (3 layers of 5 × 4): tex2DLayered, point, the layer clamped.
  cudaArray_t layered = nullptr;
  CK(cudaMalloc3DArray(&layered, &f1, make_cudaExtent(kW, kH, kD), cudaArrayLayered));
  p.dstArray = layered;
  CK(cudaMemcpy3D(&p));
  std::vector<float2> uv;
  std::vector<int> layer;
  for (int l = -1; l <= kD; ++l)
    for (int y = 0; y < kH; ++y)
      for (int x = 0; x < kW; ++x) {
        uv.push_back(make_float2(x + 0.5f, y + 0.25f));
        layer.push_back(l);
      }
  const int m = static_cast<int>(uv.size());
  float2* duv = kt::to_device(uv);
  int* dl = kt::to_device(layer);
  float* outl = nullptr;
  CK(cudaMalloc(&outl, m * sizeof(float)));
  cudaTextureObject_t t = make_texture(array_resource(layered), cudaAddressModeClamp, cudaFilterModePoint,
                                       cudaReadModeElementType, false);
  sample_layered<<<blocks(m), 128>>>(t, duv, dl, outl, m);
  CK_LAUNCH();
  const auto got = kt::from_device(outl, m);
  int bad = -1;
  for (int k = 0; k < m && bad < 0; ++k) {
    const int l = std::min(std::max(layer[k], 0), kD - 1);
    if (!same(got[k], vol[(l * kH + static_cast<int>(uv[k].y)) * kW + static_cast<int>(uv[k].x)])) bad = k;
  }
  kt::checkf("tex2DLayered_point", bad < 0, "sample %d", bad);
  CK(cudaDestroyTextureObject(t));
  CK(cudaFreeArray(layered));
  for (void* d : {static_cast<void*>(dp), static_cast<void*>(out), static_cast<void*>(duv), static_cast<void*>(dl),
                  static_cast<void*>(outl)})
    CK(cudaFree(d));
}

void surface_round_trip() {
  constexpr int kW = 8, kH = 5;
  const cudaChannelFormatDesc f1 = cudaCreateChannelDesc<float>();
  cudaArray_t a = nullptr;
  CK(cudaMallocArray(&a, &f1, kW, kH, cudaArraySurfaceLoadStore));
  const cudaResourceDesc res = array_resource(a);
  cudaSurfaceObject_t s = 0;
  CK(cudaCreateSurfaceObject(&s, &res));
  surf_write<<<dim3(1, kH), 32>>>(s, kW, kH);
  CK_LAUNCH();
  auto value = [](int x, int y) { return static_cast<float>(y * 1000 + x) + 0.25f; };
  std::vector<float> back(kW * kH);
  CK(cudaMemcpy2DFromArray(back.data(), kW * 4, a, 0, 0, kW * 4, kH, cudaMemcpyDeviceToHost));
  bool ok = true;
  for (int y = 0; y < kH; ++y)
    for (int x = 0; x < kW; ++x) ok = ok && same(back[y * kW + x], value(x, y));
  kt::check("surf2Dwrite_then_memcpy2d_from_array", ok);
  // Read back in range, and out of range with the zero and clamp boundary modes.
  std::vector<int2> xy;
  for (int y = -2; y < kH + 2; ++y)
    for (int x = -3; x < kW + 3; ++x) xy.push_back(make_int2(x, y));
  const int n = static_cast<int>(xy.size());
  int2* dxy = kt::to_device(xy);
  float *in_range = nullptr, *zero = nullptr, *clamp = nullptr;
  CK(cudaMalloc(&in_range, n * 4));
  CK(cudaMalloc(&zero, n * 4));
  CK(cudaMalloc(&clamp, n * 4));
  surf_read<<<blocks(n), 128>>>(s, dxy, in_range, zero, clamp, n);
  CK_LAUNCH();
  const auto r = kt::from_device(in_range, n), z = kt::from_device(zero, n), c = kt::from_device(clamp, n);
  bool ok_r = true, ok_z = true, ok_c = true;
  for (int k = 0; k < n; ++k) {
    const int x = xy[k].x, y = xy[k].y;
    const bool inside = x >= 0 && x < kW && y >= 0 && y < kH;
    if (x >= 0 && y >= 0) ok_r = ok_r && same(r[k], value(x % 8, y % 5));
    ok_z = ok_z && same(z[k], inside ? value(x, y) : 0.0f);
    ok_c = ok_c && same(c[k], value(std::min(std::max(x, 0), kW - 1), std::min(std::max(y, 0), kH - 1)));
  }
  kt::check("surf2Dread_round_trip", ok_r);
  kt::check("surf2Dread_boundary_zero", ok_z);
  kt::check("surf2Dread_boundary_clamp", ok_c);
  CK(cudaDestroySurfaceObject(s));
  CK(cudaFreeArray(a));
  for (void* d :
       {static_cast<void*>(dxy), static_cast<void*>(in_range), static_cast<void*>(zero), static_cast<void*>(clamp)})
    CK(cudaFree(d));
}

// Last: a launch with a texture destroyed before it faults, and the fault is sticky.
void destroyed_texture() {
  const cudaChannelFormatDesc f1 = cudaCreateChannelDesc<float>();
  cudaArray_t a = nullptr;
  CK(cudaMallocArray(&a, &f1, 4, 4));
  cudaTextureObject_t t = make_texture(array_resource(a), cudaAddressModeClamp, cudaFilterModePoint,
                                       cudaReadModeElementType, false);
  CK(cudaDestroyTextureObject(t));
  std::vector<float2> uv(32, make_float2(1.0f, 1.0f));
  float2* duv = kt::to_device(uv);
  float4* out = nullptr;
  CK(cudaMalloc(&out, 32 * sizeof(float4)));
  sample2d<<<1, 32>>>(t, duv, out, 32);
  CK_LAUNCH();
  const cudaError_t e = cudaDeviceSynchronize();
  kt::checkf("destroyed_texture_faults", e == cudaErrorIllegalAddress, "cudaDeviceSynchronize: %s",
             cudaGetErrorName(e));
}

int main() {
  linear_memory();
  float_array_2d();
  uchar4_array_2d();
  volume_and_layers();
  surface_round_trip();
  destroyed_texture();
  return kt::finish("textures");
}
