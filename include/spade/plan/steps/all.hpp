// Every kernel's step (plan/steps/step.hpp): included where candidates are chosen.
#pragma once

#include "spade/plan/steps/csr_rowwise.hpp"
#include "spade/plan/steps/ellr_spmv.hpp"
#include "spade/plan/steps/gcoo_spmm.hpp"
#include "spade/plan/steps/hash_spgemm.hpp"
#include "spade/plan/steps/step.hpp"
#include "spade/plan/steps/tiled_spgemm.hpp"
#include "spade/plan/steps/tiled_spmm.hpp"
