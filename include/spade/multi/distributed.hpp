// The multi_gpu csr, dense and vector (rows split over a spade::cluster), distribute / gather,
// and how expressions over them run: each part through the single-GPU planner, products with
// a halo exchange over NCCL.
#pragma once

#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "spade/core/context.hpp"
#include "spade/core/error.hpp"
#include "spade/core/expression.hpp"
#include "spade/core/scalar.hpp"
#include "spade/core/space.hpp"
#include "spade/device/kernels.hpp"
#include "spade/eval/evaluate.hpp"
#include "spade/eval/explain.hpp"
#include "spade/expr/cwise.hpp"
#include "spade/expr/nodes.hpp"
#include "spade/expr/result.hpp"
#include "spade/formats/csr.hpp"
#include "spade/formats/dense.hpp"
#include "spade/formats/partition.hpp"
#include "spade/formats/transfer.hpp"
#include "spade/formats/vector.hpp"
#include "spade/multi/cluster.hpp"

namespace spade {

namespace detail {

/// Runs f(slot, part) for every part this process drives, each inside a context_scope of the
/// part's context (so what f allocates and launches lands on that GPU), one host thread per
/// part when `parallel` (work that waits on the host, such as SpGEMM's sizes) and in order
/// otherwise (asynchronous work overlaps across GPUs anyway). An out_of_memory or cuda_error
/// is rethrown naming the part and its GPU.
template <class F>
void for_each_part(const cluster& where, bool parallel, F&& f) {
  const auto& parts = where.my_parts();
  const auto run = [&](std::size_t slot) {
    const int part = parts[slot];
    try {
      context_scope scope(where.context_of(part));
      f(slot, part);
    } catch (const out_of_memory& e) {
      throw out_of_memory("multi_gpu part " + std::to_string(part) + " (device " +
                          std::to_string(where.device_of(part)) + "): " + e.what());
    } catch (const cuda_error& e) {
      throw cuda_error("multi_gpu part " + std::to_string(part) + " (device " +
                       std::to_string(where.device_of(part)) + "): " + e.what());
    }
  };
  if (!parallel || parts.size() < 2) {
    for (std::size_t slot = 0; slot < parts.size(); ++slot)
      run(slot);
    return;
  }
  std::vector<std::exception_ptr> failures(parts.size());
  std::vector<std::thread> threads;
  threads.reserve(parts.size());
  for (std::size_t slot = 0; slot < parts.size(); ++slot)
    threads.emplace_back([&, slot] {
      try {
        run(slot);
      } catch (...) {
        failures[slot] = std::current_exception();
      }
    });
  for (auto& t : threads)
    t.join();
  for (const auto& failure : failures)
    if (failure) std::rethrow_exception(failure);
}

inline std::string partition_text(const row_partition& rows) {
  std::string text = "[";
  for (std::size_t i = 0; i < rows.first.size(); ++i)
    text += (i ? ", " : "") + std::to_string(rows.first[i]);
  return text + "]";
}

/// What every multi_gpu type holds: its cluster, its row partition (part p owns rows
/// [first[p], first[p + 1]) of the whole) and the gpu objects of the parts this process drives,
/// each in its part's context. Copies are deep, each part copied on its own GPU.
template <class Part>
class distributed_parts {
 public:
  distributed_parts() = default;
  distributed_parts(spade::cluster where, row_partition rows, std::vector<Part> parts)
      : cluster_(std::move(where)), rows_(std::move(rows)), parts_(std::move(parts)) {
    if (rows_.parts() != cluster_.size() || parts_.size() != cluster_.my_parts().size())
      throw error("multi_gpu: a partition of " + std::to_string(rows_.parts()) + " parts and " +
                  std::to_string(parts_.size()) + " local blocks do not fit a cluster of " +
                  std::to_string(cluster_.size()) + " GPUs");
  }
  distributed_parts(const distributed_parts& other)
      : cluster_(other.cluster_), rows_(other.rows_), parts_(other.parts_.size()) {
    if (!parts_.empty())
      for_each_part(cluster_, false,
                    [&](std::size_t slot, int) { parts_[slot] = other.parts_[slot]; });
  }
  distributed_parts(distributed_parts&&) noexcept = default;
  distributed_parts& operator=(const distributed_parts& other) {
    if (this != &other) *this = distributed_parts(other);
    return *this;
  }
  // The old contents are moved out first and die at the end, parts before the cluster: a
  // member-wise assignment would release the old cluster (maybe its last handle, destroying
  // its contexts) before the old parts were freed into them.
  distributed_parts& operator=(distributed_parts&& other) noexcept {
    if (this != &other) {
      distributed_parts old(std::move(*this));
      cluster_ = std::move(other.cluster_);
      rows_ = std::move(other.rows_);
      parts_ = std::move(other.parts_);
    }
    return *this;
  }

  const spade::cluster& cluster() const noexcept { return cluster_; }
  const row_partition& partition() const noexcept { return rows_; }
  /// Parts this process holds (its cluster's my_parts(), in that order).
  std::size_t local_parts() const noexcept { return parts_.size(); }
  const Part& slot(std::size_t i) const { return parts_.at(i); }
  Part& slot(std::size_t i) { return parts_.at(i); }
  /// Part `p`'s block (rows partition().begin(p) .. end(p) - 1), a gpu object on its GPU.
  /// Throws spade::error when this process does not drive part p.
  const Part& part(int p) const { return parts_.at(slot_of(p)); }

 protected:
  Part& writable_part(int p) { return parts_.at(slot_of(p)); }

 private:
  std::size_t slot_of(int p) const {
    const auto& mine = cluster_.my_parts();
    for (std::size_t i = 0; i < mine.size(); ++i)
      if (mine[i] == p) return i;
    throw error("multi_gpu: part " + std::to_string(p) + " is not held by this process");
  }

  spade::cluster cluster_;
  row_partition rows_;
  std::vector<Part> parts_;
};

template <scalar T>
struct halo_plan;

template <class Dest, class E>
void assign_distributed(Dest& dest, const E& e);

}  // namespace detail

/// A vector whose elements are split over the GPUs of a cluster (spade::distribute).
template <storage_scalar T>
class vector<T, multi_gpu> : public detail::distributed_parts<vector<T, gpu>> {
  using base = detail::distributed_parts<vector<T, gpu>>;

 public:
  using value_type = T;
  using space_type = multi_gpu;
  using part_type = vector<T, gpu>;

  vector() = default;
  using base::base;
  template <expression E>
  vector(const E& e) {
    detail::assign_distributed(*this, e);
  }
  template <expression E>
  vector& operator=(const E& e) {
    detail::assign_distributed(*this, e);
    return *this;
  }
  index_t size() const noexcept { return this->partition().rows(); }
  /// Part p's block, writable.
  vector<T, gpu>& part(int p) { return this->writable_part(p); }
  using base::part;
};

/// A dense matrix whose rows are split over the GPUs of a cluster; each part keeps the layout.
template <storage_scalar T, layout Layout>
class dense<T, multi_gpu, Layout> : public detail::distributed_parts<dense<T, gpu, Layout>> {
  using base = detail::distributed_parts<dense<T, gpu, Layout>>;

 public:
  using value_type = T;
  using space_type = multi_gpu;
  using layout_type = Layout;
  using part_type = dense<T, gpu, Layout>;

  dense() = default;
  dense(spade::cluster where, detail::row_partition rows, index_t cols,
        std::vector<dense<T, gpu, Layout>> parts)
      : base(std::move(where), std::move(rows), std::move(parts)), cols_(cols) {}
  template <expression E>
  dense(const E& e) {
    detail::assign_distributed(*this, e);
  }
  template <expression E>
  dense& operator=(const E& e) {
    detail::assign_distributed(*this, e);
    return *this;
  }
  index_t rows() const noexcept { return this->partition().rows(); }
  index_t cols() const noexcept { return cols_; }
  dense<T, gpu, Layout>& part(int p) { return this->writable_part(p); }
  using base::part;

 private:
  index_t cols_ = 0;
};

/// A csr whose rows are split over the GPUs of a cluster; each part is the csr of its rows
/// with the global column indices. Products cache their halo plan (which entries read other
/// parts' rows, what each part sends) on it; writing a part through part() drops the plan.
template <scalar T>
class csr<T, multi_gpu> : public detail::distributed_parts<csr<T, gpu>> {
  using base = detail::distributed_parts<csr<T, gpu>>;

 public:
  using value_type = T;
  using space_type = multi_gpu;
  using part_type = csr<T, gpu>;

  csr() = default;
  csr(spade::cluster where, detail::row_partition rows, index_t cols,
      std::vector<csr<T, gpu>> parts, std::vector<std::int64_t> part_nnz)
      : base(std::move(where), std::move(rows), std::move(parts)),
        cols_(cols),
        part_nnz_(std::move(part_nnz)) {}
  csr(const csr& other) : base(other), cols_(other.cols_), part_nnz_(other.part_nnz_) {}
  csr(csr&&) noexcept = default;
  csr& operator=(const csr& other) {
    if (this != &other) *this = csr(other);
    return *this;
  }
  csr& operator=(csr&&) noexcept = default;
  template <expression E>
  csr(const E& e) {
    detail::assign_distributed(*this, e);
  }
  template <expression E>
  csr& operator=(const E& e) {
    detail::assign_distributed(*this, e);
    return *this;
  }

  index_t rows() const noexcept { return this->partition().rows(); }
  index_t cols() const noexcept { return cols_; }
  /// Entries of every part (a part held here counted as it is now; another process's part as it
  /// was when this object was made or last evaluated).
  std::int64_t nnz() const {
    std::int64_t total = 0;
    for (int p = 0; p < static_cast<int>(part_nnz_.size()); ++p)
      total += part_nnz(p);
    return total;
  }
  /// Entries of part p (any part of the cluster; see nnz()).
  std::int64_t part_nnz(int p) const {
    const auto& mine = this->cluster().my_parts();
    for (std::size_t s = 0; s < mine.size(); ++s)
      if (mine[s] == p) return this->slot(s).nnz();
    return part_nnz_.at(static_cast<std::size_t>(p));
  }
  csr<T, gpu>& part(int p) {
    halo_.reset();
    return this->writable_part(p);
  }
  using base::part;

  /// The halo plan of products with a right-hand side split by `cols` (built on first use,
  /// cached until another split is asked for or a part is written).
  const detail::halo_plan<T>& halo_for(const detail::row_partition& cols) const;

