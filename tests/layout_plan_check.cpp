// Checks torch-ext/layout_plan.h (and .cpp), the binding's one stride order and what it
// derives, with the host's compiler, against definitions written here from first principles:
//   - is_dense: for a tensor with elements, "some order of its dimensions of size > 1 is
//     contiguous", tried over every permutation; for one without, the rule the binding had
//     before the planner (dimensions of size != 1 sorted by stride alone, then contiguous).
//     Every layout of up to 4 dimensions over small sizes and strides (zeros, equal strides,
//     size-0 and size-1 dimensions), then random ones of up to 6 dimensions;
//   - dense_strides_like: dense (by the reference above), and for a dense tensor with elements
//     its own strides on every dimension of size != 1 (the order the result follows is x's);
//   - strided_layout: on random shapes with 1-3 operands of random strides (permuted, sliced,
//     broadcast, size-1 dimensions), the walk visits every element of the shape exactly once,
//     every operand at its own offset: the multiset of offset tuples of the walk's elements
//     (mixed radix over its dimensions) equals the one of the shape's elements.
// tests/test_views.py holds the result strides to torch.empty_like's themselves.
//
//   layout_plan_check <seed>     exit status 0 when everything matches
#include <algorithm>
#include <array>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "torch-ext/layout_plan.h"

