// Host checker of relu-cuda/launch_policy.h (tests/test_launch_policy.py): for the device
// traits of every architecture the release builds for (sm_70..sm_121) and extremes, and element
// counts from 0 to 2^40 vectors, every dense and strided policy must name a compiled kernel
// form and a launch the hardware accepts, and a kernel that does not loop must get a grid that
// covers every vector. Compiled by nvcc as a host program; it launches nothing.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "relu-cuda/launch_policy.h"

using namespace relu_kernel;

namespace {

struct Device {
  const char* name;
  DeviceTraits traits;
};

// SM counts, L2 sizes and resident threads per SM as the devices report them.
const Device kDevices[] = {
    {"V100 sm_70", {80, 6 << 20, 2048}},         {"T4 sm_75", {40, 4 << 20, 1024}},
    {"A100 sm_80", {108, 40 << 20, 2048}},       {"A10 sm_86", {72, 6 << 20, 1536}},
    {"L4 sm_89", {58, 48 << 20, 1536}},          {"RTX 4090 sm_89", {128, 72 << 20, 1536}},
    {"H100 sm_90", {132, 50 << 20, 2048}},       {"H200 sm_90", {132, 60 << 20, 2048}},
    {"B200 sm_100", {148, 126 << 20, 2048}},    {"GB300 sm_103", {160, 126 << 20, 2048}},
    {"RTX 5090 sm_120", {170, 96 << 20, 1536}}, {"GB10 sm_121", {48, 24 << 20, 1536}},
    {"one SM, no L2", {1, 0, 2048}},             {"huge L2", {1000, int64_t(1) << 34, 1536}},
    {"threads per SM unknown", {132, 60 << 20, 0}},
    {"L2 past 32-bit tiles", {1000, int64_t(1) << 40, 1536}},
};

int failures = 0;
long checks = 0;

void expect(bool ok, const std::string& what) {
  ++checks;
  if (!ok && ++failures <= 20) std::printf("FAIL %s\n", what.c_str());
}

bool valid_launch(int64_t threads, int64_t blocks) {
  return threads >= 32 && threads <= 1024 && threads % 32 == 0 && blocks >= 1 &&
         blocks <= kMaxGridX;
}

std::vector<int64_t> vector_counts() {
  std::vector<int64_t> counts = {0, 1, 2, 127, 128, 255, 256, 257};
  for (int shift = 9; shift <= 40; ++shift) {
    const int64_t p = int64_t(1) << shift;
    counts.insert(counts.end(), {p - 1, p, p + 1, p + p / 3});
  }
  return counts;
}

void check_dense(const Device& d, int64_t vectors, int tensors) {
  const std::string at = std::string(d.name) + " vectors=" + std::to_string(vectors) +
                         " tensors=" + std::to_string(tensors);
  const DensePolicy policy = choose_dense_policy(d.traits, vectors, tensors);
  bool compiled = false;
  bool loops = false;
  visit_dense_form(policy.form, [&](auto form) {
    using Form = DenseFormTraits<decltype(form)::value>;
    compiled = true;
    loops = Form::kLoops;
    expect(valid_launch(Form::kThreads, policy.blocks), at + ": launch out of range");
    const int64_t per_block = int64_t(Form::kThreads) * Form::kVectors;
    expect(per_block == vectors_per_block(policy.form), at + ": vectors_per_block");
    if (!Form::kLoops) {
      expect(policy.blocks * per_block >= vectors, at + ": a one-tile grid misses vectors");
      expect(policy.blocks == 1 || (policy.blocks - 1) * per_block < vectors,
             at + ": a one-tile grid with idle blocks");
      // 32-bit offsets: the last thread's last vector of the grid must stay below 2^31.
      expect(policy.blocks * per_block <= int64_t(INT32_MAX),
             at + ": a tile grid past 32-bit offsets");
    }
    // No streaming hint on a pass that stays in the L2 but for the 32-bit limit of the tiles.
    const bool in_l2 = vectors * kVectorBytes * tensors * tuning::kStreamingFootprintL2Denominator <
                       d.traits.l2_bytes * tuning::kStreamingFootprintL2Numerator;
    expect(Form::kHint == CacheHint::kDefault || !in_l2 || !tile_offsets_fit(vectors, 256),
           at + ": hint against the L2 threshold");
  });
  expect(compiled, at + ": a form without a compiled kernel");
  // A tile form exactly while the pass stays in the L2 (the streaming threshold) and its
  // 32-bit offsets reach; 1 x 256 exactly while that grid fits one wave.
  const bool in_l2 = vectors * kVectorBytes * tensors * tuning::kStreamingFootprintL2Denominator <
                     d.traits.l2_bytes * tuning::kStreamingFootprintL2Numerator;
  const bool tile = in_l2 && tile_offsets_fit(vectors, 256);
  expect(!loops == tile, at + ": form against the L2 threshold");
  const bool one_wave = vectors <= int64_t(d.traits.sm_count) * d.traits.max_threads_per_sm;
  if (tile) {
    expect((policy.form == DenseForm::kTileOneVector) == one_wave,
           at + ": tile form against one wave");
  }
}

void check_strided(const Device& d, int64_t numel, int64_t row_length, int element_bytes) {
  const std::string at = std::string(d.name) + " numel=" + std::to_string(numel) +
                         " row=" + std::to_string(row_length) + " bytes=" + std::to_string(element_bytes);
  const StridedLaunchPolicy policy = choose_strided_launch_policy(d.traits, numel, row_length,
                                                                  element_bytes, 2);
  expect(valid_launch(policy.threads, policy.blocks), at + ": launch out of range");
  if (!policy.per_element) {
    expect(policy.threads >= tuning::kMinRowThreads, at + ": row block below kMinRowThreads");
    expect(policy.tiles_per_row >= 1, at + ": no tile per row");
    // The tiles of a row cover it, the last one not wholly idle.
    const int64_t tile_elements = int64_t(policy.threads) * (kVectorBytes / element_bytes);
    expect(policy.tiles_per_row * tile_elements >= row_length &&
               (policy.tiles_per_row - 1) * tile_elements < row_length,
           at + ": tiles against the row");
  } else {
    expect(policy.hint == CacheHint::kDefault, at + ": the per-element kernel takes no hint");
  }
}

}  // namespace

int main() {
  for (const Device& d : kDevices) {
    for (const int64_t vectors : vector_counts()) {
      check_dense(d, vectors, 2);
      check_dense(d, vectors, 3);
    }
    for (const int element_bytes : {1, 2, 4, 8}) {
      for (const int64_t row : {int64_t(1), int64_t(3), int64_t(96), int64_t(192), int64_t(1000),
                                int64_t(4096), int64_t(1) << 20}) {
        for (const int64_t rows : {int64_t(1), int64_t(7), int64_t(1) << 12, int64_t(1) << 20}) {
          check_strided(d, row * rows, row, element_bytes);
        }
      }
    }
  }
  std::printf("%ld checks, %d failures\n", checks, failures);
  return failures == 0 ? 0 : 1;
}