 private:
  index_t cols_ = 0;
  std::vector<std::int64_t> part_nnz_;
  mutable std::shared_ptr<const detail::halo_plan<T>> halo_;
};

namespace detail {

/// How a product A·X with A a multi_gpu csr and X split by `cols` runs on each part p:
/// Y_p = local_p · X_p + remote_p · halo_p, where halo_p holds the rows of X that p's entries
/// read from other parts (partition.hpp's split_part), received from their owners.
template <scalar T>
struct halo_plan {
  cluster where;  // first: the contexts of the buffers below outlive them
  row_partition cols;
  std::vector<csr<T, gpu>> local;                      // [slot] rows_p × cols.size(p)
  std::vector<csr<T, gpu>> remote;                     // [slot] its rows that read the halo only
  std::vector<std::vector<index_t>> remote_rows_host;  // [slot] which rows of the part those are
  std::vector<device_buffer<index_t>> remote_rows;     // [slot] the same, on the part's GPU
  std::vector<std::vector<index_t>> halo_first;        // [slot] parts + 1: rows received from q
  std::vector<std::vector<index_t>> send_first;        // [slot] parts + 1: rows sent to q
  std::vector<std::vector<index_t>> send_rows_host;    // [slot] own positions sent, by receiver
  std::vector<device_buffer<index_t>> send_rows;       // [slot] the same, on the part's GPU
  std::int64_t halo_rows = 0;                          // received rows, all parts
  std::int64_t local_entries = 0, remote_entries = 0;

  /// [slot] rows_p × (cols.size(p) + halo size): local and remote side by side, the remote
  /// columns after the part's own (SpGEMM multiplies it by B_p stacked over the halo rows, one
  /// product instead of two and a sum). Made on the first SpGEMM.
  /// Throws out_of_memory when a part's copy does not fit; extended_failed() then says so, and
  /// automatic products stay overlapped (stacked_product_preferred).
  const std::vector<csr<T, gpu>>& extended() const {
    try {
      build_extended();
    } catch (const out_of_memory&) {
      extended_failed_ = true;
      throw;
    }
    return extended_;
  }
  bool extended_failed() const noexcept { return extended_failed_; }

 private:
  void build_extended() const {
    std::call_once(extended_once_, [&] {
      extended_.resize(local.size());
      for (std::size_t s = 0; s < local.size(); ++s) {
        const auto own = to_cpu(local[s]);
        const auto other = to_cpu(remote[s]);  // compacted: row i is the part's row rows[i]
        const auto& other_rows = remote_rows_host[s];
        std::vector<index_t> ptr{0}, col;
        std::vector<T> val;
        std::size_t next = 0;
        for (index_t r = 0; r < own.rows(); ++r) {
          for (index_t k = own.row_ptr()[r]; k < own.row_ptr()[r + 1]; ++k) {
            col.push_back(own.col_idx()[k]);
            val.push_back(own.values()[k]);
          }
          if (next < other_rows.size() && other_rows[next] == r) {
            const auto i = static_cast<index_t>(next++);
            for (index_t k = other.row_ptr()[i]; k < other.row_ptr()[i + 1]; ++k) {
              col.push_back(own.cols() + other.col_idx()[k]);
              val.push_back(other.values()[k]);
            }
          }
          ptr.push_back(static_cast<index_t>(col.size()));
        }
        const csr<T, cpu> both(unchecked, own.rows(), own.cols() + other.cols(), std::move(ptr),
                               std::move(col), std::move(val));
        context_scope scope(where.context_of(where.my_parts()[s]));
        extended_[s] = to_gpu(both);
      }
    });
  }

  mutable std::atomic<bool> extended_failed_{false};
  mutable std::once_flag extended_once_;
  mutable std::vector<csr<T, gpu>> extended_;

