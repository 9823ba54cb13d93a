// Checks relu-cuda/strided_index.h, the integer arithmetic of the CUDA strided kernels, with
// the host's compiler (the same __host__ __device__ functions the GPU runs), against plain
// 64-bit and 128-bit arithmetic written here:
//   - FastDivider32 against n / d: every n < 4096 for every d <= 2048, then n and d at the
//     edges of the domain (powers of two and their neighbours up to 2^31) and at random;
//   - Divider64 against n / d, on both sides of its 32-bit shortcut;
//   - fits_index32 against the largest offset computed in 128 bits;
//   - add_offsets (per element, 32- and 64-bit walks, 4 indices at a time as the per-element
//     kernel) and row_offsets against the mixed-radix offsets of each linear index, on random
//     layouts, exhaustively for small ones and at random indices for passes over 2^32
//     elements; a row's offset plus i * inner stride must be element i of that row;
//   - row_tile_of against item = row * tiles_per_row + tile.
//
//   strided_index_check <seed>     exit status 0 when everything matches
#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "relu-cuda/strided_index.h"

namespace {

using namespace relu_kernel;

long long g_checks = 0;
long long g_failures = 0;

void expect(bool ok, const char* what, uint64_t a, uint64_t b, uint64_t got, uint64_t wanted) {
  ++g_checks;
  if (ok) return;
  if (++g_failures <= 10) {
    std::printf("FAIL %s a=%" PRIu64 " b=%" PRIu64 " got=%" PRIu64 " expected=%" PRIu64 "\n", what,
                a, b, got, wanted);
  }
}

uint64_t g_state = 0;
uint64_t next_random() {  // splitmix64
  uint64_t z = (g_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
uint64_t random_below(uint64_t bound) { return next_random() % bound; }

void check_fast_divider32() {
  for (uint32_t d = 1; d <= 2048; ++d) {
    const FastDivider32 divider = FastDivider32::of(d);
    for (uint32_t n = 0; n < 4096; ++n) expect(divider.divide(n) == n / d, "fast32 small", n, d, divider.divide(n), n / d);
  }
  constexpr uint32_t kMaxN = (uint32_t(1) << 31) - 1;
  std::vector<uint64_t> divisors;
  for (int bit = 0; bit <= 31; ++bit) {
    for (int64_t delta = -2; delta <= 2; ++delta) {
      const int64_t d = (int64_t(1) << bit) + delta;
      if (d >= 1 && d <= (int64_t(1) << 31)) divisors.push_back(uint64_t(d));
    }
  }
  for (int i = 0; i < 2000; ++i) divisors.push_back(1 + random_below(uint64_t(1) << 31));
  for (int i = 0; i < 2000; ++i) divisors.push_back(1 + random_below(1u << 16));
  for (const uint64_t d : divisors) {
    const FastDivider32 divider = FastDivider32::of(d);
    const uint32_t edges[] = {0, 1, uint32_t(d - 1), uint32_t(d), kMaxN, kMaxN - 1,
                              uint32_t(kMaxN / d * d), uint32_t(kMaxN / d * d - 1)};
    for (const uint32_t n : edges) {
      if (n > kMaxN) continue;
      expect(divider.divide(n) == n / d, "fast32 edge", n, d, divider.divide(n), n / d);
    }
    for (int i = 0; i < 200; ++i) {
      const uint32_t n = uint32_t(random_below(uint64_t(kMaxN) + 1));
      expect(divider.divide(n) == n / d, "fast32 random", n, d, divider.divide(n), n / d);
    }
  }
}

void check_divider64() {
  for (int i = 0; i < 200000; ++i) {
    const int n_bits = 1 + int(random_below(64)), d_bits = 1 + int(random_below(64));
    const uint64_t n = next_random() >> (64 - n_bits);
    const uint64_t d = std::max<uint64_t>(1, next_random() >> (64 - d_bits));
    expect(Divider64::of(d).divide(n) == n / d, "divider64", n, d, Divider64::of(d).divide(n), n / d);
  }
}

// A random walk: dims 1..max_dims, sizes >= 2 but a 1-element pass, strides from `strides`
// (0 allowed: a broadcast operand can repeat an address; the arithmetic does not care).
StridedLayout random_layout(int max_dims, int64_t max_size, int64_t max_stride) {
  StridedLayout layout;
  layout.dims = 1 + int32_t(random_below(uint64_t(max_dims)));
  for (int32_t d = 0; d < layout.dims; ++d) {
    layout.sizes[d] = 2 + int64_t(random_below(uint64_t(max_size - 1)));
    for (int k = 0; k < StridedLayout::kMaxOperands; ++k) {
      layout.strides[k][d] = int64_t(random_below(uint64_t(max_stride) + 1));
    }
  }
  if (random_below(50) == 0) {
    layout.dims = 1;
    layout.sizes[0] = 1;
  }
  return layout;
}

// Operand k's offset of linear index n, digit by digit in 128 bits.
unsigned __int128 reference_offset(const StridedLayout& layout, int k, uint64_t n) {
  unsigned __int128 offset = 0;
  for (int32_t d = 0; d < layout.dims; ++d) {
    offset += (unsigned __int128)(n % uint64_t(layout.sizes[d])) * uint64_t(layout.strides[k][d]);
    n /= uint64_t(layout.sizes[d]);
  }
  return offset;
}

bool reference_fits32(const StridedLayout& layout) {
  if (uint64_t(layout.numel()) > (uint64_t(1) << 31) - 1) return false;
  for (int k = 0; k < 3; ++k) {
    if (reference_offset(layout, k, uint64_t(layout.numel() - 1)) > 0xffffffffu) return false;
  }
  return true;
}

template <typename Index>
void check_element_offsets(const StridedLayout& layout, const uint64_t* indices, int count) {
  const IndexWalk<Index, 3> walk = make_index_walk<Index, 3>(layout);
  constexpr int kCount = 4;  // as the per-element kernel
  for (int first = 0; first < count; first += kCount) {
    Index index[kCount];
    Index offsets[3][kCount] = {};
    for (int c = 0; c < kCount; ++c) index[c] = Index(indices[std::min(first + c, count - 1)]);
    add_offsets<kCount>(walk, 0, index, offsets);
    for (int c = 0; c < kCount && first + c < count; ++c) {
      for (int k = 0; k < 3; ++k) {
        const uint64_t wanted = uint64_t(reference_offset(layout, k, indices[first + c]));
        expect(offsets[k][c] == wanted, sizeof(Index) == 4 ? "element offset 32" : "element offset 64",
               indices[first + c], uint64_t(k), uint64_t(offsets[k][c]), wanted);
      }
    }
  }
}

// Rows through the 64-bit walk, as the row kernel: element i of row r is linear index
// r * sizes[0] + i, at row_offsets(r) + i * strides[k][0].
void check_row_offsets(const StridedLayout& layout, const uint64_t* rows, int count) {
  const IndexWalk<uint64_t, 3> walk = make_index_walk<uint64_t, 3>(layout);
  const uint64_t length = uint64_t(layout.sizes[0]);
  for (int r = 0; r < count; ++r) {
    uint64_t offsets[3];
    row_offsets(walk, rows[r], offsets);
    const uint64_t inner[] = {0, 1, length - 1, random_below(length)};
    for (const uint64_t i : inner) {
      if (i >= length) continue;  // a 1-element pass
      for (int k = 0; k < 3; ++k) {
        const uint64_t got = offsets[k] + i * walk.strides[k][0];
        const uint64_t wanted = uint64_t(reference_offset(layout, k, rows[r] * length + i));
        expect(got == wanted, "row offset", rows[r], i, got, wanted);
      }
    }
  }
}

void check_layouts() {
  std::vector<uint64_t> indices;
  for (int trial = 0; trial < 3000; ++trial) {
    // Small passes, every element: both walks when 32 bits fit.
    const StridedLayout layout = random_layout(6, 9, trial % 2 ? 40 : 1 << 20);
    const uint64_t numel = uint64_t(layout.numel());
    expect(fits_index32(layout, 3) == reference_fits32(layout), "fits_index32", numel, 0,
           fits_index32(layout, 3), reference_fits32(layout));
    indices.clear();
    for (uint64_t n = 0; n < numel; ++n) indices.push_back(n);
    check_element_offsets<uint64_t>(layout, indices.data(), int(indices.size()));
    if (fits_index32(layout, 3)) check_element_offsets<uint32_t>(layout, indices.data(), int(indices.size()));
    const uint64_t rows = numel / uint64_t(layout.sizes[0]);
    indices.clear();
    for (uint64_t r = 0; r < rows; ++r) indices.push_back(r);
    check_row_offsets(layout, indices.data(), int(indices.size()));
  }
  for (int trial = 0; trial < 3000; ++trial) {
    // Large passes (often over 2^31 elements or 2^32 offsets), random indices.
    const StridedLayout layout = trial % 3 ? random_layout(6, 3000, trial % 2 ? 1 << 16 : 1 << 24)
                                           : random_layout(25, 3, 1 << 12);
    unsigned __int128 elements = 1;
    for (int32_t d = 0; d < layout.dims; ++d) elements *= uint64_t(layout.sizes[d]);
    if (elements > (uint64_t(1) << 40)) continue;  // numel() would overflow, or offsets 2^64
    bool offsets_fit = true;
    for (int k = 0; k < 3; ++k) offsets_fit = offsets_fit && !(reference_offset(layout, k, uint64_t(elements - 1)) >> 63);
    if (!offsets_fit) continue;
    const uint64_t numel = uint64_t(layout.numel());
    expect(fits_index32(layout, 3) == reference_fits32(layout), "fits_index32 large", numel, 0,
           fits_index32(layout, 3), reference_fits32(layout));
    indices.clear();
    for (int i = 0; i < 64; ++i) indices.push_back(random_below(numel));
    indices.push_back(numel - 1);
    check_element_offsets<uint64_t>(layout, indices.data(), int(indices.size()));
    if (fits_index32(layout, 3)) check_element_offsets<uint32_t>(layout, indices.data(), int(indices.size()));
    const uint64_t rows = numel / uint64_t(layout.sizes[0]);
    indices.clear();
    for (int i = 0; i < 16; ++i) indices.push_back(random_below(rows));
    indices.push_back(rows - 1);
    check_row_offsets(layout, indices.data(), int(indices.size()));
  }
}

// fits_index32 at the edges of its domain: last offset 2^32 - 1 (fits) or 2^32 (does not),
// numel 2^31 - 1 (fits) or 2^31 (does not).
void check_fits_index32_edges() {
  constexpr uint64_t kLimit = 0xffffffffu;
  for (int operand = 0; operand < 3; ++operand) {
    for (uint64_t excess = 0; excess <= 1; ++excess) {
      StridedLayout one_dim;
      one_dim.dims = 1;
      one_dim.sizes[0] = 2;
      one_dim.strides[operand][0] = int64_t(kLimit + excess);  // 2^32 - 1, 2^32
      StridedLayout two_dims;
      two_dims.dims = 2;
      two_dims.sizes[0] = 6;
      two_dims.sizes[1] = 2;
      two_dims.strides[operand][0] = int64_t(1 + excess);  // 5 * 1 + (2^32 - 6) = 2^32 - 1
      two_dims.strides[operand][1] = int64_t(kLimit - 5);   // 5 * 2 + (2^32 - 6) = 2^32 + 4
      for (const StridedLayout& layout : {one_dim, two_dims}) {
        expect(fits_index32(layout, 3) == (excess == 0), "fits_index32 offset edge",
               uint64_t(operand), excess, fits_index32(layout, 3), excess == 0);
      }
    }
  }
  for (int64_t numel : {int64_t(1) << 31, (int64_t(1) << 31) - 1}) {
    StridedLayout layout;
    layout.dims = 1;
    layout.sizes[0] = numel;
    const bool wanted = numel < (int64_t(1) << 31);
    expect(fits_index32(layout, 3) == wanted, "fits_index32 numel edge", uint64_t(numel), 0,
           fits_index32(layout, 3), wanted);
  }
}

void check_row_tiles() {
  for (int trial = 0; trial < 100000; ++trial) {
    const uint64_t tiles = 1 + (trial % 2 ? random_below(16) : random_below(uint64_t(1) << 40));
    const uint64_t item = next_random() >> (trial % 3 ? 40 : 1);
    const RowTile at = row_tile_of(item, Divider64::of(tiles));
    expect(at.tile < tiles && at.row * tiles + at.tile == item, "row_tile_of", item, tiles,
           at.row * tiles + at.tile, item);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <seed>\n", argv[0]);
    return 2;
  }
  g_state = std::strtoull(argv[1], nullptr, 10);
  std::printf("seed %s\n", argv[1]);
  check_fast_divider32();
  check_divider64();
  check_layouts();
  check_fits_index32_edges();
  check_row_tiles();
  std::printf("%lld checks, %lld failures\n", g_checks, g_failures);
  return g_failures == 0 ? 0 : 1;
}
