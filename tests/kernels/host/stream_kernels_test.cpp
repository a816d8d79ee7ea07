// The memory-bandwidth kernels in every vector set this CPU runs: each kernel writes exactly the
// values and exactly the elements it should (ragged slice edges included), with both store kinds,
// and the set the probe picks is the widest one /proc/cpuinfo lists.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "kernels/host/stream_kernels.hpp"
#include "tests/kernels/host/cpuinfo_isa.hpp"

namespace nodeaudit::host {
namespace {

constexpr double scalar = 3.0;
constexpr std::size_t elements = 1024 + 40;

struct FreeDeleter {
  void operator()(double* p) const { std::free(p); }
};
using Array = std::unique_ptr<double[], FreeDeleter>;

Array aligned_array() {
  return Array(static_cast<double*>(std::aligned_alloc(64, elements * sizeof(double))));
}

// Quarters of small integers: every sum and product the kernels form is exact, so a vector set
// that fuses triad's multiply and add (FMA) gives the same bits as the loop below.
double start_value(int array, std::size_t i) {
  return static_cast<double>((i * 7 + static_cast<std::size_t>(array) * 13) % 101) * 0.25 + 1;
}

struct Arrays {
  Array a = aligned_array(), b = aligned_array(), c = aligned_array();
  Arrays() {
    for (std::size_t i = 0; i < elements; ++i)
      a[i] = start_value(0, i), b[i] = start_value(1, i), c[i] = start_value(2, i);
  }
};

// The three arrays after `kernel` ran over [begin, end), computed element by element here.
void expected_after(std::size_t kernel, Arrays& x, std::size_t begin, std::size_t end) {
  for (std::size_t i = begin; i < end; ++i) {
    const std::string name = stream_kernels[kernel].name;
    if (name == "copy" || name == "memcpy") x.c[i] = x.a[i];
    if (name == "scale") x.b[i] = scalar * x.c[i];
    if (name == "add") x.c[i] = x.a[i] + x.b[i];
    if (name == "triad") x.a[i] = x.b[i] + scalar * x.c[i];
  }
}

void expect_same_arrays(const Arrays& got, const Arrays& want) {
  for (std::size_t i = 0; i < elements; ++i) {
    ASSERT_EQ(got.a[i], want.a[i]) << "a[" << i << "]";
    ASSERT_EQ(got.b[i], want.b[i]) << "b[" << i << "]";
    ASSERT_EQ(got.c[i], want.c[i]) << "c[" << i << "]";
  }
}

// Slices as the probe cuts them (on cache lines) and ragged ones (a head and a tail off the line),
// each leaving elements outside it that must keep their values.
const std::vector<std::pair<std::size_t, std::size_t>> slices{
    {0, elements}, {8, 520}, {3, 517}, {515, elements - 5}, {2, 7}};

TEST(StreamKernels, EveryVectorSetThisCpuRunsWritesTheRightValuesToTheRightElements) {
  for (const VectorIsa isa : supported_vector_isas()) {
    for (const StoreKind stores : {StoreKind::streaming, StoreKind::cached}) {
      for (std::size_t kernel = 0; kernel < std::size(stream_kernels); ++kernel) {
        for (const auto& [begin, end] : slices) {
          SCOPED_TRACE(std::string(isa_name(isa)) + (stores == StoreKind::streaming ? " streaming " : " cached ") +
                       stream_kernels[kernel].name + " [" + std::to_string(begin) + ", " + std::to_string(end) + ")");
          Arrays got, want;
          run_stream_kernel(kernel, stores, isa, got.a.get(), got.b.get(), got.c.get(), begin, end, scalar);
          expected_after(kernel, want, begin, end);
          expect_same_arrays(got, want);
        }
      }
    }
  }
}

// The probe's order on one slice, each kernel repeated as the probe repeats it (each writes an
// array it does not read): the final values the probe checks.
TEST(StreamKernels, TheProbesSequenceEndsInItsCheckedValuesInEveryVectorSet) {
  for (const VectorIsa isa : supported_vector_isas()) {
    SCOPED_TRACE(isa_name(isa));
    Arrays x;
    std::fill_n(x.a.get(), elements, 1.0);
    std::fill_n(x.b.get(), elements, 2.0);
    std::fill_n(x.c.get(), elements, 0.0);
    for (std::size_t kernel = 0; kernel < std::size(stream_kernels); ++kernel)
      for (int repetition = 0; repetition < 2; ++repetition)
        run_stream_kernel(kernel, StoreKind::streaming, isa, x.a.get(), x.b.get(), x.c.get(), 0, elements, scalar);
    EXPECT_EQ(std::count(x.a.get(), x.a.get() + elements, 15.0), static_cast<long>(elements));
    EXPECT_EQ(std::count(x.b.get(), x.b.get() + elements, 3.0), static_cast<long>(elements));
    EXPECT_EQ(std::count(x.c.get(), x.c.get() + elements, 15.0), static_cast<long>(elements));
  }
}

TEST(StreamKernels, TheChosenVectorSetIsTheWidestTheCpuHas) {
#if !defined(__x86_64__)
  EXPECT_EQ(widest_vector_isa(), VectorIsa::portable);
  GTEST_SKIP() << "not an x86-64 build: the kernels are portable C++ loops";
#else
  const std::string from_cpuinfo = widest_isa_in_cpuinfo();
  if (from_cpuinfo.empty()) GTEST_SKIP() << "/proc/cpuinfo has no flags line here";
  EXPECT_EQ(isa_name(widest_vector_isa()), from_cpuinfo);
  // Narrowest first, each set once, the portable loops and SSE2 always.
  const std::vector<VectorIsa> isas = supported_vector_isas();
  ASSERT_GE(isas.size(), 2u);
  EXPECT_EQ(isas[0], VectorIsa::portable);
  EXPECT_EQ(isas[1], VectorIsa::sse2);
  EXPECT_TRUE(std::is_sorted(isas.begin(), isas.end()));
  EXPECT_EQ(std::adjacent_find(isas.begin(), isas.end()), isas.end());
#endif
}

}  // namespace
}  // namespace nodeaudit::host
