// The one include of Spade: every public type and function.
#pragma once

#include "spade/core/context.hpp"
#include "spade/core/error.hpp"
#include "spade/core/scalar.hpp"
#include "spade/core/space.hpp"
#include "spade/cpu/eigen.hpp"
#include "spade/formats/convert.hpp"
#include "spade/formats/coo.hpp"
#include "spade/formats/csr.hpp"
#include "spade/formats/dense.hpp"
#include "spade/formats/transfer.hpp"
#include "spade/formats/vector.hpp"
#include "spade/io/generators.hpp"
#include "spade/io/matrix_market.hpp"
