// csr, coo, dense and vector on the cpu: construction checks and conversions.
#include <doctest/doctest.h>

#include <spade/spade.hpp>

TEST_CASE("smoke") {
  spade::csr<double, spade::cpu> a(2, 3, {0, 1, 2}, {2, 0}, {1.0, 2.0});
  auto d = spade::convert<spade::dense>(a);
  CHECK(d(0, 2) == 1.0);
}