namespace {

using namespace relu_binding;

long long g_checks = 0;
long long g_failures = 0;

uint64_t g_state = 0;
uint64_t next_random() {  // splitmix64
  uint64_t z = (g_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
int64_t random_below(int64_t bound) { return int64_t(next_random() % uint64_t(bound)); }

std::string describe(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides) {
  std::string s;
  for (size_t d = 0; d < sizes.size(); ++d) {
    s += " " + std::to_string(sizes[d]) + "/" + std::to_string(strides[d]);
  }
  return s;
}

void expect(bool ok, const std::string& what) {
  ++g_checks;
  if (!ok && ++g_failures <= 10) std::printf("FAIL %s\n", what.c_str());
}

// ---------------------------------------------------------------- references
int64_t numel_of(const std::vector<int64_t>& sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

bool contiguous_in(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides,
                   const std::vector<int64_t>& order) {
  int64_t expected = 1;
  for (int64_t d : order) {
    if (strides[size_t(d)] != expected) return false;
    expected *= sizes[size_t(d)];
  }
  return true;
}

bool reference_dense(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides) {
  std::vector<int64_t> order;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (numel_of(sizes) == 0 ? sizes[d] != 1 : sizes[d] > 1) order.push_back(int64_t(d));
  }
  if (numel_of(sizes) == 0) {  // the rule before the planner: by stride alone, stable
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t b) { return strides[size_t(a)] < strides[size_t(b)]; });
    return contiguous_in(sizes, strides, order);
  }
  std::sort(order.begin(), order.end());
  do {
    if (contiguous_in(sizes, strides, order)) return true;
  } while (std::next_permutation(order.begin(), order.end()));
  return false;
}

// ---------------------------------------------------------------- is_dense, dense_strides_like
void check_layout(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides) {
  const int64_t dim = int64_t(sizes.size());
  const bool dense = is_dense(dim, sizes.data(), strides.data());
  expect(dense == reference_dense(sizes, strides), "is_dense" + describe(sizes, strides));
  const DimArray like = dense_strides_like(dim, sizes.data(), strides.data());
  const std::vector<int64_t> like_strides(like.begin(), like.end());
  if (numel_of(sizes) == 0) return;  // no elements: any strides are torch's "contiguous"
  expect(reference_dense(sizes, like_strides), "dense_strides_like not dense:" +
                                                   describe(sizes, strides) + " ->" +
                                                   describe(sizes, like_strides));
  if (dense) {
    // A dense tensor's own order gives back its strides, where they place anything.
    for (int64_t d = 0; d < dim; ++d) {
      expect(sizes[size_t(d)] == 1 || like_strides[size_t(d)] == strides[size_t(d)],
             "dense_strides_like of a dense tensor:" + describe(sizes, strides));
    }
  }
}

void check_all_small_layouts() {
  const int64_t kSizes[] = {0, 1, 2, 3};
  const int64_t kStrides[] = {0, 1, 2, 3, 4, 6, 8, 9, 12, 18, 24};
  for (int dim = 0; dim <= 4; ++dim) {
    int64_t size_cases = 1, stride_cases = 1;
    for (int d = 0; d < dim; ++d) {
      size_cases *= 4;
      stride_cases *= 11;
    }
    for (int64_t s = 0; s < size_cases; ++s) {
      for (int64_t t = 0; t < stride_cases; ++t) {
        std::vector<int64_t> sizes(static_cast<size_t>(dim)), strides(static_cast<size_t>(dim));
        for (int64_t d = 0, a = s, b = t; d < dim; ++d, a /= 4, b /= 11) {
          sizes[size_t(d)] = kSizes[a % 4];
          strides[size_t(d)] = kStrides[b % 11];
        }
        check_layout(sizes, strides);
      }
    }
  }
}

// A random permutation of a dense layout, sliced or broadcast in places, with size-1
// dimensions of any stride.
std::vector<int64_t> random_strides(const std::vector<int64_t>& sizes) {
  const size_t dim = sizes.size();
  std::vector<int64_t> order(dim);
  for (size_t d = 0; d < dim; ++d) order[d] = int64_t(d);
  for (size_t d = dim; d > 1; --d) std::swap(order[d - 1], order[size_t(random_below(int64_t(d)))]);
  std::vector<int64_t> strides(dim);
  int64_t stride = 1 + (random_below(4) == 0 ? random_below(3) : 0);  // a strided inner run
  for (int64_t d : order) {
    const int64_t kind = random_below(10);
    strides[size_t(d)] = kind == 0 ? 0 : kind == 1 ? random_below(50) : stride;
    stride *= std::max<int64_t>(sizes[size_t(d)], 1) + (random_below(5) == 0 ? random_below(3) : 0);
  }
  return strides;
}

void check_random_layouts() {
  for (int trial = 0; trial < 200000; ++trial) {
    std::vector<int64_t> sizes(size_t(1 + random_below(6)));
    for (int64_t& s : sizes) s = random_below(8) == 0 ? random_below(2) : 1 + random_below(4);
    check_layout(sizes, random_strides(sizes));
  }
}

// ---------------------------------------------------------------- strided_layout
// The offsets of every element, one tuple per element, sorted.
std::vector<std::array<int64_t, 3>> offsets_of_shape(
    const std::vector<int64_t>& sizes, const std::vector<std::vector<int64_t>>& strides) {
  std::vector<std::array<int64_t, 3>> found;
  const int64_t n = numel_of(sizes);
  for (int64_t i = 0; i < n; ++i) {
    std::array<int64_t, 3> at{};
    int64_t rest = i;
    for (size_t d = sizes.size(); d-- > 0;) {
      const int64_t digit = rest % sizes[d];
      rest /= sizes[d];
      for (size_t k = 0; k < strides.size(); ++k) at[k] += digit * strides[k][d];
    }
    found.push_back(at);
  }
  std::sort(found.begin(), found.end());
  return found;
}

std::vector<std::array<int64_t, 3>> offsets_of_walk(const StridedLayout& layout, int operands) {
  std::vector<std::array<int64_t, 3>> found;
  const int64_t n = layout.numel();
  for (int64_t i = 0; i < n; ++i) {
    std::array<int64_t, 3> at{};
    int64_t rest = i;
    for (int32_t d = 0; d < layout.dims; ++d) {
      const int64_t digit = rest % layout.sizes[d];
      rest /= layout.sizes[d];
      for (int k = 0; k < operands; ++k) at[size_t(k)] += digit * layout.strides[k][d];
    }
    found.push_back(at);
  }
  std::sort(found.begin(), found.end());
  return found;
}

void check_walks() {
  for (int trial = 0; trial < 20000; ++trial) {
    std::vector<int64_t> sizes(size_t(1 + random_below(6)));
    for (int64_t& s : sizes) s = 1 + random_below(random_below(3) == 0 ? 2 : 5);
    const int operands = 1 + int(random_below(3));
    std::vector<std::vector<int64_t>> strides;
    for (int k = 0; k < operands; ++k) strides.push_back(random_strides(sizes));
    const int64_t* pointers[3] = {};
    for (int k = 0; k < operands; ++k) pointers[k] = strides[size_t(k)].data();
    const std::optional<StridedLayout> layout =
        strided_layout(int64_t(sizes.size()), sizes.data(), pointers, operands);
    const std::string what = "strided_layout" + describe(sizes, strides[0]);
    expect(layout.has_value(), what + ": no walk for at most 6 dimensions");
    if (!layout) continue;
    expect(layout->dims >= 1 && layout->dims <= int32_t(sizes.size()) + 1, what + ": dims");
    bool sizes_ok = layout->numel() == numel_of(sizes);
    for (int32_t d = 0; d < layout->dims; ++d) {
      sizes_ok = sizes_ok && (layout->sizes[d] > 1 || layout->dims == 1);
    }
    expect(sizes_ok, what + ": sizes");
    expect(offsets_of_walk(*layout, operands) == offsets_of_shape(sizes, strides),
           what + ": elements");
  }
  // More dimensions left than a walk holds: none, rather than a wrong one.
  std::vector<int64_t> sizes(StridedLayout::kMaxDims + 1, 2), strides(sizes.size());
  for (size_t d = 0; d < sizes.size(); ++d) strides[d] = int64_t(3) << (2 * d);  // nothing merges
  const int64_t* pointers[] = {strides.data()};
  expect(!strided_layout(int64_t(sizes.size()), sizes.data(), pointers, 1).has_value(),
         "strided_layout past kMaxDims");
}

// Past DimArray's inline dimensions (a heap buffer): still one order, still dense.
void check_many_dims() {
  std::vector<int64_t> sizes(40, 1), strides(40);
  sizes[3] = 2;
  sizes[30] = 3;
  for (size_t d = 0; d < sizes.size(); ++d) strides[d] = 7;
  strides[30] = 1;
  strides[3] = 3;
  expect(is_dense(int64_t(sizes.size()), sizes.data(), strides.data()), "40 dimensions dense");
  strides[3] = 4;
  expect(!is_dense(int64_t(sizes.size()), sizes.data(), strides.data()), "40 dimensions not dense");
  const DimArray order = stride_order(int64_t(sizes.size()), sizes.data(),
                                      std::array<const int64_t*, 1>{strides.data()}.data(), 1);
  expect(order.size() == 40 && order[0] == 30, "40 dimensions: the stride-1 one innermost");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <seed>\n", argv[0]);
    return 2;
  }
  g_state = std::strtoull(argv[1], nullptr, 0);
  std::printf("seed %s\n", argv[1]);
  check_all_small_layouts();
  check_random_layouts();
  check_walks();
  check_many_dims();
  std::printf("%lld checks, %lld failures\n", g_checks, g_failures);
  return g_failures == 0 ? 0 : 1;
}