 public:
  index_t halo_size(std::size_t slot) const { return halo_first[slot].back(); }
  index_t send_size(std::size_t slot) const { return send_first[slot].back(); }
};

template <scalar T>
std::shared_ptr<const halo_plan<T>> make_halo_plan(const csr<T, multi_gpu>& a,
                                                   const row_partition& cols) {
  const cluster& where = a.cluster();
  const std::size_t slots = a.local_parts();
  const auto parts = static_cast<std::size_t>(where.size());
  auto plan = std::make_shared<halo_plan<T>>();
  plan->where = where;
  plan->cols = cols;
  std::vector<part_block<T>> blocks(slots);
  for (std::size_t s = 0; s < slots; ++s) {
    const int p = where.my_parts()[s];
    const csr<T, cpu> rows_of_p = to_cpu(a.slot(s));
    // split_part reads part p's rows out of a whole matrix; here the block is all there is, so
    // it gets a partition in which every row belongs to p.
    row_partition only_p;
    only_p.first.assign(parts + 1, 0);
    for (std::size_t k = static_cast<std::size_t>(p) + 1; k < only_p.first.size(); ++k)
      only_p.first[k] = rows_of_p.rows();
    blocks[s] = split_part(rows_of_p, only_p, cols, p);
  }
  // Each part tells each owner how many of its rows it needs, then which (as positions in the
  // owner's block): the owners learn what to send. The same exchange whether the parts live in
  // one process or in one process each.
  std::vector<std::vector<std::int64_t>> wanted(slots, std::vector<std::int64_t>(parts, 0));
  for (std::size_t s = 0; s < slots; ++s)
    for (std::size_t q = 0; q < parts; ++q)
      wanted[s][q] = blocks[s].halo_first[q + 1] - blocks[s].halo_first[q];
  const auto asked = exchange_counts(where, wanted);
  plan->local.resize(slots);
  plan->remote.resize(slots);
  plan->remote_rows_host.resize(slots);
  plan->remote_rows.resize(slots);
  plan->send_rows.resize(slots);
  plan->send_first.resize(slots);
  plan->send_rows_host.resize(slots);
  std::vector<device_buffer<index_t>> requests(slots);
  std::vector<part_exchange> lists(slots);
  for_each_part(where, false, [&](std::size_t s, int p) {
    const part_block<T>& block = blocks[s];
    plan->halo_first.push_back(block.halo_first);
    plan->halo_rows += static_cast<std::int64_t>(block.halo.size());
    plan->local_entries += block.local.nnz();
    plan->remote_entries += block.remote.nnz();
    std::vector<index_t> positions(block.halo.size());
    for (std::size_t q = 0; q < parts; ++q)
      for (auto h = static_cast<std::size_t>(block.halo_first[q]);
           h < static_cast<std::size_t>(block.halo_first[q + 1]); ++h)
        positions[h] = block.halo[h] - cols.begin(static_cast<index_t>(q));
    requests[s] = device_buffer<index_t>(positions);
    std::vector<index_t> first{0};
    for (std::size_t q = 0; q < parts; ++q)
      first.push_back(first.back() + static_cast<index_t>(asked[s][q]));
    plan->send_rows[s] = device_buffer<index_t>(static_cast<std::size_t>(first.back()));
    lists[s].part = p;
    for (std::size_t q = 0; q < parts; ++q) {
      const auto peer = static_cast<int>(q);
      if (wanted[s][q])
        lists[s].sends.push_back({peer, requests[s].data() + block.halo_first[q],
                                  static_cast<std::size_t>(wanted[s][q]) * sizeof(index_t)});
      if (asked[s][q])
        lists[s].receives.push_back({peer, plan->send_rows[s].data() + first[q],
                                     static_cast<std::size_t>(asked[s][q]) * sizeof(index_t)});
    }
    plan->send_first[s] = std::move(first);
    plan->local[s] = to_gpu(block.local);
    // Only the rows that read the halo: the remote pass then touches those rows of Y alone
    // (a stencil's boundary planes, not the whole block).
    const csr<T, cpu>& all = block.remote;
    std::vector<index_t> which, ptr{0}, col;
    std::vector<T> val;
    for (index_t r = 0; r < all.rows(); ++r) {
      const auto from = all.row_ptr()[static_cast<std::size_t>(r)];
      const auto to = all.row_ptr()[static_cast<std::size_t>(r) + 1];
      if (from == to) continue;
      which.push_back(r);
      col.insert(col.end(), all.col_idx().begin() + from, all.col_idx().begin() + to);
      val.insert(val.end(), all.values().begin() + from, all.values().begin() + to);
      ptr.push_back(static_cast<index_t>(col.size()));
    }
    plan->remote[s] = to_gpu(csr<T, cpu>(unchecked, static_cast<index_t>(which.size()), all.cols(),
                                         std::move(ptr), std::move(col), std::move(val)));
    plan->remote_rows[s] = device_buffer<index_t>(which);
    plan->remote_rows_host[s] = std::move(which);
  });
  post_exchange(where, lists);
  join_exchange(where);
  synchronize(where);
  for (std::size_t s = 0; s < slots; ++s)
    plan->send_rows_host[s] = plan->send_rows[s].to_host();
  return plan;
}

/// Rows `rows` (indices into b, on b's GPU) of gpu csr `b` as one csr, in that order, on
/// context `ctx` (b's): the rows of B_p that other parts' SpGEMM reads. One synchronisation
/// (the entries' count).
template <scalar T>
csr<T, gpu> gather_csr_rows(context& ctx, const csr<T, gpu>& b,
                            const device_buffer<index_t>& rows) {
  const auto count = static_cast<index_t>(rows.size());
  device_buffer<index_t> ptr(static_cast<std::size_t>(count) + 1, ctx);
  const std::int64_t entries =
      gather_row_pointers(ctx, b.row_ptr().data(), rows.data(), count, ptr.data());
  device_buffer<index_t> col(static_cast<std::size_t>(entries), ctx);
  device_buffer<T> val(static_cast<std::size_t>(entries), ctx);
  gather_row_entries(ctx, b.row_ptr().data(), b.col_idx().data(), b.values().data(), rows.data(),
                     count, ptr.data(), col.data(), val.data());
  return csr<T, gpu>(unchecked, count, b.cols(), std::move(ptr), std::move(col), std::move(val));
}

/// One number per part of the whole cluster from one per part of this process (the entries of
/// each part of a csr): read directly when this process drives every part, else exchanged.
inline std::vector<std::int64_t> all_part_counts(const cluster& where,
                                                 const std::vector<std::int64_t>& mine) {
  const auto parts = static_cast<std::size_t>(where.size());
  std::vector<std::int64_t> all(parts, 0);
  if (where.single_process()) {
    for (std::size_t s = 0; s < mine.size(); ++s)
      all[static_cast<std::size_t>(where.my_parts()[s])] = mine[s];
    return all;
  }
  std::vector<std::vector<std::int64_t>> to;
  for (const auto n : mine)
    to.emplace_back(parts, n);
  return exchange_counts(where, to).front();
}

inline void require_same_cluster(const cluster& a, const cluster& b, const char* what) {
  if (!(a == b))
    throw error(std::string(what) + ": the operands belong to different clusters (" + a.describe() +
                "; " + b.describe() + "); distribute them onto one spade::cluster object");
}

}  // namespace detail

template <scalar T>
const detail::halo_plan<T>& csr<T, multi_gpu>::halo_for(const detail::row_partition& cols) const {
  if (!halo_ || !(halo_->cols == cols)) halo_ = detail::make_halo_plan(*this, cols);
  return *halo_;
}

// ---- distribute, gather --------------------------------------------------------------------

namespace detail {

/// `rows` if given, else `count` rows in equal blocks over `where`; checked against both.
inline row_partition split_for(const row_partition* rows, index_t count, const cluster& where) {
  row_partition split =
      rows ? *rows
           : balanced_rows(std::vector<std::int64_t>(static_cast<std::size_t>(count) + 1, 0),
                           where.size());
  if (split.rows() != count || split.parts() != where.size())
    throw dimension_mismatch("spade::distribute: a partition of " + std::to_string(split.rows()) +
                             " rows in " + std::to_string(split.parts()) + " parts for " +
                             std::to_string(count) + " rows on " + std::to_string(where.size()) +
                             " GPUs");
  return split;
}

}  // namespace detail

/// `a`'s rows split over `where`'s GPUs in contiguous blocks balanced by the modelled time of
/// A·x (detail::partition_for_products: entries, a cost per row, and a second one for rows that
/// read other parts), each block copied to its GPU; `rows` overrides the split. A gpu `a` is
/// read through the host. Throws spade::error for an empty cluster.
template <scalar T, space S>
csr<T, multi_gpu> distribute(const csr<T, S>& a, const cluster& where,
                             const detail::row_partition* rows = nullptr) {
  static_assert(!std::is_same_v<S, multi_gpu>, "spade::distribute: already distributed");
  if (where.size() == 0) throw error("spade::distribute: the cluster has no GPUs");
  if constexpr (std::is_same_v<S, gpu>) {
    return distribute(to_cpu(a), where, rows);
  } else {
    const detail::row_partition by_cost =
        rows ? detail::row_partition{} : detail::partition_for_products(a, where.size());
    const detail::row_partition split = detail::split_for(rows ? rows : &by_cost, a.rows(), where);
    std::vector<csr<T, gpu>> parts(where.my_parts().size());
    std::vector<std::int64_t> nnz(static_cast<std::size_t>(where.size()));
    const auto& ptr = a.row_ptr();
    for (int p = 0; p < where.size(); ++p)
      nnz[static_cast<std::size_t>(p)] = ptr[static_cast<std::size_t>(split.end(p))] -
                                         ptr[static_cast<std::size_t>(split.begin(p))];
    detail::for_each_part(where, false, [&](std::size_t slot, int p) {
      parts[slot] = to_gpu(spade::eval(spade::rows(a, split.begin(p), split.size(p))));
    });
    return csr<T, multi_gpu>(where, split, a.cols(), std::move(parts), std::move(nnz));
  }
}

/// `x`'s elements split over `where`'s GPUs in equal contiguous blocks (or by `rows`).
template <storage_scalar T, space S>
vector<T, multi_gpu> distribute(const vector<T, S>& x, const cluster& where,
                                const detail::row_partition* rows = nullptr) {
  static_assert(!std::is_same_v<S, multi_gpu>, "spade::distribute: already distributed");
  if (where.size() == 0) throw error("spade::distribute: the cluster has no GPUs");
  if constexpr (std::is_same_v<S, gpu>) {
    return distribute(to_cpu(x), where, rows);
  } else {
    const detail::row_partition split = detail::split_for(rows, x.size(), where);
    std::vector<vector<T, gpu>> parts(where.my_parts().size());
    detail::for_each_part(where, false, [&](std::size_t slot, int p) {
      parts[slot] = to_gpu(vector<T, cpu>(spade::segment(x, split.begin(p), split.size(p))));
    });
    return vector<T, multi_gpu>(where, split, std::move(parts));
  }
}

/// `d`'s rows split over `where`'s GPUs in equal contiguous blocks (or by `rows`), layout kept.
template <storage_scalar T, space S, layout L>
dense<T, multi_gpu, L> distribute(const dense<T, S, L>& d, const cluster& where,
                                  const detail::row_partition* rows = nullptr) {
  static_assert(!std::is_same_v<S, multi_gpu>, "spade::distribute: already distributed");
  if (where.size() == 0) throw error("spade::distribute: the cluster has no GPUs");
  if constexpr (std::is_same_v<S, gpu>) {
    return distribute(to_cpu(d), where, rows);
  } else {
    const detail::row_partition split = detail::split_for(rows, d.rows(), where);
    std::vector<dense<T, gpu, L>> parts(where.my_parts().size());
    detail::for_each_part(where, false, [&](std::size_t slot, int p) {
      parts[slot] =
          to_gpu(dense<T, cpu, L>(spade::block(d, split.begin(p), 0, split.size(p), d.cols())));
    });
    return dense<T, multi_gpu, L>(where, split, d.cols(), std::move(parts));
  }
}

/// `x` split like `like`'s rows (a multi_gpu object of as many rows): operands of one
/// element-wise expression must be split alike, e.g. the vectors of a solver and its matrix.
template <class X, class Like>
requires std::is_same_v<typename Like::space_type, multi_gpu>
auto distribute(const X& x, const Like& like) {
  return distribute(x, like.cluster(), &like.partition());
}

namespace detail {

/// Every part's array on the host, in part order: `mine[slot]` is `counts[part]` elements of
/// device memory of this process's slot-th part. With parts in other processes, every part
/// sends its array to every other (an all-gather over NCCL); collective over the cluster.
template <class U>
std::vector<std::vector<U>> all_parts_on_host(const cluster& where,
                                              const std::vector<const U*>& mine,
                                              const std::vector<std::size_t>& counts) {
  const auto parts = static_cast<std::size_t>(where.size());
  std::vector<std::vector<U>> all(parts);
  std::vector<device_buffer<U>> received(parts);
  std::vector<part_exchange> exchange;
  for (std::size_t s = 0; s < mine.size(); ++s) {
    const int part = where.my_parts()[s];
    const auto p = static_cast<std::size_t>(part);
    all[p].resize(counts[p]);
    if (counts[p])
      where.context_of(part).copy_to_host(all[p].data(), mine[s], counts[p] * sizeof(U));
    if (where.single_process()) continue;
    part_exchange x;
    x.part = part;
    context_scope scope(where.context_of(part));
    for (std::size_t q = 0; q < parts; ++q) {
      if (q == p) continue;
      x.sends.push_back({static_cast<int>(q), mine[s], counts[p] * sizeof(U)});
      if (s == 0) {  // the first part of this process receives everybody else's
        received[q] = device_buffer<U>(counts[q]);
        x.receives.push_back({static_cast<int>(q), received[q].data(), counts[q] * sizeof(U)});
      }
    }
    exchange.push_back(std::move(x));
  }
  if (where.single_process()) return all;
  post_exchange(where, exchange);
  join_exchange(where);
  synchronize(where);
  for (std::size_t q = 0; q < parts; ++q)
    if (received[q].size()) all[q] = received[q].to_host();
  return all;
}

}  // namespace detail

/// The whole of a multi_gpu object, on the host: its parts copied back and stacked. With parts
/// in other processes (cluster::from_mpi) every process gets the whole: collective.
template <scalar T>
csr<T, cpu> gather(const csr<T, multi_gpu>& a) {
  const cluster& where = a.cluster();
  const auto parts = static_cast<std::size_t>(where.size());
  std::vector<const index_t*> ptr, col;
  std::vector<const T*> val;
  for (std::size_t s = 0; s < a.local_parts(); ++s) {
    ptr.push_back(a.slot(s).row_ptr().data());
    col.push_back(a.slot(s).col_idx().data());
    val.push_back(a.slot(s).values().data());
  }
  // Each part's entries as they are now (a part may have been written through part(p)).
  std::vector<std::int64_t> mine;
  for (std::size_t s = 0; s < a.local_parts(); ++s)
    mine.push_back(a.slot(s).nnz());
  const std::vector<std::int64_t> counts = detail::all_part_counts(where, mine);
  std::vector<std::size_t> ptr_count(parts), nnz(parts);
  for (std::size_t p = 0; p < parts; ++p) {
    const index_t rows = a.partition().size(static_cast<index_t>(p));
    nnz[p] = static_cast<std::size_t>(counts[p]);
    // An empty part may hold no row pointers at all.
    ptr_count[p] = rows == 0 ? 0 : static_cast<std::size_t>(rows) + 1;
  }
  const auto ptrs = detail::all_parts_on_host(where, ptr, ptr_count);
  const auto cols = detail::all_parts_on_host(where, col, nnz);
  const auto vals = detail::all_parts_on_host(where, val, nnz);
  std::vector<csr<T, cpu>> pieces;
  for (std::size_t p = 0; p < parts; ++p) {
    const index_t rows = a.partition().size(static_cast<index_t>(p));
    std::vector<index_t> row_ptr = ptrs[p];
    if (row_ptr.empty()) row_ptr.assign(static_cast<std::size_t>(rows) + 1, 0);
    pieces.emplace_back(unchecked, rows, a.cols(), std::move(row_ptr),
                        std::vector<index_t>(cols[p]), std::vector<T>(vals[p]));
  }
  return detail::stack_rows(pieces, a.cols());
}
template <storage_scalar T>
vector<T, cpu> gather(const vector<T, multi_gpu>& x) {
  const cluster& where = x.cluster();
  std::vector<const T*> mine;
  for (std::size_t s = 0; s < x.local_parts(); ++s)
    mine.push_back(x.slot(s).values().data());
  std::vector<std::size_t> counts;
  for (index_t p = 0; p < where.size(); ++p)
    counts.push_back(static_cast<std::size_t>(x.partition().size(p)));
  std::vector<T> all;
  all.reserve(static_cast<std::size_t>(x.size()));
  for (const auto& piece : detail::all_parts_on_host(where, mine, counts))
    all.insert(all.end(), piece.begin(), piece.end());
  return vector<T, cpu>(std::move(all));
}
template <storage_scalar T, layout L>
dense<T, cpu, L> gather(const dense<T, multi_gpu, L>& d) {
  const cluster& where = d.cluster();
  std::vector<const T*> mine;
  for (std::size_t s = 0; s < d.local_parts(); ++s)
    mine.push_back(d.slot(s).values().data());
  std::vector<std::size_t> counts;
  for (index_t p = 0; p < where.size(); ++p)
    counts.push_back(static_cast<std::size_t>(d.partition().size(p)) *
                     static_cast<std::size_t>(d.cols()));
  auto pieces = detail::all_parts_on_host(where, mine, counts);
  dense<T, cpu, L> all(d.rows(), d.cols());
  for (index_t p = 0; p < where.size(); ++p) {
    const index_t n = d.partition().size(p);
    spade::block(all, d.partition().begin(p), 0, n, d.cols()) =
        dense<T, cpu, L>(unchecked, n, d.cols(), std::move(pieces[static_cast<std::size_t>(p)]));
  }
  return all;
}

/// to_cpu of a multi_gpu object is its gather (so spade::reference checks distributed results).
template <scalar T>
csr<T, cpu> to_cpu(const csr<T, multi_gpu>& a) {
  return gather(a);
}
template <storage_scalar T>
vector<T, cpu> to_cpu(const vector<T, multi_gpu>& x) {
  return gather(x);
}
template <storage_scalar T, layout L>
dense<T, cpu, L> to_cpu(const dense<T, multi_gpu, L>& d) {
  return gather(d);
}

namespace detail {

// ---- products ------------------------------------------------------------------------------

template <class X>
index_t width_of(const X& x) {
  if constexpr (is_vector_v<X>)
    return 1;
  else
    return x.cols();
}

template <class X>
constexpr bool row_major_rows() {
  if constexpr (is_vector_v<X>)
    return true;
  else
    return std::is_same_v<typename X::layout_type, row_major>;
}

/// The halo received by a part, as the gpu operand remote_p multiplies.
template <class X, class T>
auto halo_operand(device_buffer<T> values, index_t rows, index_t width) {
  if constexpr (is_vector_v<X>)
    return vector<T, gpu>(std::move(values));
  else
    return dense<T, gpu, row_major>(unchecked, rows, width, std::move(values));
}

/// The steps of a halo exchange of rows `width` elements wide, for part slot s (part p), shared
/// by the product and spade-bench's time split.
/// What part p sends (the rows packed in `sent`, by receiver) and receives (into `received`, by
/// sender).
template <scalar T>
part_exchange halo_transfers(const halo_plan<T>& plan, std::size_t s, int p, int parts,
                             index_t width, const T* sent, T* received) {
  const auto row_bytes = static_cast<std::size_t>(width) * sizeof(T);
  const auto w = static_cast<std::size_t>(width);
  part_exchange x;
  x.part = p;
  for (std::size_t q = 0; q < static_cast<std::size_t>(parts); ++q) {
    const auto out = static_cast<std::size_t>(plan.send_first[s][q]);
    const auto out_count = static_cast<std::size_t>(plan.send_first[s][q + 1]) - out;
    const auto in = static_cast<std::size_t>(plan.halo_first[s][q]);
    const auto in_count = static_cast<std::size_t>(plan.halo_first[s][q + 1]) - in;
    if (out_count) x.sends.push_back({static_cast<int>(q), sent + out * w, out_count * row_bytes});
    if (in_count)
      x.receives.push_back({static_cast<int>(q), received + in * w, in_count * row_bytes});
  }
  return x;
}

/// Packs the rows of X's block that other parts read into `sent` (communication stream).
template <scalar T, class X>
void pack_halo(const halo_plan<T>& plan, const cluster& where, std::size_t s, int p, const X& x,
               T* sent) {
  pack_rows(where, p, x.slot(s).values().data(), x.partition().size(p), width_of(x),
            row_major_rows<X>(), plan.send_rows[s].data(), plan.send_size(s), sent);
}

/// y_p += remote_p · halo over the rows of part p that read the halo (scattered into them).
template <scalar T, class Halo, class Part>
void add_remote(const halo_plan<T>& plan, const cluster& where, std::size_t s, int p,
                const Halo& halo, index_t width, Part& y) {
  if (plan.remote[s].rows() == 0) return;
  const Halo partial = plan.remote[s] * halo;
  scatter_add_rows(where.context_of(p), partial.values().data(), plan.remote[s].rows(), width,
                   plan.remote_rows[s].data(), y.values().data(), plan.local[s].rows(),
                   row_major_rows<Part>());
}

/// How each part runs a product A·X whose entries read rows of X held by other parts.
enum class halo_product {
  automatic,   // stacked_product_preferred decides
  overlapped,  // local_p · X_p during the exchange, then remote_p · halo_p added into its rows
  stacked,     // after the exchange, A's rows renumbered (extended) times X_p stacked over the
               // halo: each row visited once, nothing overlaps the exchange
};

// When the stacked path wins, measured on 2 x H200 (docs/benchmarks/multi-stacked-2026-11-28.md):
// on R-MAT, where half of A's entries read the other part's rows, SpMM ran 6-14 % faster stacked
// with rows of X of 32, 64 and 128 bytes (8 and 16 columns; 16 fp64 columns: 2.32 against
// 2.66 ms), tied at 128 bytes of 32 fp32 columns (2.64 against 2.67 ms), and ran 8 % slower with
// 32 fp64 columns (256 bytes: the exchange it no longer hides grows with the row, the second
// pass it saves does not); SpMV ran 12-20 % slower (a row pass costs little next to the exposed
// exchange). On a stencil (under 2 % of entries remote) SpMM8 tied and SpMV lost 6 %.
inline constexpr index_t stacked_min_width = 2;
inline constexpr std::int64_t stacked_max_row_bytes = 128;
inline constexpr double stacked_min_remote_share = 0.25;

/// Whether a product of width `width` over `plan` runs stacked rather than overlapped: X's rows
/// narrow but not single values, and at least a quarter of A's entries (this process's parts)
/// reading other parts' rows. Processes may choose differently: both paths post the same
/// exchange.
template <scalar T>
bool stacked_product_preferred(const halo_plan<T>& plan, index_t width) {
  const std::int64_t entries = plan.local_entries + plan.remote_entries;
  return width >= stacked_min_width &&
         static_cast<std::int64_t>(width) * static_cast<std::int64_t>(sizeof(T)) <=
             stacked_max_row_bytes &&
         entries > 0 &&
         static_cast<double>(plan.remote_entries) >=
             stacked_min_remote_share * static_cast<double>(entries) &&
         !plan.extended_failed();
}

/// An all-zero part of Y = A·X for a part whose product has nothing to multiply.
template <class Y>
typename Y::part_type empty_product_part(index_t rows, index_t width) {
  if constexpr (is_vector_v<Y>)
    return typename Y::part_type(rows);
  else
    return typename Y::part_type(rows, width);
}

/// Ends either halo path: frees the send buffers (on each context stream, which now waits for
/// the exchange) and makes Y from the parts, split like A's rows.
template <scalar T, class Y>
void finish_halo_product(const csr<T, multi_gpu>& a, index_t width,
                         std::vector<device_buffer<T>>& sent,
                         std::vector<typename Y::part_type>& result, Y& y) {
  const cluster& where = a.cluster();
  for_each_part(where, false, [&](std::size_t s, int) { sent[s] = device_buffer<T>(); });
  if constexpr (is_vector_v<Y>)
    y = Y(where, a.partition(), std::move(result));
  else
    y = Y(where, a.partition(), width, std::move(result));
}

/// Y = A·X over the stacked path (halo_product::stacked), for a vector or row-major X;
/// `extended` is plan.extended(), A's parts renumbered over X_p stacked on the halo.
template <scalar T, class X, class Y>
void stacked_spmm(const csr<T, multi_gpu>& a, const halo_plan<T>& plan,
                  const std::vector<csr<T, gpu>>& extended, const X& x, Y& y) {
  static_assert(row_major_rows<X>(), "stacked_spmm: X's rows must be contiguous");
  const cluster& where = a.cluster();
  const index_t width = width_of(x);
  const auto w = static_cast<std::size_t>(width);
  const std::size_t slots = a.local_parts();
  std::vector<device_buffer<T>> sent(slots), stack(slots);
  std::vector<std::size_t> own(slots);  // X_p's values, at the head of the stack
  std::vector<part_exchange> exchange(slots);
  for_each_part(where, false, [&](std::size_t s, int p) {
    own[s] = static_cast<std::size_t>(x.partition().size(p)) * w;
    sent[s] = device_buffer<T>(static_cast<std::size_t>(plan.send_size(s)) * w);
    stack[s] = device_buffer<T>(own[s] + static_cast<std::size_t>(plan.halo_size(s)) * w);
    exchange[s] =
        halo_transfers(plan, s, p, where.size(), width, sent[s].data(), stack[s].data() + own[s]);
  });
  // The exchange waits for the buffers and X's producers only; X_p's copy onto the stack runs
  // beside it on the context stream.
  order_communication(where);
  for_each_part(where, false, [&](std::size_t s, int p) {
    if (own[s])
      where.context_of(p).copy_on_device(stack[s].data(), x.slot(s).values().data(),
                                         own[s] * sizeof(T));
  });
  for (std::size_t s = 0; s < slots; ++s)
    pack_halo(plan, where, s, where.my_parts()[s], x, sent[s].data());
  post_exchange(where, exchange, /*after_context_work=*/false);
  join_exchange(where);
  std::vector<typename Y::part_type> result(slots);
  for_each_part(where, false, [&](std::size_t s, int p) {
    const index_t rows = a.partition().size(p);
    const index_t stack_rows = x.partition().size(p) + plan.halo_size(s);
    if (rows == 0 || stack_rows == 0)
      result[s] = empty_product_part<Y>(rows, width);
    else
      result[s] = extended[s] * halo_operand<X>(std::move(stack[s]), stack_rows, width);
  });
  finish_halo_product(a, width, sent, result, y);
}

/// Y = A·X for a multi_gpu csr A and a multi_gpu vector or dense X. Overlapped: each part packs
/// the rows of its block of X that others read, one NCCL group exchanges them while each part
/// computes local_p · X_p, then each adds remote_p · halo_p. Stacked (for a vector or row-major
/// X, where `how` or stacked_product_preferred asks): see stacked_spmm. Y is split like A's rows.
template <scalar T, class X, class Y>
void distributed_spmm(const csr<T, multi_gpu>& a, const X& x, Y& y,
                      halo_product how = halo_product::automatic) {
  require_same_cluster(a.cluster(), x.cluster(), "multi_gpu product");
  if (a.cols() != x.partition().rows())
    throw dimension_mismatch("multi_gpu product: lhs is " + expr::shape_text(a.rows(), a.cols()) +
                             ", rhs has " + std::to_string(x.partition().rows()) + " rows");
  const cluster& where = a.cluster();
  const halo_plan<T>& plan = a.halo_for(x.partition());
  const index_t width = width_of(x);
  const std::size_t slots = a.local_parts();
  if constexpr (row_major_rows<X>()) {
    const std::vector<csr<T, gpu>>* extended = nullptr;  // the renumbered copy, made once
    if (how == halo_product::stacked) {
      extended = &plan.extended();
    } else if (how == halo_product::automatic && stacked_product_preferred(plan, width)) {
      try {
        extended = &plan.extended();
      } catch (const out_of_memory&) {
        // No room for the copy on some part: the overlapped path needs none.
      }
    }
    if (extended) {
      stacked_spmm(a, plan, *extended, x, y);
      return;
    }
  }
  std::vector<device_buffer<T>> sent(slots), received(slots);
  std::vector<part_exchange> exchange(slots);
  for_each_part(where, false, [&](std::size_t s, int p) {
    sent[s] = device_buffer<T>(static_cast<std::size_t>(plan.send_size(s)) * width);
    received[s] = device_buffer<T>(static_cast<std::size_t>(plan.halo_size(s)) * width);
    exchange[s] =
        halo_transfers(plan, s, p, where.size(), width, sent[s].data(), received[s].data());
  });
  // The local products go first, so each GPU starts at once; the packing and the exchange run
  // beside them on the (higher-priority) communication streams, ordered after the buffers'
  // allocation and X's producers only.
  order_communication(where);
  std::vector<typename Y::part_type> result(slots);
  for_each_part(where, false, [&](std::size_t s, int p) {
    const index_t rows = a.partition().size(p);
    if (plan.local[s].cols() == 0 || rows == 0)
      result[s] = empty_product_part<Y>(rows, width);
    else
      result[s] = plan.local[s] * x.slot(s);
  });
  for (std::size_t s = 0; s < slots; ++s)
    pack_halo(plan, where, s, where.my_parts()[s], x, sent[s].data());
  post_exchange(where, exchange, /*after_context_work=*/false);
  join_exchange(where);
  for_each_part(where, false, [&](std::size_t s, int p) {
    if (plan.halo_size(s) == 0) return;
    add_remote(plan, where, s, p, halo_operand<X>(std::move(received[s]), plan.halo_size(s), width),
               width, result[s]);
  });
  finish_halo_product(a, width, sent, result, y);
}

/// C = A·B for multi_gpu csr A and B (B's rows split like A's columns are read): each part
/// receives the rows of B its entries name from their owners (each owner gathers them from its
/// block, gather_csr_rows), stacked under its own block of B, and multiplies its rows of
/// A, renumbered onto that stack (halo_plan::extended), by it: one single-GPU SpGEMM per part.
template <scalar T>
void distributed_spgemm(const csr<T, multi_gpu>& a, const csr<T, multi_gpu>& b,
                        csr<T, multi_gpu>& c) {
  require_same_cluster(a.cluster(), b.cluster(), "multi_gpu product");
  if (a.cols() != b.rows())
    throw dimension_mismatch("multi_gpu product: lhs is " + expr::shape_text(a.rows(), a.cols()) +
                             ", rhs is " + expr::shape_text(b.rows(), b.cols()) +
                             " (lhs columns must equal rhs rows)");
  const cluster& where = a.cluster();
  const halo_plan<T>& plan = a.halo_for(b.partition());
  const std::size_t slots = a.local_parts();
  // Whether any part of the cluster reads another's rows: decided over every process, so that all
  // take the same path (the exchanges below are collective).
  std::vector<double> halo_sizes;
  for (std::size_t s = 0; s < slots; ++s)
    halo_sizes.push_back(static_cast<double>(plan.halo_size(s)));
  const bool any_halo = combine_parts(where, halo_sizes, part_combine::max) > 0;
  std::vector<csr<T, gpu>> result(slots);
  std::vector<std::int64_t> nnz(slots, 0);
  if (!any_halo) {
    for_each_part(where, true, [&](std::size_t s, int part) {
      const index_t rows = a.partition().size(part);
      result[s] = rows == 0 || plan.local[s].cols() == 0 ? csr<T, gpu>(rows, b.cols())
                                                         : csr<T, gpu>(plan.local[s] * b.slot(s));
      nnz[s] = result[s].nnz();
    });
    c = csr<T, multi_gpu>(where, a.partition(), b.cols(), std::move(result),
                          all_part_counts(where, nnz));
    return;
  }
  const auto& extended = plan.extended();
  const auto parts = static_cast<std::size_t>(where.size());
  // What each part sends: the rows of its block of B that others name, as one csr.
  std::vector<csr<T, gpu>> picked(slots);
  // [slot][2q]: the entries sent to part q, [slot][2q + 1]: where their row pointers start.
  std::vector<std::vector<std::int64_t>> sent(slots, std::vector<std::int64_t>(2 * parts, 0));
  for_each_part(where, true, [&](std::size_t s, int part) {
    if (plan.send_size(s) == 0) return;
    picked[s] = gather_csr_rows(where.context_of(part), b.slot(s), plan.send_rows[s]);
    // Rows for one peer start at 0 and end at the whole (known): read the pointers back only
    // where several peers share them.
    const index_t count = plan.send_size(s);
    bool one_peer = true;
    for (std::size_t q = 0; q <= parts; ++q)
      one_peer = one_peer && (plan.send_first[s][q] == 0 || plan.send_first[s][q] == count);
    const std::vector<index_t> ptr =
        one_peer ? std::vector<index_t>() : picked[s].row_ptr().to_host();
    const auto pointer = [&](index_t row) -> std::int64_t {
      if (one_peer) return row == 0 ? 0 : picked[s].nnz();
      return ptr[static_cast<std::size_t>(row)];
    };
    for (std::size_t q = 0; q < parts; ++q) {
      const std::int64_t first = pointer(plan.send_first[s][q]);
      sent[s][2 * q] = pointer(plan.send_first[s][q + 1]) - first;
      sent[s][2 * q + 1] = first;
    }
  });
  // Each receiver learns how many entries come from each sender and where the sender's row
  // pointers start (one exchange), and lays out its stack: its own block of B, then the rows
  // from part 0, 1, ...
  const auto received = exchange_counts(where, sent);
  const auto entries_of = [](const auto& counts, std::size_t s, std::size_t q) {
    return counts[s][2 * q];
  };
  const auto base_of = [](const auto& counts, std::size_t s, std::size_t q) {
    return counts[s][2 * q + 1];
  };
  std::vector<device_buffer<index_t>> stack_ptr(slots), stack_col(slots);
  std::vector<device_buffer<T>> stack_val(slots);
  std::vector<std::vector<std::int64_t>> stack_base(slots);  // [slot][q] first entry from q
  std::vector<part_exchange> exchange(slots);
  for_each_part(where, false, [&](std::size_t s, int part) {
    const csr<T, gpu>& own = b.slot(s);
    const auto own_rows = static_cast<std::size_t>(own.rows());
    const auto own_nnz = static_cast<std::size_t>(own.nnz());
    std::int64_t total = static_cast<std::int64_t>(own_nnz);
    stack_base[s].assign(parts, 0);
    for (std::size_t q = 0; q < parts; ++q) {
      stack_base[s][q] = total;
      total += entries_of(received, s, q);
    }
    context& ctx = where.context_of(part);
    stack_ptr[s] =
        device_buffer<index_t>(own_rows + static_cast<std::size_t>(plan.halo_size(s)) + 1);
    stack_col[s] = device_buffer<index_t>(static_cast<std::size_t>(total));
    stack_val[s] = device_buffer<T>(static_cast<std::size_t>(total));
    if (own.row_ptr().size())
      ctx.copy_on_device(stack_ptr[s].data(), own.row_ptr().data(),
                         (own_rows + 1) * sizeof(index_t));
    else
      ctx.fill_zero(stack_ptr[s].data(), sizeof(index_t));
    ctx.copy_on_device(stack_col[s].data(), own.col_idx().data(), own_nnz * sizeof(index_t));
    ctx.copy_on_device(stack_val[s].data(), own.values().data(), own_nnz * sizeof(T));
    exchange[s].part = part;
    for (std::size_t q = 0; q < parts; ++q) {
      const int peer = static_cast<int>(q);
      // To q: the rows it asked for (send_first), their pointers, columns and values.
      const auto out_rows =
          static_cast<std::size_t>(plan.send_first[s][q + 1] - plan.send_first[s][q]);
      if (out_rows) {
        const auto first_row = static_cast<std::size_t>(plan.send_first[s][q]);
        const auto from = static_cast<std::size_t>(base_of(sent, s, q));
        const auto n = static_cast<std::size_t>(entries_of(sent, s, q));
        exchange[s].sends.push_back(
            {peer, picked[s].row_ptr().data() + first_row + 1, out_rows * sizeof(index_t)});
        exchange[s].sends.push_back({peer, picked[s].col_idx().data() + from, n * sizeof(index_t)});
        exchange[s].sends.push_back({peer, picked[s].values().data() + from, n * sizeof(T)});
      }
      // From q: the rows of its block this part's halo lists, in the same order.
      const auto in_rows =
          static_cast<std::size_t>(plan.halo_first[s][q + 1] - plan.halo_first[s][q]);
      if (in_rows) {
        const auto at_row = own_rows + static_cast<std::size_t>(plan.halo_first[s][q]);
        const auto at = static_cast<std::size_t>(stack_base[s][q]);
        const auto n = static_cast<std::size_t>(entries_of(received, s, q));
        exchange[s].receives.push_back(
            {peer, stack_ptr[s].data() + at_row + 1, in_rows * sizeof(index_t)});
        exchange[s].receives.push_back({peer, stack_col[s].data() + at, n * sizeof(index_t)});
        exchange[s].receives.push_back({peer, stack_val[s].data() + at, n * sizeof(T)});
      }
    }
  });
  post_exchange(where, exchange);
  join_exchange(where);
  for_each_part(where, true, [&](std::size_t s, int part) {
    context& ctx = where.context_of(part);
    const index_t own_rows = b.slot(s).rows();
    // Received row pointers count from the sender's first sent entry; rebase them onto the
    // stack.
    for (std::size_t q = 0; q < parts; ++q) {
      const auto rows = static_cast<std::size_t>(plan.halo_first[s][q + 1] - plan.halo_first[s][q]);
      if (rows == 0) continue;
      add_to_indices(ctx, stack_ptr[s].data() + own_rows + plan.halo_first[s][q] + 1, rows,
                     stack_base[s][q] - base_of(received, s, q));
    }
    const index_t rows = a.partition().size(part);
    const index_t stack_rows = own_rows + plan.halo_size(s);
    if (rows == 0 || stack_rows == 0) {
      result[s] = csr<T, gpu>(rows, b.cols());
    } else {
      const csr<T, gpu> stack(unchecked, stack_rows, b.cols(), std::move(stack_ptr[s]),
                              std::move(stack_col[s]), std::move(stack_val[s]));
      result[s] = extended[s] * stack;
    }
    nnz[s] = result[s].nnz();
  });
  for_each_part(where, false, [&](std::size_t s, int) { picked[s] = csr<T, gpu>(); });
  c = csr<T, multi_gpu>(where, a.partition(), b.cols(), std::move(result),
                        all_part_counts(where, nnz));
}

// ---- transposes: an all-to-all of the entries ------------------------------------------------

/// C = Aᵀ for a multi_gpu csr A, C's rows split by transpose_partition (like A's when A is
/// square). Part p transposes its block (device::transpose: A.cols() × its rows, columns local);
/// the rows of that transpose that part q owns are one contiguous slice, which p sends to q
/// (row pointers, columns, values: one NCCL group, after one exchange of the slices' sizes); q
/// stacks the slices in part order, moves each slice's columns to A's row numbers, and gathers
/// the stack's rows interleaved (interleaved_rows), which merges them with the columns still
/// sorted. Every entry moves once; a cluster of one copies its slice locally, through the same
/// merge. Values are copied, never computed, so Aᵀ is exact bit for bit (NaN, −0, stored zeros).
template <scalar T>
void distributed_transpose(const csr<T, multi_gpu>& a, csr<T, multi_gpu>& c) {
  const cluster& where = a.cluster();
  const auto parts = static_cast<std::size_t>(where.size());
  const std::size_t slots = a.local_parts();
  const row_partition& from = a.partition();  // A's rows: the columns of Aᵀ
  const row_partition to = transpose_partition(from, a.cols());
  std::vector<csr<T, gpu>> flipped(slots);
  // [slot][2q]: entries sent to part q, [slot][2q + 1]: the first of them (its row pointer).
  std::vector<std::vector<std::int64_t>> sent(slots, std::vector<std::int64_t>(2 * parts, 0));
  // On parallel host threads: each part reads its slices' bounds back, and below each part's
  // merge reads its entry count back.
  for_each_part(where, true, [&](std::size_t s, int me) {
    flipped[s] = device::transpose(a.slot(s));
    context& ctx = where.context_of(me);
    std::vector<index_t> at(parts + 1, 0);
    for (std::size_t q = 0; q <= parts; ++q)
      ctx.copy_to_host(&at[q], flipped[s].row_ptr().data() + to.first[q], sizeof(index_t));
    for (std::size_t q = 0; q < parts; ++q) {
      sent[s][2 * q] = at[q + 1] - at[q];
      sent[s][2 * q + 1] = at[q];
    }
  });
  const auto received = exchange_counts(where, sent);
  // A part of C is a csr of 32-bit offsets, and its merge orders parts × rows stacked rows; C's
  // rows are split like A's, not by C's entries, so a part can outgrow them where A's parts fit.
  // Checked over the whole cluster before anything moves, so that every part throws together.
  std::vector<double> sizes(slots, 0.0);
  for (std::size_t s = 0; s < slots; ++s) {
    std::int64_t total = 0;
    for (std::size_t p = 0; p < parts; ++p)
      total += received[s][2 * p];
    const std::int64_t stacked =
        static_cast<std::int64_t>(parts) * to.size(where.my_parts()[s]) + 1;
    sizes[s] = static_cast<double>(std::max(total, stacked));
  }
  const double largest = combine_parts(where, sizes, part_combine::max);
  if (largest > static_cast<double>(std::numeric_limits<index_t>::max()))
    throw error("transpose of a multi_gpu csr: a part of the result would hold " +
                std::to_string(static_cast<std::int64_t>(largest)) +
                " entries or stacked rows, more than a csr's 32-bit offsets take; distribute A "
                "over more GPUs, or transpose it on the host");
  std::vector<device_buffer<index_t>> stack_ptr(slots), stack_col(slots);
  std::vector<device_buffer<T>> stack_val(slots);
  std::vector<std::vector<std::int64_t>> stack_base(slots);  // [slot][p]: first entry from p
  std::vector<part_exchange> exchange(slots);
  for_each_part(where, false, [&](std::size_t s, int me) {
    const csr<T, gpu>& own = flipped[s];
    context& ctx = where.context_of(me);
    const auto rows = static_cast<std::size_t>(to.size(me));
    stack_base[s].assign(parts, 0);
    std::int64_t total = 0;
    for (std::size_t p = 0; p < parts; ++p) {
      stack_base[s][p] = total;
      total += received[s][2 * p];
    }
    stack_ptr[s] = device_buffer<index_t>(parts * rows + 1, ctx);
    stack_col[s] = device_buffer<index_t>(static_cast<std::size_t>(total), ctx);
    stack_val[s] = device_buffer<T>(static_cast<std::size_t>(total), ctx);
    ctx.fill_zero(stack_ptr[s].data(), sizeof(index_t));
    exchange[s].part = me;
    for (std::size_t q = 0; q < parts; ++q) {
      // To part q: its rows of this part's transpose.
      const std::size_t q_rows = static_cast<std::size_t>(to.size(static_cast<index_t>(q)));
      const index_t* ptr = own.row_ptr().data() + to.first[q] + 1;
      const auto first = static_cast<std::size_t>(sent[s][2 * q + 1]);
      const auto entries = static_cast<std::size_t>(sent[s][2 * q]);
      // From part q: its entries in this part's rows.
      index_t* in_ptr = stack_ptr[s].data() + q * rows + 1;
      index_t* in_col = stack_col[s].data() + stack_base[s][q];
      T* in_val = stack_val[s].data() + stack_base[s][q];
      const auto in_entries = static_cast<std::size_t>(received[s][2 * q]);
      if (static_cast<int>(q) == me) {
        if (rows) ctx.copy_on_device(in_ptr, ptr, rows * sizeof(index_t));
        if (entries) {
          ctx.copy_on_device(in_col, own.col_idx().data() + first, entries * sizeof(index_t));
          ctx.copy_on_device(in_val, own.values().data() + first, entries * sizeof(T));
        }
        continue;
      }
      const int peer = static_cast<int>(q);
      exchange[s].sends.push_back({peer, ptr, q_rows * sizeof(index_t)});
      exchange[s].sends.push_back({peer, own.col_idx().data() + first, entries * sizeof(index_t)});
      exchange[s].sends.push_back({peer, own.values().data() + first, entries * sizeof(T)});
      exchange[s].receives.push_back({peer, in_ptr, rows * sizeof(index_t)});
      exchange[s].receives.push_back({peer, in_col, in_entries * sizeof(index_t)});
      exchange[s].receives.push_back({peer, in_val, in_entries * sizeof(T)});
    }
  });
  post_exchange(where, exchange);
  join_exchange(where);
  // Waits here, under the cluster's timeout and NCCL's error checks: the merge below waits on
  // the host too, and a peer that failed must not leave it waiting for ever.
  synchronize(where);
  std::vector<csr<T, gpu>> result(slots);
  std::vector<std::int64_t> nnz(slots, 0);
  for_each_part(where, true, [&](std::size_t s, int me) {
    context& ctx = where.context_of(me);
    const index_t rows = to.size(me);
    flipped[s] = csr<T, gpu>();  // sent: free before the merge allocates
    for (std::size_t p = 0; p < parts; ++p) {
      // Received pointers count from the sender's first sent entry: rebase them onto the stack;
      // the columns are rows of part p's block: number them as A's rows.
      add_to_indices(ctx, stack_ptr[s].data() + p * static_cast<std::size_t>(rows) + 1,
                     static_cast<std::size_t>(rows), stack_base[s][p] - received[s][2 * p + 1]);
      add_to_indices(ctx, stack_col[s].data() + stack_base[s][p],
                     static_cast<std::size_t>(received[s][2 * p]),
                     from.begin(static_cast<index_t>(p)));
    }
    if (rows == 0) {
      result[s] = csr<T, gpu>(0, a.rows());
      return;
    }
    const auto slices = static_cast<index_t>(parts);
    device_buffer<index_t> order(static_cast<std::size_t>(slices) * rows, ctx);
    fill_interleaved_rows(ctx, slices, rows, order.data());
    device_buffer<index_t> gathered(static_cast<std::size_t>(slices) * rows + 1, ctx);
    const std::int64_t entries =
        gather_row_pointers(ctx, stack_ptr[s].data(), order.data(), slices * rows, gathered.data());
    device_buffer<index_t> ptr(static_cast<std::size_t>(rows) + 1, ctx);
    device_buffer<index_t> col(static_cast<std::size_t>(entries), ctx);
    device_buffer<T> val(static_cast<std::size_t>(entries), ctx);
    if (entries)
      gather_row_entries(ctx, stack_ptr[s].data(), stack_col[s].data(), stack_val[s].data(),
                         order.data(), slices * rows, gathered.data(), col.data(), val.data());
    stack_col[s] = device_buffer<index_t>();  // freed in stream order, after the gather
    stack_val[s] = device_buffer<T>();
    copy_strided(ctx, gathered.data(), parts, static_cast<std::size_t>(rows) + 1, ptr.data());
    result[s] =
        csr<T, gpu>(unchecked, rows, a.rows(), std::move(ptr), std::move(col), std::move(val));
    nnz[s] = entries;
  });
  c = csr<T, multi_gpu>(where, to, a.rows(), std::move(result), all_part_counts(where, nnz));
}

// ---- element-wise trees: the same tree over each part's blocks -------------------------------

template <class E>
inline constexpr bool is_distributed_leaf_v =
    matrix_or_vector<E>&& std::is_same_v<typename E::space_type, multi_gpu>;

template <class X>
struct unsupported_on_multi_gpu {
  static_assert(sizeof(X) == 0,
                "spade: this expression node has no multi_gpu rule yet (transposes of dense "
                "matrices, views, column scalings, column sums, diagonals, "
                "dense-times-anything and sparse_view are single-GPU only; docs/multi-gpu.md "
                "lists what runs)");
  // Converts to anything, so the static_assert above is the only error a user sees.
  template <class Y>
  operator Y() const {
    return Y{};
  }
};

/// Calls f(leaf) for every multi_gpu storage operand of e.
template <class E, class F>
void for_each_leaf(const E& e, F&& f) {
  if constexpr (is_distributed_leaf_v<E>) {
    f(e);
  } else if constexpr (matrix_or_vector<E>) {
  } else if constexpr (requires {
                         e.lhs;
                         e.rhs;
                       }) {
    for_each_leaf(e.lhs, f);
    for_each_leaf(e.rhs, f);
  } else if constexpr (requires {
                         e.diag;
                         e.inner;
                       }) {
    for_each_leaf(e.diag, f);
    for_each_leaf(e.inner, f);
  } else if constexpr (requires {
                         e.inner;
                         e.dense;
                       }) {
    for_each_leaf(e.inner, f);
    for_each_leaf(e.dense, f);
  } else if constexpr (requires { e.inner; }) {
    for_each_leaf(e.inner, f);
  }
}

/// e with every product and transpose evaluated first (into a multi_gpu temporary it then
/// holds): both need communication, the rest runs part by part.
template <class E>
decltype(auto) products_evaluated(const E& e);

template <class E>
constexpr bool holds_product() {
  if constexpr (expr::is_product_v<E> || expr::is_transposed_v<E>) {
    return true;
  } else if constexpr (matrix_or_vector<E>) {
    return false;
  } else if constexpr (requires {
                         typename E::lhs_type;
                         typename E::rhs_type;
                       }) {
    return holds_product<typename E::lhs_type>() || holds_product<typename E::rhs_type>();
  } else if constexpr (requires {
                         typename E::inner_type;
                         typename E::diag_type;
                       }) {
    return holds_product<typename E::inner_type>() || holds_product<typename E::diag_type>();
  } else if constexpr (requires {
                         typename E::inner_type;
                         typename E::dense_type;
                       }) {
    return holds_product<typename E::inner_type>() || holds_product<typename E::dense_type>();
  } else if constexpr (requires { typename E::inner_type; }) {
    return holds_product<typename E::inner_type>();
  } else {
    return false;
  }
}

template <class E>
decltype(auto) products_evaluated(const E& e) {
  if constexpr (!holds_product<E>()) {
    return (e);
  } else if constexpr (expr::is_product_v<E> || expr::is_transposed_v<E>) {
    return expr::result_t<E>(e);
  } else if constexpr (expr::is_sum_v<E>) {
    using L = decltype(products_evaluated(e.lhs));
    using R = decltype(products_evaluated(e.rhs));
    return expr::sum<L, R>(products_evaluated(e.lhs), products_evaluated(e.rhs));
  } else if constexpr (expr::is_scaled_v<E>) {
    using I = decltype(products_evaluated(e.inner));
    return expr::scaled<I>(e.factor, products_evaluated(e.inner));
  } else if constexpr (expr::is_cwise_unary_v<E>) {
    using I = decltype(products_evaluated(e.inner));
    return expr::cwise_unary<typename E::op_type, I>(e.param, products_evaluated(e.inner));
  } else if constexpr (expr::is_cwise_binary_v<E>) {
    using L = decltype(products_evaluated(e.lhs));
    using R = decltype(products_evaluated(e.rhs));
    return expr::cwise_binary<typename E::op_type, L, R>(products_evaluated(e.lhs),
                                                         products_evaluated(e.rhs));
  } else if constexpr (expr::is_cast_v<E>) {
    using I = decltype(products_evaluated(e.inner));
    return expr::cast_node<typename E::value_type, I>(products_evaluated(e.inner));
  } else {
    return unsupported_on_multi_gpu<E>{};
  }
}

/// True for a node that runs along rows (row scalings, row sums): local to each part.
template <class E>
constexpr bool by_rows() {
  if constexpr (requires { E::direction; })
    return E::direction == expr::axis::rows;
  else
    return false;
}

/// e over part `slot`'s blocks: multi_gpu leaves become references to the gpu blocks of that
/// part, the nodes stay what they are (so the single-GPU planner fuses them as usual).
template <class E>
decltype(auto) local_tree(const E& e, std::size_t slot) {
  if constexpr (is_distributed_leaf_v<E>) {
    return (e.slot(slot));
  } else if constexpr (matrix_or_vector<E>) {
    return unsupported_on_multi_gpu<E>{};  // a single-GPU operand among multi_gpu ones
  } else if constexpr (expr::is_sum_v<E>) {
    using L = decltype(local_tree(e.lhs, slot));
    using R = decltype(local_tree(e.rhs, slot));
    return expr::sum<L, R>(local_tree(e.lhs, slot), local_tree(e.rhs, slot));
  } else if constexpr (expr::is_scaled_v<E>) {
    using I = decltype(local_tree(e.inner, slot));
    return expr::scaled<I>(e.factor, local_tree(e.inner, slot));
  } else if constexpr (expr::is_cwise_unary_v<E>) {
    using I = decltype(local_tree(e.inner, slot));
    return expr::cwise_unary<typename E::op_type, I>(e.param, local_tree(e.inner, slot));
  } else if constexpr (expr::is_cwise_binary_v<E>) {
    using L = decltype(local_tree(e.lhs, slot));
    using R = decltype(local_tree(e.rhs, slot));
    return expr::cwise_binary<typename E::op_type, L, R>(local_tree(e.lhs, slot),
                                                         local_tree(e.rhs, slot));
  } else if constexpr (expr::is_cast_v<E>) {
    using I = decltype(local_tree(e.inner, slot));
    return expr::cast_node<typename E::value_type, I>(local_tree(e.inner, slot));
  } else if constexpr (expr::is_pattern_intersection_v<E>) {
    using L = decltype(local_tree(e.lhs, slot));
    using R = decltype(local_tree(e.rhs, slot));
    return expr::pattern_intersection<L, R>(local_tree(e.lhs, slot), local_tree(e.rhs, slot));
  } else if constexpr (expr::is_masked_product_v<E> && !expr::is_sddmm_v<E>) {
    using S = decltype(local_tree(e.inner, slot));
    using D = decltype(local_tree(e.dense, slot));
    return expr::masked_product<S, D>(local_tree(e.inner, slot), local_tree(e.dense, slot));
  } else if constexpr (expr::is_diagonal_scaled_v<E> && by_rows<E>()) {
    using V = decltype(local_tree(e.diag, slot));
    using I = decltype(local_tree(e.inner, slot));
    return expr::diagonal_scaled<expr::axis::rows, V, I>(local_tree(e.diag, slot),
                                                         local_tree(e.inner, slot));
  } else if constexpr (expr::is_axis_sum_v<E> && by_rows<E>()) {
    using I = decltype(local_tree(e.inner, slot));
    return expr::axis_sum<expr::axis::rows, I>(local_tree(e.inner, slot));
  } else {
    return unsupported_on_multi_gpu<E>{};
  }
}

/// The one row partition of e's multi_gpu leaves, checked: they must share a cluster and be
/// split alike (the rows of an element-wise expression are combined part by part).
template <class E>
std::pair<const cluster*, const row_partition*> common_split(const E& e, const char* what) {
  const cluster* where = nullptr;
  const row_partition* rows = nullptr;
  for_each_leaf(e, [&](const auto& leaf) {
    if (!where) {
      where = &leaf.cluster();
      rows = &leaf.partition();
      return;
    }
    require_same_cluster(*where, leaf.cluster(), what);
    if (!(*rows == leaf.partition()))
      throw dimension_mismatch(std::string(what) +
                               ": the operands are split differently over "
                               "the GPUs (rows " +
                               partition_text(*rows) + " and " + partition_text(leaf.partition()) +
                               "); distribute one like the other: spade::distribute(x, like)");
  });
  if (!where) throw error(std::string(what) + ": the expression has no multi_gpu operand");
  return {where, rows};
}

template <class Dest>
Dest make_distributed(const cluster& where, const row_partition& rows, index_t cols,
                      std::vector<typename Dest::part_type> parts) {
  if constexpr (is_vector_v<Dest>) {
    (void)cols;
    return Dest(where, rows, std::move(parts));
  } else if constexpr (is_csr_v<Dest>) {
    std::vector<std::int64_t> nnz;
    for (const auto& part : parts)
      nnz.push_back(part.nnz());
    return Dest(where, rows, cols, std::move(parts), all_part_counts(where, nnz));
  } else {
    return Dest(where, rows, cols, std::move(parts));
  }
}

/// Evaluates a tree without products over multi_gpu operands split alike: each part assigns
/// the same tree over its blocks (the single-GPU planner: fused kernels, cuSPARSE, ...).
template <class Dest, class E>
void assign_local(Dest& dest, const E& e) {
  const auto [where, rows] = common_split(e, "multi_gpu expression");
  std::vector<typename Dest::part_type> parts(where->my_parts().size());
  for_each_part(*where, false, [&](std::size_t s, int) { parts[s] = local_tree(e, s); });
  dest = make_distributed<Dest>(*where, *rows, expr::cols_of(e), std::move(parts));
}

template <class Dest, class E>
void assign_distributed(Dest& dest, const E& e) {
  using R = expr::result_t<E>;
  static_assert(std::is_same_v<typename R::space_type, multi_gpu>,
                "spade: a multi_gpu object is assigned an expression over multi_gpu operands; "
                "distribute the others onto its cluster first (spade::distribute)");
  static_assert(std::is_same_v<typename Dest::value_type, typename R::value_type>,
                "spade: assignment: the destination's scalar type differs from the expression's");
  static_assert(is_vector_v<Dest> == is_vector_v<R> && is_csr_v<Dest> == is_csr_v<R>,
                "spade: a multi_gpu expression is assigned to its own result type (a csr to a "
                "csr, a dense to a dense of any layout, a vector to a vector)");
  if constexpr (expr::is_transposed_v<E>) {
    using I = expr::bare_t<decltype(e.inner)>;
    if constexpr (!is_csr_v<R>) {
      unsupported_on_multi_gpu<E>{};
    } else if constexpr (matrix_or_vector<I>) {
      distributed_transpose(e.inner, dest);
    } else {
      const expr::result_t<I> inner(e.inner);  // transpose(A * B): the product first
      distributed_transpose(inner, dest);
    }
  } else if constexpr (expr::is_product_v<E>) {
    using A = expr::bare_t<decltype(e.lhs)>;
    using B = expr::bare_t<decltype(e.rhs)>;
    if constexpr (!is_csr_v<A>) {
      // A product whose lhs is itself an expression: evaluate it first.
      if constexpr (expr::is_product_v<A> || expr::is_sum_v<A> || expr::is_scaled_v<A> ||
                    expr::is_transposed_v<A>) {
        const expr::result_t<A> lhs(e.lhs);
        assign_distributed(dest,
                           expr::product<const expr::result_t<A>&, decltype(e.rhs)>(lhs, e.rhs));
      } else {
        unsupported_on_multi_gpu<A>{};
      }
    } else if constexpr (!matrix_or_vector<B>) {
      const expr::result_t<B> rhs(e.rhs);
      assign_distributed(dest,
                         expr::product<decltype(e.lhs), const expr::result_t<B>&>(e.lhs, rhs));
    } else if constexpr (is_csr_v<B>) {
      R result;
      distributed_spgemm(e.lhs, e.rhs, result);
      dest = std::move(result);
    } else {
      R result;
      distributed_spmm(e.lhs, e.rhs, result);
      if constexpr (std::is_same_v<Dest, R>)
        dest = std::move(result);
      else
        assign_local(dest, result);  // another layout: each part converts its block
    }
  } else if constexpr (holds_product<E>()) {
    const auto& evaluated = products_evaluated(e);
    assign_local(dest, evaluated);
  } else {
    assign_local(dest, e);
  }
}

// ---- reductions: each part's, combined over the cluster -------------------------------------

template <bool Square, class E>
typename E::value_type distributed_reduce(reduction kind, const E& e, const char* what,
                                          std::int64_t* count) {
  using T = typename E::value_type;
  const auto& evaluated = products_evaluated(e);
  const auto [where, rows] = common_split(evaluated, what);
  (void)rows;
  std::vector<double> values(where->my_parts().size(), 0.0);
  std::vector<double> counts(where->my_parts().size(), 0.0);
  std::vector<double> empty(where->my_parts().size(), 0.0);
  for_each_part(*where, false, [&](std::size_t s, int) {
    const auto& local = local_tree(evaluated, s);  // a bare leaf: its block, not a copy
    std::int64_t n = 0;
    if (kind == reduction::sum) {
      values[s] = static_cast<double>(reduce_cwise<Square>(kind, local, what, &n));
    } else {
      // An empty part has no max or min: it takes no part in the combine.
      const std::int64_t elements = std::int64_t{expr::rows_of(local)} * expr::cols_of(local);
      if constexpr (sparse_matrix<expr::result_t<decltype(local)>>) {
        (void)elements;
        const auto scaled = spade::eval(local);
        if (scaled.nnz() == 0) {
          empty[s] = 1;
          return;
        }
        values[s] = static_cast<double>(reduce_cwise<Square>(kind, scaled, what, &n));
      } else {
        if (elements == 0) {
          empty[s] = 1;
          return;
        }
        values[s] = static_cast<double>(reduce_cwise<Square>(kind, local, what, &n));
      }
    }
    counts[s] = static_cast<double>(n);
  });
  const double total_count = combine_parts(*where, counts, part_combine::sum);
  if (count) *count = static_cast<std::int64_t>(total_count);
  if (kind == reduction::sum)
    return static_cast<T>(combine_parts(*where, values, part_combine::sum));
  if (total_count == 0)
    throw dimension_mismatch(std::string(what) + ": the expression has no elements");
  // Empty parts take the first non-empty part's value (max and min are idempotent); a part
  // of another process with no elements counts as -inf / +inf through the all-reduce.
  const part_combine how = kind == reduction::max ? part_combine::max : part_combine::min;
  const double neutral = how == part_combine::max ? -INFINITY : INFINITY;
  for (std::size_t s = 0; s < values.size(); ++s)
    if (empty[s]) values[s] = neutral;
  return static_cast<T>(combine_parts(*where, values, how));
}

/// dot(x, y) over multi_gpu operands: each part's own dot (for vectors the single-GPU vendor
/// dot, so a cluster of one gives the single-GPU bits), summed over the parts in part order.
template <class X, class Y>
typename expr::result_t<X>::value_type distributed_dot(const X& x, const Y& y) {
  using T = typename expr::result_t<X>::value_type;
  if (expr::rows_of(x) != expr::rows_of(y) || expr::cols_of(x) != expr::cols_of(y))
    throw dimension_mismatch("dot: shapes " + expr::shape_text(expr::rows_of(x), expr::cols_of(x)) +
                             " and " + expr::shape_text(expr::rows_of(y), expr::cols_of(y)) +
                             " differ");
  const auto& ex = products_evaluated(x);
  const auto& ey = products_evaluated(y);
  const auto [where, rows] = common_split(expr::sum<decltype(ex), decltype(ey)>(ex, ey), "dot");
  (void)rows;
  std::vector<double> values(where->my_parts().size(), 0.0);
  for_each_part(*where, false, [&](std::size_t s, int) {
    values[s] = static_cast<double>(spade::dot(local_tree(ex, s), local_tree(ey, s)));
  });
  return static_cast<T>(combine_parts(*where, values, part_combine::sum));
}

// ---- explain ---------------------------------------------------------------------------------

template <class E>
std::string explain_distributed(const E& e);

template <scalar T, class X>
std::string explain_distributed_product(const csr<T, multi_gpu>& a, const X& x) {
  const halo_plan<T>& plan = a.halo_for(x.partition());
  const cluster& where = a.cluster();
  std::string text = "multi_gpu product over " + where.describe() + "\n";
  text += "  rows of A split " + partition_text(a.partition()) + "; rhs rows split " +
          partition_text(x.partition()) + "\n";
  text += "  A's entries: " + std::to_string(plan.local_entries) + " read the part's own rows, " +
          std::to_string(plan.remote_entries) + " read rows of other parts\n";
  const index_t width = width_of(x);
  std::int64_t bytes = 0;
  bool stacked = false;
  if constexpr (!is_csr_v<X>) {
    bytes = plan.halo_rows * width * static_cast<std::int64_t>(sizeof(T));
    if constexpr (row_major_rows<X>()) stacked = stacked_product_preferred(plan, width);
  }
  text +=
      "  step 1, halo exchange (NCCL grouped send/receive on each part's communication "
      "stream): " +
      std::to_string(plan.halo_rows) + " rows of the rhs move in all";
  if constexpr (!is_csr_v<X>)
    text += " (" + std::to_string(bytes) + " bytes), " +
            (stacked ? std::string("before step 2") : std::string("overlapped with step 2"));
  else
    text += " (each owner gathers them from B_q, then row pointers, columns, values)";
  text += "\n";
  for (std::size_t s = 0; s < a.local_parts(); ++s) {
    const int p = where.my_parts()[s];
    text += "    part ";
    text += std::to_string(p);
    text += " receives";
    for (std::size_t q = 0; q < static_cast<std::size_t>(where.size()); ++q) {
      const index_t n = plan.halo_first[s][q + 1] - plan.halo_first[s][q];
      if (!n) continue;
      text += ' ';
      text += std::to_string(n);
      text += " rows from part ";
      text += std::to_string(q);
      text += ';';
    }
    if (plan.halo_size(s) == 0) text += " nothing";
    text += "\n";
  }
  if (stacked) {
    // The stacked operands exist only while the product runs, so no single-GPU plan is shown.
    text +=
        "  step 2, one product on each part after the exchange (stacked: a row of the rhs "
        "is " +
        std::to_string(width * static_cast<index_t>(sizeof(T))) +
        " bytes and a quarter or more of A's entries read other parts' rows): the part's "
        "rows of A, renumbered, times its block of the rhs stacked over the received rows; "
        "each row of A is visited once\n";
    return text;
  }
  // The single-GPU plan of the first part's local product, as its GPU plans it.
  for (std::size_t s = 0; s < a.local_parts(); ++s) {
    if (plan.local[s].rows() == 0 || plan.local[s].cols() == 0) continue;
    context_scope scope(where.context_of(where.my_parts()[s]));
    text += "  step 2, local product on each part (part " + std::to_string(where.my_parts()[s]) +
            "'s plan shown):\n" + explain(plan.local[s] * x.slot(s));
    break;
  }
  if constexpr (is_csr_v<X>)
    text +=
        "  (SpGEMM: step 2 is the only product: each part's rows, renumbered, times its "
        "block of B stacked over the received rows)\n";
  else
    text +=
        "  step 3, remote product on each part after the exchange: the part's rows that read "
        "the halo times the halo, added into those rows of the result\n";
  return text;
}

template <scalar T>
std::string explain_distributed_transpose(const csr<T, multi_gpu>& a, bool evaluated_first) {
  const row_partition to = transpose_partition(a.partition(), a.cols());
  std::string text = "multi_gpu transpose over " + a.cluster().describe() + "\n";
  if (evaluated_first) text += "  its operand is evaluated first (a multi_gpu temporary)\n";
  text += "  rows of A split " + partition_text(a.partition()) + "; rows of the transpose (A's " +
          "columns) split " + partition_text(to) +
          (to == a.partition() ? " (like A's: A is square)" : " (equal blocks)") + "\n";
  text +=
      "  step 1, each part transposes its block on its GPU (csr2csc): its entries by A's "
      "column\n"
      "  step 2, all-to-all (one exchange of sizes, then NCCL grouped send/receive): part p "
      "sends part q its entries in q's rows of the transpose (row pointers, columns, values); " +
      std::to_string(a.nnz()) +
      " entries in all, those a part keeps copied on its GPU\n"
      "  step 3, each part stacks the slices in part order and gathers their rows interleaved: "
      "one row's entries from every part, columns sorted; values copied, never computed\n";
  return text;
}

template <class E>
std::string explain_distributed(const E& e) {
  if constexpr (expr::is_transposed_v<E> && is_csr_v<expr::result_t<E>>) {
    using I = expr::bare_t<decltype(e.inner)>;
    if constexpr (matrix_or_vector<I>) {
      return explain_distributed_transpose(e.inner, false);
    } else {
      const expr::result_t<I> inner(e.inner);
      return explain_distributed_transpose(inner, true);
    }
  } else if constexpr (expr::is_product_v<E>) {
    using A = expr::bare_t<decltype(e.lhs)>;
    using B = expr::bare_t<decltype(e.rhs)>;
    if constexpr (is_csr_v<A> && matrix_or_vector<B>) {
      return explain_distributed_product(e.lhs, e.rhs);
    } else {
      return "multi_gpu product: its operands are evaluated first (each a multi_gpu temporary), "
             "then multiplied as a csr times a stored operand\n";
    }
  } else {
    const auto& evaluated = products_evaluated(e);
    const auto [where, rows] = common_split(evaluated, "spade::explain");
    std::string text = "multi_gpu expression over " + where->describe() + "\n  rows split " +
                       partition_text(*rows) +
                       "; no communication: each part evaluates the same expression over its "
                       "blocks";
    if constexpr (holds_product<E>())
      text += " (its products and transposes evaluated first, each with its own exchange)";
    text += "\n";
    for (std::size_t s = 0; s < where->my_parts().size(); ++s) {
      if (rows->size(where->my_parts()[s]) == 0) continue;
      context_scope scope(where->context_of(where->my_parts()[s]));
      text += "  part " + std::to_string(where->my_parts()[s]) + "'s plan:\n" +
              explain(local_tree(evaluated, s));
      break;
    }
    return text;
  }
}

}  // namespace detail

/// to_gpu of a multi_gpu object would be ambiguous (which GPU?): a compile error.
template <class X>
requires std::is_same_v<typename X::space_type, multi_gpu> && matrix_or_vector<X>
void to_gpu(const X&) {
  static_assert(sizeof(X) == 0,
                "spade::to_gpu: a multi_gpu object already lives on its cluster's GPUs; "
                "spade::gather(x) gives the whole on the host, x.part(p) one GPU's block");
}

}  // namespace spade
