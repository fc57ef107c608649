// GCOO sparse × dense products: the paper's Algorithm 2 (baseline) and the Hopper re-design.
#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "detail/cub_temp.cuh"
#include "detail/library_support.cuh"
#include "kernels/instantiate.hpp"
#include "spade/device/kernels.hpp"

namespace spade::device {

std::string gcoo_spmm_launch::describe() const {
  return std::to_string(lanes_per_group) + " lanes per group, " + std::to_string(vector_width) +
         "-element loads of B, " + std::to_string(column_tiles) + " column tile(s), " +
         std::to_string(work_items) + " work items (" + std::to_string(split_groups) +
         " long groups split, at most " + std::to_string(split_entries) + " entries per item)";
}

namespace {

// ---- the paper's Algorithm 2 -------------------------------------------------------------------

template <class T>
struct paper_params {
  const T* values;
  const index_t* rows;
  const index_t* cols;
  const index_t* group_offsets;
  const index_t* group_nnz;
  const T* b;
  T* c;
  index_t m;
  index_t n;  // columns of B and C (wB)
  index_t p;
  T alpha;
  T beta;
};

// One block per (group, b columns of C); each thread one column. The group's entries pass through
// shared memory b at a time; a thread keeps B(col, Cj) in a register while the following
// entries share the column (lines 28–36 of the paper). c[] is indexed by the entry's row inside
// the group, as in the paper, so it lives in local memory.
template <class T, int MaxP>
__global__ void gcoo_spmm_paper_kernel(paper_params<T> p) {
  extern __shared__ unsigned char paper_shared[];
  const int b = static_cast<int>(blockDim.x);
  T* s_vals = reinterpret_cast<T*>(paper_shared);
  index_t* s_cols = reinterpret_cast<index_t*>(s_vals + b);
  index_t* s_rows = s_cols + b;

  const std::int64_t cj = std::int64_t{blockIdx.y} * b + threadIdx.x;
  const index_t group = static_cast<index_t>(blockIdx.x);
  const index_t ci0 = group * p.p;
  T c[MaxP];
  for (int i = 0; i < MaxP; ++i)
    c[i] = T(0);
  const index_t nnz = p.group_nnz[group];
  const index_t base = p.group_offsets[group];
  for (index_t offset = 0; offset < nnz; offset += b) {
    const index_t k = offset + static_cast<index_t>(threadIdx.x);
    if (k < nnz) {
      s_vals[threadIdx.x] = p.values[base + k];
      s_cols[threadIdx.x] = p.cols[base + k];
      s_rows[threadIdx.x] = p.rows[base + k];
    }
    const int cnnz = static_cast<int>(min(static_cast<index_t>(b), nnz - offset));
    __syncthreads();
    if (cj < p.n) {
      for (int j = 0; j < cnnz;) {
        const index_t col = s_cols[j];
        const T bv = p.b[std::int64_t{col} * p.n + cj];
        c[s_rows[j] - ci0] += s_vals[j] * bv;
        int step = 1;
        while (j + step < cnnz && s_cols[j + step] == col) {
          c[s_rows[j + step] - ci0] += s_vals[j + step] * bv;
          ++step;
        }
        j += step;
      }
    }
    __syncthreads();
  }
  if (cj >= p.n) return;
  for (int i = 0; i < MaxP && i < p.p; ++i) {
    const index_t row = ci0 + i;
    if (row >= p.m) break;
    T* out = p.c + std::int64_t{row} * p.n + cj;
    *out = p.beta == T(0) ? p.alpha * c[i] : p.alpha * c[i] + p.beta * *out;
  }
}

// ---- the Hopper re-design --------------------------------------------------------------------
//
// A work item is (group, window of ≤ 8 of its rows, range of its entries) and is served by a
// team of Lanes lanes (a whole warp when C is wide, a quarter of one when N = 32). Each lane owns
// V consecutive columns of the current column tile and loads them from B with one 16-byte load.
// A team stages the next `depth` entries of its item through its own slice of shared memory
// (loaded from global memory while the previous slice is being used) and then walks them
// `entries_in_flight` at a time: the B rows of those entries are requested together before any
// is used, so a lane waits for one L2 round trip per batch instead of one per entry. Entries of
// a group come in column order, so entries sharing a column in one batch hit the same cache
// line (the paper's reuse, now through L1). The accumulators of the window's rows stay in
// registers, selected by an unrolled compare (never a dynamic register index: nothing spills).
// Long groups are cut into several items; each parks its partial sums in a workspace and the
// last one of its window to finish (an arrival counter) adds all pieces in item order and writes
// C: one launch, no floating-point atomics, the same result on every run. Column tiles are the
// slow grid dimension, so all items of one tile run together and the tile of B stays in L2.

constexpr int block_threads = 256;
constexpr int max_window_rows = 8;
// Four loads in flight per lane already give every SM more bytes in flight than an L2 round trip
// needs once a few warps are resident (docs/benchmarks/gcoo.md); the batch also bounds the
// registers a lane holds for B (4 × V).
constexpr int entries_in_flight = 4;
// The shortest piece a long group is cut into: shorter ones spend more on partial sums than
// they gain in parallelism.
constexpr int min_split_entries = 16;

struct work_item {
  index_t window;  // group · windows_per_group + window
  index_t begin;   // entry range inside the arrays
  index_t end;
  index_t slot;   // partial-sum slot, or -1 when the item owns its rows
  index_t split;  // its split window (splits[], arrivals[]), or -1
};

struct split_window {
  index_t first_slot;
  index_t slots;
};

template <class T>
struct spmm_params {
  const T* values;
  const index_t* rows;
  const index_t* cols;
  const work_item* items;
  const split_window* splits;
  unsigned* arrivals;  // per split window and column tile; the last arrival resets it to 0
  const T* b;
  T* c;
  T* partials;  // (slots, window rows, n)
  std::int64_t item_count;
  index_t m;
  index_t n;
  index_t p;
  int windows_per_group;
  int slot_rows;  // rows of C one partial-sum slot holds: min(p, 8)
  T alpha;
  T beta;
};

template <class T, int V>
struct vec_of;
template <class T>
struct vec_of<T, 1> {
  struct type {
    T v[1];
  };
  static __device__ type load(const T* at) { return {{__ldg(at)}}; }
  static __device__ type load_coherent(const T* at) { return {{__ldcg(at)}}; }
};
template <>
struct vec_of<float, 4> {
  struct type {
    float v[4];
  };
  static __device__ type load(const float* at) {
    const float4 x = __ldg(reinterpret_cast<const float4*>(at));
    return {{x.x, x.y, x.z, x.w}};
  }
  static __device__ type load_coherent(const float* at) {
    const float4 x = __ldcg(reinterpret_cast<const float4*>(at));
    return {{x.x, x.y, x.z, x.w}};
  }
};
template <>
struct vec_of<double, 2> {
  struct type {
    double v[2];
  };
  static __device__ type load(const double* at) {
    const double2 x = __ldg(reinterpret_cast<const double2*>(at));
    return {{x.x, x.y}};
  }
  static __device__ type load_coherent(const double* at) {
    const double2 x = __ldcg(reinterpret_cast<const double2*>(at));
    return {{x.x, x.y}};
  }
};

template <class T, int V>
__device__ void store_vec(T* at, const T (&x)[V]) {
  if constexpr (V == 4) {
    *reinterpret_cast<float4*>(at) = make_float4(x[0], x[1], x[2], x[3]);
  } else if constexpr (V == 2) {
    *reinterpret_cast<double2*>(at) = make_double2(x[0], x[1]);
  } else {
    at[0] = x[0];
  }
}

template <class T, int V>
__device__ void load_vec(const T* at, T (&x)[V]) {
  const auto loaded = vec_of<T, V>::load(at);
#pragma unroll
  for (int i = 0; i < V; ++i)
    x[i] = loaded.v[i];
}

// 16 bytes for float and double alike, so a broadcast read is one shared-memory load.
template <class T>
struct alignas(16) staged_entry {
  index_t col;
  index_t row;  // inside the window; P when outside it (or padding): skipped
  T value;
};

// C(row, col0 … col0 + V) = alpha · sum + beta · C (beta = 0 ignores C, NaN included).
template <class T, int V>
__device__ __forceinline__ void write_output(const spmm_params<T>& p, index_t row,
                                             std::int64_t col0, const T (&sum)[V]) {
  T* out = p.c + std::int64_t{row} * p.n + col0;
  T result[V];
  if (p.beta == T(0)) {
#pragma unroll
    for (int v = 0; v < V; ++v)
      result[v] = p.alpha * sum[v];
  } else {
    T old[V];
#pragma unroll
    for (int v = 0; v < V; ++v)
      old[v] = out[v];
#pragma unroll
    for (int v = 0; v < V; ++v)
      result[v] = p.alpha * sum[v] + p.beta * old[v];
  }
  store_vec<T, V>(out, result);
}

// Loads the entries of one round (per_lane per lane) into registers; slots past the item's end
// become padding outside the window, which loads nothing and adds nothing.
template <class T, int P, int Lanes, int PerLane>
__device__ __forceinline__ void fetch_entries(const spmm_params<T>& p, const work_item& item,
                                              index_t window_row0, index_t window_rows,
                                              unsigned round, int lane, index_t (&col)[PerLane],
                                              index_t (&row)[PerLane], T (&value)[PerLane]) {
#pragma unroll
  for (int i = 0; i < PerLane; ++i) {
    // Unsigned: near the end k may pass INT_MAX, never 2^32 (end <= INT_MAX, offsets < 64);
    // 64-bit positions here made the SpMM 16 % slower at N = 32.
    const unsigned k = round + static_cast<unsigned>(i * Lanes + lane);
    col[i] = 0;
    row[i] = P;
    value[i] = T(0);
    if (k < static_cast<unsigned>(item.end)) {
      const index_t r = p.rows[k] - window_row0;
      col[i] = p.cols[k];
      row[i] = (r >= 0 && r < window_rows) ? r : index_t{P};
      value[i] = p.values[k];
    }
  }
}

template <class T, int P, int V, int Lanes>
__global__ void __launch_bounds__(block_threads) gcoo_spmm_kernel(spmm_params<T> p) {
  constexpr int teams_per_block = block_threads / Lanes;
  constexpr int depth = Lanes < 16 ? 16 : Lanes;  // entries staged per round
  constexpr int per_lane = depth / Lanes;
  constexpr int batch = entries_in_flight;
  static_assert(depth % batch == 0, "a round holds whole batches");
  __shared__ staged_entry<T> stage[teams_per_block][depth];

  const int team = static_cast<int>(threadIdx.x) / Lanes;
  const int lane = static_cast<int>(threadIdx.x) % Lanes;
  const std::int64_t item_index = std::int64_t{blockIdx.x} * teams_per_block + team;
  if (item_index >= p.item_count) return;  // the whole team leaves together
  const unsigned warp_lane = threadIdx.x % 32;
  const unsigned team_mask =
      Lanes == 32 ? 0xffffffffu : ((1u << Lanes) - 1u) << (warp_lane / Lanes * Lanes);

  const work_item item = p.items[item_index];
  const index_t group = item.window / p.windows_per_group;
  const index_t window_row0 = group * p.p + (item.window % p.windows_per_group) * max_window_rows;
  const index_t window_rows =
      min(min(static_cast<index_t>(P), group * p.p + p.p - window_row0), p.m - window_row0);
  const std::int64_t col0 = (std::int64_t{blockIdx.y} * Lanes + lane) * V;
  const bool active = col0 < p.n;

  T acc[P][V];
#pragma unroll
  for (int r = 0; r < P; ++r)
#pragma unroll
    for (int v = 0; v < V; ++v)
      acc[r][v] = T(0);

  // The next round's entries, in flight while the current round runs.
  index_t next_col[per_lane];
  index_t next_row[per_lane];
  T next_value[per_lane];
  fetch_entries<T, P, Lanes, per_lane>(p, item, window_row0, window_rows,
                                       static_cast<unsigned>(item.begin), lane, next_col, next_row,
                                       next_value);
  const auto end = static_cast<unsigned>(item.end);
  for (auto round = static_cast<unsigned>(item.begin); round < end; round += depth) {
#pragma unroll
    for (int i = 0; i < per_lane; ++i)
      stage[team][i * Lanes + lane] = {next_col[i], next_row[i], next_value[i]};
    __syncwarp(team_mask);
    fetch_entries<T, P, Lanes, per_lane>(p, item, window_row0, window_rows, round + depth, lane,
                                         next_col, next_row, next_value);
    const int count = static_cast<int>(min(static_cast<unsigned>(depth), end - round));
    if (active) {
      for (int j = 0; j < count; j += batch) {
        staged_entry<T> e[batch];
#pragma unroll
        for (int u = 0; u < batch; ++u)
          e[u] = stage[team][j + u];
        T b[batch][V];
#pragma unroll
        for (int u = 0; u < batch; ++u) {
          if (e[u].row < P) {
            load_vec<T, V>(p.b + std::int64_t{e[u].col} * p.n + col0, b[u]);
          } else {
#pragma unroll
            for (int v = 0; v < V; ++v)
              b[u][v] = T(0);
          }
        }
        // The row as a one-hot bit, tested per accumulator row: compared as an integer, the
        // compiler turned the unrolled compare back into a dynamic index (local memory).
#pragma unroll
        for (int u = 0; u < batch; ++u) {
          const unsigned row_bit = 1u << e[u].row;
#pragma unroll
          for (int r = 0; r < P; ++r)
            if (row_bit & (1u << r))
#pragma unroll
              for (int v = 0; v < V; ++v)
                acc[r][v] += e[u].value * b[u][v];
        }
      }
    }
    __syncwarp(team_mask);
  }

  if (item.slot < 0) {
    if (!active) return;
#pragma unroll
    for (int r = 0; r < P; ++r)
      if (r < window_rows) write_output<T, V>(p, window_row0 + r, col0, acc[r]);
    return;
  }

  // A piece of a long group: park the partial sums, count the arrival; the team that arrives
  // last adds every piece of the window in item order, so the sum does not depend on timing.
  if (active) {
    T* out = p.partials + (std::int64_t{item.slot} * p.slot_rows) * p.n + col0;
#pragma unroll
    for (int r = 0; r < P; ++r)
      if (r < window_rows) store_vec<T, V>(out + std::int64_t{r} * p.n, acc[r]);
  }
  __threadfence();
  __syncwarp(team_mask);
  unsigned arrived = 0;
  // Pieces of one window in different column tiles are independent: one counter per tile.
  unsigned* const arrivals = p.arrivals + std::int64_t{item.split} * gridDim.y + blockIdx.y;
  if (lane == 0) {
    arrived = atomicAdd(arrivals, 1u);
    __threadfence();  // the other pieces' partial sums are visible past this point ...
  }
  arrived = __shfl_sync(team_mask, arrived, 0, Lanes);
  __syncwarp(team_mask);  // ... and to every lane of the team (a shuffle orders no memory)
  const split_window split = p.splits[item.split];
  if (arrived != static_cast<unsigned>(split.slots - 1)) return;
  if (lane == 0) *arrivals = 0;  // ready for the next launch on this stream
  if (!active) return;
#pragma unroll
  for (int r = 0; r < P; ++r) {
    if (r >= window_rows) break;
    T sum[V];
#pragma unroll
    for (int v = 0; v < V; ++v)
      sum[v] = T(0);
    for (index_t s = 0; s < split.slots; ++s) {
      const T* in =
          p.partials + (std::int64_t{split.first_slot + s} * p.slot_rows + r) * p.n + col0;
      const auto piece = vec_of<T, V>::load_coherent(in);  // L1 may hold stale lines
#pragma unroll
      for (int v = 0; v < V; ++v)
        sum[v] += piece.v[v];
    }
    write_output<T, V>(p, window_row0 + r, col0, sum);
  }
}

// ---- the schedule: work items, built once per matrix and split size, cached on the operand ---

struct gcoo_schedule {
  int requested_split = 0;  // with max_slots, the cache key
  std::int64_t max_slots = 0;
  int split_entries = 0;  // the cut used: requested_split, doubled until the slots fit
  int windows_per_group = 1;
  std::int64_t item_count = 0;
  std::int64_t slot_count = 0;
  int split_groups = 0;
  device_buffer<work_item> items;
  device_buffer<split_window> splits;
  // splits × column tiles counters, all zero between launches (each launch's last arrivals
  // reset them); grown when a wider B needs more tiles.
  mutable device_buffer<unsigned> arrivals;
};
// The split size follows N (through the team width), so products of one matrix with B of a few
// widths keep a few schedules.
struct gcoo_schedules {
  std::vector<std::shared_ptr<gcoo_schedule>> built;
};
struct gcoo_schedule_key {};
constexpr std::size_t max_cached_schedules = 4;

int windows_for(index_t p) {
  return static_cast<int>((p + max_window_rows - 1) / max_window_rows);
}

// Items per group window: one, or ceil(entries / split_entries) when the group is long. The
// cut doubles until the partial-sum slots fit max_slots (before, a matrix over the budget lost
// its splits altogether and ran its longest groups serially: 5x slower on wiki-Vote). The
// schedule needs the group lengths on the host (one copy of groups() integers).
template <class T>
gcoo_schedule build_schedule(const gcoo<T, gpu>& a, int requested_split, std::int64_t max_slots,
                             context& ctx) {
  gcoo_schedule s;
  s.requested_split = requested_split;
  s.max_slots = max_slots;
  s.windows_per_group = windows_for(a.group_size());
  const index_t groups = a.groups();
  std::vector<index_t> nnz(static_cast<std::size_t>(groups));
  std::vector<index_t> offsets(static_cast<std::size_t>(groups));
  if (groups > 0) {
    ctx.copy_to_host(nnz.data(), a.group_nnz().data(), nnz.size() * sizeof(index_t));
    ctx.copy_to_host(offsets.data(), a.group_offsets().data(), offsets.size() * sizeof(index_t));
  }
  const int windows = s.windows_per_group;
  auto slots_for = [&](std::int64_t split) {
    std::int64_t slots = 0;
    for (const index_t length : nnz)
      if (length > split) slots += (length + split - 1) / split * windows;
    return slots;
  };
  std::int64_t split_entries = requested_split;
  while (split_entries < INT_MAX / 2 && slots_for(split_entries) > max_slots)
    split_entries *= 2;
  s.split_entries = static_cast<int>(std::min<std::int64_t>(split_entries, INT_MAX / 2));
  std::vector<work_item> items;
  std::vector<split_window> splits;
  items.reserve(static_cast<std::size_t>(groups) * s.windows_per_group);
  index_t slot = 0;
  for (index_t g = 0; g < groups; ++g) {
    const index_t begin = offsets[g];
    const index_t end = begin + nnz[g];
    const auto pieces = static_cast<index_t>(
        std::max<std::int64_t>(1, (std::int64_t{nnz[g]} + s.split_entries - 1) / s.split_entries));
    if (pieces > 1) ++s.split_groups;
    for (int w = 0; w < s.windows_per_group; ++w) {
      const index_t window = g * s.windows_per_group + w;
      if (pieces == 1) {
        items.push_back({window, begin, end, -1, -1});
        continue;
      }
      const auto split = static_cast<index_t>(splits.size());
      splits.push_back({slot, pieces});
      for (index_t piece = 0; piece < pieces; ++piece) {
        const std::int64_t piece_begin = begin + std::int64_t{piece} * s.split_entries;
        const std::int64_t piece_end = std::min<std::int64_t>(end, piece_begin + s.split_entries);
        items.push_back({window, static_cast<index_t>(piece_begin), static_cast<index_t>(piece_end),
                         slot++, split});
      }
    }
  }
  s.item_count = static_cast<std::int64_t>(items.size());
  s.slot_count = slot;
  s.items = device_buffer<work_item>(items.size(), ctx);
  if (!items.empty())
    ctx.copy_to_device(s.items.data(), items.data(), items.size() * sizeof(work_item));
  s.splits = device_buffer<split_window>(splits.size(), ctx);
  if (!splits.empty())
    ctx.copy_to_device(s.splits.data(), splits.data(), splits.size() * sizeof(split_window));
  ctx.synchronize();  // the host vectors die here
  return s;
}

// The default cut: twice an even share of the entries per resident team (so a skewed group
// never holds up the whole launch), never below min_split_entries.
int default_split_entries(std::int64_t nnz, int lanes, const context& ctx) {
  const std::int64_t resident_teams =
      std::int64_t{std::max(ctx.properties().sm_count, 1)} * (2048 / lanes);
  const std::int64_t share = (nnz + resident_teams - 1) / resident_teams;
  return static_cast<int>(std::clamp<std::int64_t>(share * 2, min_split_entries, INT_MAX / 2));
}

template <class T>
const gcoo_schedule& schedule_of(const gcoo<T, gpu>& a, int split_entries, std::int64_t max_slots,
                                 context& ctx) {
  using holder = std::shared_ptr<gcoo_schedules>;
  const holder& cached = a.cache().template get_or_make<gcoo_schedule_key, holder>(
      [] { return std::make_shared<gcoo_schedules>(); });
  auto& built = cached->built;
  for (const auto& s : built)
    if (s->requested_split == split_entries && s->max_slots == max_slots) return *s;
  if (built.size() == max_cached_schedules) built.erase(built.begin());
  built.push_back(
      std::make_shared<gcoo_schedule>(build_schedule(a, split_entries, max_slots, ctx)));
  return *built.back();
}

template <class T, int P, int V, int Lanes>
void launch_spmm(const spmm_params<T>& params, std::int64_t tiles, cudaStream_t stream) {
  constexpr int teams_per_block = block_threads / Lanes;
  const std::int64_t blocks = (params.item_count + teams_per_block - 1) / teams_per_block;
  gcoo_spmm_kernel<T, P, V, Lanes>
      <<<dim3(static_cast<unsigned>(blocks), static_cast<unsigned>(tiles)), block_threads, 0,
         stream>>>(params);
}

template <class T, int V, int Lanes>
void launch_by_rows(int window_rows, const spmm_params<T>& params, std::int64_t tiles,
                    cudaStream_t stream) {
  switch (window_rows) {
    case 1:
      return launch_spmm<T, 1, V, Lanes>(params, tiles, stream);
    case 2:
      return launch_spmm<T, 2, V, Lanes>(params, tiles, stream);
    case 3:
    case 4:
      return launch_spmm<T, 4, V, Lanes>(params, tiles, stream);
    default:
      return launch_spmm<T, 8, V, Lanes>(params, tiles, stream);
  }
}

template <class T, int V>
void launch_by_lanes(int lanes, int window_rows, const spmm_params<T>& params, std::int64_t tiles,
                     cudaStream_t stream) {
  switch (lanes) {
    case 4:
      return launch_by_rows<T, V, 4>(window_rows, params, tiles, stream);
    case 8:
      return launch_by_rows<T, V, 8>(window_rows, params, tiles, stream);
    case 16:
      return launch_by_rows<T, V, 16>(window_rows, params, tiles, stream);
    default:
      return launch_by_rows<T, V, 32>(window_rows, params, tiles, stream);
  }
}

template <class T>
void require_product_shapes(const gcoo<T, gpu>& a, const dense<T, gpu, row_major>& b,
                            const dense<T, gpu, row_major>& c, const char* what) {
  detail::require_shapes(b.rows() == a.cols() && c.rows() == a.rows() && c.cols() == b.cols(), what,
                         "A is " + detail::shape_text(a.rows(), a.cols()) + ", B is " +
                             detail::shape_text(b.rows(), b.cols()) + ", C is " +
                             detail::shape_text(c.rows(), c.cols()));
}

bool aligned16(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
}

}  // namespace

template <scalar T>
gcoo_spmm_launch gcoo_spmm(T alpha, const gcoo<T, gpu>& a, const dense<T, gpu, row_major>& b,
                           T beta, dense<T, gpu, row_major>& c, int split_entries) {
  require_product_shapes(a, b, c, "gcoo_spmm");
  gcoo_spmm_launch launch;
  if (c.element_count() == 0) return launch;
  context& ctx = detail::context_of(a.values(), a.col_idx(), b.values(), c.values());
  const cudaStream_t stream = detail::stream_of(ctx);
  const index_t n = c.cols();
  if (a.nnz() == 0) {
    detail::scale_or_zero(ctx, beta, c.data(), static_cast<std::int64_t>(c.element_count()),
                          "scaling C by beta for an empty A (gcoo_spmm)");
    return launch;
  }
  // 16-byte loads of B and stores of C need every row to start on a 16-byte boundary.
  constexpr int wide = 16 / static_cast<int>(sizeof(T));
  const bool vectorised = n % wide == 0 && aligned16(b.data()) && aligned16(c.data());
  const int v = vectorised ? wide : 1;
  const std::int64_t lanes_needed = (n + v - 1) / v;
  const int lanes = lanes_needed >= 32 ? 32 : lanes_needed > 8 ? 16 : lanes_needed > 4 ? 8 : 4;
  const std::int64_t tiles = (n + std::int64_t{lanes} * v - 1) / (std::int64_t{lanes} * v);
  if (tiles > 65535)
    throw dimension_mismatch("gcoo_spmm: B has " + std::to_string(n) +
                             " columns, more than this kernel's 65535 column tiles");
  if (split_entries <= 0) split_entries = default_split_entries(a.nnz(), lanes, ctx);
  // Partial sums take slots · min(p, 8) · n elements: at most C's size or 4 M elements.
  const int slot_rows = static_cast<int>(std::min<index_t>(a.group_size(), max_window_rows));
  const std::int64_t partial_budget = std::max<std::int64_t>(c.element_count(), 1 << 22);
  const gcoo_schedule& used =
      schedule_of(a, split_entries, partial_budget / (std::int64_t{slot_rows} * n), ctx);
  const std::size_t counters = used.splits.size() * static_cast<std::size_t>(tiles);
  if (used.arrivals.size() < counters) {
    used.arrivals = device_buffer<unsigned>(counters, ctx);
    ctx.fill_zero(used.arrivals.data(), counters * sizeof(unsigned));
  }
  device_buffer<T> partials(
      static_cast<std::size_t>(used.slot_count) * slot_rows * static_cast<std::size_t>(n), ctx);

  const spmm_params<T> params{a.values().data(),
                              a.row_idx().data(),
                              a.col_idx().data(),
                              used.items.data(),
                              used.splits.data(),
                              used.arrivals.data(),
                              b.data(),
                              c.data(),
                              partials.data(),
                              used.item_count,
                              a.rows(),
                              n,
                              a.group_size(),
                              used.windows_per_group,
                              slot_rows,
                              alpha,
                              beta};
  if (v == wide)
    launch_by_lanes<T, wide>(lanes, slot_rows, params, tiles, stream);
  else
    launch_by_lanes<T, 1>(lanes, slot_rows, params, tiles, stream);
  SPADE_CHECK_LAUNCH("multiplying gcoo by a dense matrix (gcoo_spmm)");
  launch.lanes_per_group = lanes;
  launch.vector_width = v;
  launch.column_tiles = static_cast<int>(tiles);
  launch.work_items = static_cast<int>(used.item_count);
  launch.split_groups = used.split_groups;
  launch.split_entries = used.split_entries;
  return launch;
}

template <scalar T>
void gcoo_spmm_paper(T alpha, const gcoo<T, gpu>& a, const dense<T, gpu, row_major>& b, T beta,
                     dense<T, gpu, row_major>& c, int block_threads_paper) {
  require_product_shapes(a, b, c, "gcoo_spmm_paper");
  if (a.group_size() > 32)
    throw invalid_matrix("gcoo_spmm_paper: group size " + std::to_string(a.group_size()) +
                         " > 32, the paper kernel keeps a group's outputs in a 32-entry array");
  if (block_threads_paper < 32 || block_threads_paper > 1024 || block_threads_paper % 32 != 0)
    throw invalid_matrix("gcoo_spmm_paper: block size " + std::to_string(block_threads_paper) +
                         " must be a multiple of 32 in [32, 1024]");
  if (c.element_count() == 0) return;
  context& ctx = detail::context_of(a.values(), a.col_idx(), b.values(), c.values());
  if (a.nnz() == 0) {
    detail::scale_or_zero(ctx, beta, c.data(), static_cast<std::int64_t>(c.element_count()),
                          "scaling C by beta for an empty A (gcoo_spmm_paper)");
    return;
  }
  const index_t n = c.cols();
  const std::int64_t column_blocks = (n + block_threads_paper - 1) / block_threads_paper;
  if (column_blocks > 65535)
    throw dimension_mismatch("gcoo_spmm_paper: too many columns for one grid");
  const paper_params<T> params{a.values().data(),
                               a.row_idx().data(),
                               a.col_idx().data(),
                               a.group_offsets().data(),
                               a.group_nnz().data(),
                               b.data(),
                               c.data(),
                               a.rows(),
                               n,
                               a.group_size(),
                               alpha,
                               beta};
  const dim3 grid(static_cast<unsigned>(a.groups()), static_cast<unsigned>(column_blocks));
  const std::size_t shared =
      static_cast<std::size_t>(block_threads_paper) * (sizeof(T) + 2 * sizeof(index_t));
  const cudaStream_t stream = detail::stream_of(ctx);
  const index_t p = a.group_size();
  if (p <= 4)
    gcoo_spmm_paper_kernel<T, 4><<<grid, block_threads_paper, shared, stream>>>(params);
  else if (p <= 8)
    gcoo_spmm_paper_kernel<T, 8><<<grid, block_threads_paper, shared, stream>>>(params);
  else
    gcoo_spmm_paper_kernel<T, 32><<<grid, block_threads_paper, shared, stream>>>(params);
  SPADE_CHECK_LAUNCH("multiplying gcoo by a dense matrix (gcoo_spmm_paper)");
}

SPADE_KERNELS_GCOO_INSTANTIATIONS(float)
SPADE_KERNELS_GCOO_INSTANTIATIONS(double)

}  // namespace spade::device
