// spade-bench multi: products over multi_gpu operands on clusters of 1 .. every visible GPU
// (strong scaling), a stencil grown with the GPU count (weak scaling), the measured link
// bandwidth between two GPUs, and a projection to 4 and 8 GPUs from it.
//
// A part of spade_bench.cpp, not a standalone header (see bench_cg.hpp): included inside its
// namespace spade::bench { namespace { ... } }; it includes nothing and opens no namespace.
//
// What is measured: host wall-clock time from the call to the moment every part's streams are
// idle (detail::synchronize over the cluster), median of --reps runs after --warmup runs. CUDA
// events on one stream cannot time work on several GPUs. The plain single-GPU product (gpu
// operands, default context) is timed the same way beside it, so the cost of the multi_gpu
// path on one GPU is visible.

inline std::string fixed(double v, int digits) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", digits, v);
  return text;
}

struct multi_row {
  std::string operation, matrix;
  index_t rows = 0;
  std::int64_t entries = 0;
  int gpus = 0;
  double ms = 0, single_gpu_ms = 0, speedup = 0;
  std::int64_t halo_rows = 0, remote_entries = 0;
};

const std::vector<std::string> multi_csv_columns = {
    "operation",      "matrix", "rows",          "nnz",          "precision",
    "gpus",           "ms",     "single_gpu_ms", "speedup_vs_1", "halo_rows",
    "remote_entries", "device", "commit"};

template <class F, class Sync>
double wall_median_ms(F&& body, Sync&& sync, int warmups, int reps) {
  for (int i = 0; i < warmups; ++i) {
    body();
    sync();
  }
  std::vector<double> times;
  for (int i = 0; i < reps; ++i) {
    const auto start = std::chrono::steady_clock::now();
    body();
    sync();
    times.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

/// Bytes per second one GPU sends to another through NCCL (both directions at once, each
/// direction counted), from a 256 MiB exchange.
inline double measured_link_bandwidth(const cluster& two) {
  const std::size_t bytes = std::size_t{256} << 20;
  std::vector<device_buffer<char>> out(2), in(2);
  for (int p = 0; p < 2; ++p) {
    context_scope scope(two.context_of(p));
    out[static_cast<std::size_t>(p)] = device_buffer<char>(bytes);
    in[static_cast<std::size_t>(p)] = device_buffer<char>(bytes);
    out[static_cast<std::size_t>(p)].fill_zero();
  }
  const auto exchange = [&] {
    std::vector<detail::part_exchange> x(2);
    for (int p = 0; p < 2; ++p) {
      const auto i = static_cast<std::size_t>(p);
      x[i].part = p;
      x[i].sends.push_back({1 - p, out[i].data(), bytes});
      x[i].receives.push_back({1 - p, in[i].data(), bytes});
    }
    detail::post_exchange(two, x);
    detail::join_exchange(two);
  };
  const double ms = wall_median_ms(
      exchange, [&] { detail::synchronize(two); }, 2, 5);
  return static_cast<double>(bytes) / (ms * 1e-3);
}

/// Rows of x each part receives in the worst part, for `parts` parts of `a` (host only).
template <class T>
std::int64_t worst_halo_rows(const csr<T, cpu>& a, index_t parts) {
  const auto rows = detail::partition_for_products(a, parts);
  std::int64_t worst = 0;
  for (index_t p = 0; p < parts; ++p)
    worst = std::max<std::int64_t>(
        worst, static_cast<std::int64_t>(detail::split_part(a, rows, rows, p).halo.size()));
  return worst;
}

/// The parts of one distributed product timed alone, on every part at once: the local
/// products (local_p * X_p), the exchange (packing the sent rows, NCCL), the remote products
/// (remote_p * halo_p added to Y_p); against the whole product, their sum minus the whole is
/// the overlap won.
template <class T, class X>
void time_split(const cluster& where, const csr<T, multi_gpu>& a, const X& x,
                const std::string& what, int warmups, int reps) {
  const auto& plan = a.halo_for(x.partition());
  const std::size_t slots = a.local_parts();
  const index_t width = detail::width_of(x);
  const auto sync = [&] { detail::synchronize(where); };
  using part_result = typename expr::result_t<decltype(plan.local[0] * x.slot(0))>;
  std::vector<part_result> y(slots);
  std::vector<device_buffer<T>> sent(slots), received(slots);
  for (std::size_t s = 0; s < slots; ++s) {
    context_scope scope(where.context_of(where.my_parts()[s]));
    y[s] = plan.local[s] * x.slot(s);
    sent[s] = device_buffer<T>(static_cast<std::size_t>(plan.send_size(s)) * width);
    received[s] = device_buffer<T>(static_cast<std::size_t>(plan.halo_size(s)) * width);
  }
  const double local_ms = wall_median_ms(
      [&] {
        detail::for_each_part(where, false,
                              [&](std::size_t s, int) { y[s] = plan.local[s] * x.slot(s); });
      },
      sync, warmups, reps);
  const double exchange_ms = wall_median_ms(
      [&] {
        std::vector<detail::part_exchange> ex(slots);
        detail::for_each_part(where, false, [&](std::size_t s, int p) {
          detail::pack_halo(plan, where, s, p, x, sent[s].data());
          ex[s] = detail::halo_transfers(plan, s, p, where.size(), width, sent[s].data(),
                                         received[s].data());
        });
        detail::order_communication(where);
        detail::post_exchange(where, ex, false);
        detail::join_exchange(where);
      },
      sync, warmups, reps);
  using halo_type = decltype(detail::halo_operand<X>(device_buffer<T>(), 0, width));
  std::vector<halo_type> halos;
  for (std::size_t s = 0; s < slots; ++s)
    halos.push_back(detail::halo_operand<X>(std::move(received[s]), plan.halo_size(s), width));
  const double remote_ms = wall_median_ms(
      [&] {
        detail::for_each_part(where, false, [&](std::size_t s, int p) {
          if (plan.halo_size(s) > 0) detail::add_remote(plan, where, s, p, halos[s], width, y[s]);
        });
      },
      sync, warmups, reps);
  std::printf(
      "  split %-6s %d GPUs: local %.3f ms, exchange %.3f ms, remote %.3f ms (alone, all "
      "parts at once)\n",
      what.c_str(), where.size(), local_ms, exchange_ms, remote_ms);
}

/// SpGEMM A·A split, every part at once: the product work alone (each part's rows of A times
/// the whole of A, held on its own GPU: no exchange, no stacking) and the row selection alone
/// (each part's rows of A that others read, gathered from A_p, their pointers read back).
/// Against the whole distributed product, the rest is the count exchanges, the exchange, the
/// stack's copies and the product's extra columns.
template <class T>
void time_split_spgemm(const cluster& where, const csr<T, multi_gpu>& a, const csr<T, cpu>& whole,
                       int warmups, int reps) {
  const std::size_t slots = a.local_parts();
  const auto& plan = a.halo_for(a.partition());
  const auto sync = [&] { detail::synchronize(where); };
  std::vector<csr<T, gpu>> b(slots), c(slots), picked(slots);
  for (std::size_t s = 0; s < slots; ++s) {
    context_scope scope(where.context_of(where.my_parts()[s]));
    b[s] = to_gpu(whole);
  }
  const double product_ms = wall_median_ms(
      [&] {
        detail::for_each_part(where, true,
                              [&](std::size_t s, int) { c[s] = csr<T, gpu>(a.slot(s) * b[s]); });
      },
      sync, warmups, reps);
  const double select_ms = wall_median_ms(
      [&] {
        detail::for_each_part(where, true, [&](std::size_t s, int p) {
          if (plan.send_size(s) == 0) return;
          picked[s] = detail::gather_csr_rows(where.context_of(p), a.slot(s), plan.send_rows[s]);
          (void)picked[s].row_ptr().to_host();
        });
      },
      sync, warmups, reps);
  std::printf(
      "  split spgemm %d GPUs: product alone (part's rows times all of A) %.3f ms, row "
      "selection %.3f ms (alone, all parts at once)\n",
      where.size(), product_ms, select_ms);
}

template <class T>
int command_multi(const options& opt, run_options& ro) {
  const int warmups = std::max(2, static_cast<int>(opt.number("warmup", 3)));
  const int reps = std::max(5, static_cast<int>(opt.number("reps", 15)));
  const index_t grid = static_cast<index_t>(opt.number("grid", 200));
  const index_t spgemm_grid = static_cast<index_t>(opt.number("spgemm-grid", 100));
  const index_t rmat_scale = static_cast<index_t>(opt.number("rmat", 22));
  const index_t width = static_cast<index_t>(opt.number("n", 8));
  const bool quick = opt.has("quick");
  // --sets: which of the four parts run (a long run split over calls), all by default.
  const std::string sets = opt.get("sets", "stencil,rmat,spgemm,weak");
  const std::vector<std::string> chosen = text_list(sets);
  for (const std::string& name : chosen)
    if (name != "stencil" && name != "rmat" && name != "spgemm" && name != "weak")
      throw std::invalid_argument("spade-bench multi: unknown set '" + name +
                                  "' in --sets (stencil, rmat, spgemm, weak)");
  const auto wanted = [&](const std::string& name) {
    return std::find(chosen.begin(), chosen.end(), name) != chosen.end();
  };
  int gpus = 0;
  {
    const cluster all = cluster::local();
    gpus = all.size();
  }
  std::vector<cluster> clusters;
  for (int g = 1; g <= gpus; ++g)
    clusters.push_back(cluster::local(g));
  std::printf(
      "multi: %d GPUs; wall-clock medians of %d runs after %d warm-ups, every part idle "
      "at the end\n",
      gpus, reps, warmups);
  csv_writer csv(ro.csv, multi_csv_columns);
  const char* precision = std::is_same_v<T, double> ? "fp64" : "fp32";
  const auto emit = [&](const multi_row& r) {
    std::printf(
        "%-7s %-22s %2d GPU  %10.3f ms  (single-GPU %9.3f ms)  x%.2f vs 1  halo %lld rows\n",
        r.operation.c_str(), r.matrix.c_str(), r.gpus, r.ms, r.single_gpu_ms, r.speedup,
        static_cast<long long>(r.halo_rows));
    csv.write({r.operation, r.matrix, std::to_string(r.rows), std::to_string(r.entries), precision,
               std::to_string(r.gpus), fixed(r.ms, 4), fixed(r.single_gpu_ms, 4),
               fixed(r.speedup, 3), std::to_string(r.halo_rows), std::to_string(r.remote_entries),
               ro.device, ro.commit});
  };
  const auto sync_default = [] { default_context().synchronize(); };

  struct named {
    std::string name;
    csr<T, cpu> a;
    bool spgemm;
  };
  std::vector<named> set;
  const index_t g = quick ? std::min<index_t>(grid, 100) : grid;
  if (wanted("stencil"))
    set.push_back(
        {"stencil27_" + std::to_string(g) + "^3", generate::stencil27<T>(g, g, g), false});
  if (wanted("rmat"))
    set.push_back({"rmat_" + std::to_string(quick ? std::min<index_t>(rmat_scale, 20) : rmat_scale),
                   generate::rmat<T>(quick ? std::min<index_t>(rmat_scale, 20) : rmat_scale, 16, 1),
                   false});
  const index_t sg = quick ? std::min<index_t>(spgemm_grid, 60) : spgemm_grid;
  if (wanted("spgemm"))
    set.push_back(
        {"stencil27_" + std::to_string(sg) + "^3", generate::stencil27<T>(sg, sg, sg), true});

  std::vector<multi_row> rows;
  for (const named& m : set) {
    std::printf("%s: %d rows, %lld entries\n", m.name.c_str(), m.a.rows(),
                static_cast<long long>(m.a.nnz()));
    const auto ga = to_gpu(m.a);
    const auto gx = to_gpu(random_vector<T>(m.a.cols(), 7));
    const auto gb = to_gpu(random_dense<T>(m.a.cols(), width, 8));
    double single_spmv = 0, single_spmm = 0, single_spgemm = 0, single_transpose = 0;
    if (m.spgemm) {
      single_spgemm = wall_median_ms([&] { csr<T, gpu> c = ga * ga; }, sync_default, warmups, reps);
    } else {
      single_spmv =
          wall_median_ms([&] { vector<T, gpu> y = ga * gx; }, sync_default, warmups, reps);
      single_spmm = wall_median_ms([&] { dense<T, gpu> y = ga * gb; }, sync_default, warmups, reps);
      // The transpose each part runs, uncached (transpose(ga) would be cached on ga).
      single_transpose = wall_median_ms([&] { csr<T, gpu> t = device::transpose(ga); },
                                        sync_default, warmups, reps);
    }
    double one_spmv = 0, one_spmm = 0, one_spgemm = 0, one_transpose = 0;
    for (const cluster& where : clusters) {
      const auto da = distribute(m.a, where);
      const auto sync = [&] { detail::synchronize(where); };
      const auto& plan = da.halo_for(da.partition());
      multi_row r;
      r.matrix = m.name;
      r.rows = m.a.rows();
      r.entries = m.a.nnz();
      r.gpus = where.size();
      r.halo_rows = plan.halo_rows;
      r.remote_entries = plan.remote_entries;
      // Times `body` as `operation`; on a cluster of one its time becomes `one`, the scale of
      // the speed-ups.
      const auto record = [&](const std::string& operation, auto&& body, double single,
                              double& one) {
        r.operation = operation;
        r.ms = wall_median_ms(body, sync, warmups, reps);
        if (where.size() == 1) one = r.ms;
        r.single_gpu_ms = single;
        r.speedup = one / r.ms;
        emit(r);
        rows.push_back(r);
      };
      if (m.spgemm) {
        record(
            "spgemm", [&] { csr<T, multi_gpu> c = da * da; }, single_spgemm, one_spgemm);
        if (where.size() > 1) time_split_spgemm(where, da, m.a, warmups, reps);
        continue;
      }
      const auto dx = distribute(random_vector<T>(m.a.cols(), 7), da);
      const auto db = distribute(random_dense<T>(m.a.cols(), width, 8), da);
      record(
          "spmv", [&] { vector<T, multi_gpu> y = da * dx; }, single_spmv, one_spmv);
      record(
          "spmm" + std::to_string(width), [&] { dense<T, multi_gpu> y = da * db; }, single_spmm,
          one_spmm);
      record(
          "transpose", [&] { csr<T, multi_gpu> t = spade::transpose(da); }, single_transpose,
          one_transpose);
      if (where.size() > 1) {
        if (opt.has("explain")) {
          std::printf("%s\n%s\n", spade::explain(da * dx).c_str(), spade::explain(da * db).c_str());
          std::printf("single GPU:\n%s\n%s\n", spade::explain(ga * gx).c_str(),
                      spade::explain(ga * gb).c_str());
        }
        // Both ways of running a product with a halo, forced, beside the planned one above.
        const std::pair<const char*, detail::halo_product> paths[] = {
            {"_overlapped", detail::halo_product::overlapped},
            {"_stacked", detail::halo_product::stacked}};
        for (const auto& [suffix, how] : paths) {
          double forced_one = one_spmv;  // record() writes it on a cluster of one only
          record(
              std::string("spmv") + suffix,
              [&] {
                vector<T, multi_gpu> y;
                detail::distributed_spmm(da, dx, y, how);
              },
              single_spmv, forced_one);
          forced_one = one_spmm;
          record(
              "spmm" + std::to_string(width) + suffix,
              [&] {
                dense<T, multi_gpu> y;
                detail::distributed_spmm(da, db, y, how);
              },
              single_spmm, forced_one);
        }
        time_split(where, da, dx, "spmv", warmups, reps);
        time_split(where, da, db, "spmm" + std::to_string(width), warmups, reps);
      }
    }
  }

  // Weak scaling: the stencil's grid grows along z with the GPU count, rows per GPU fixed.
  if (wanted("weak")) std::printf("weak scaling (stencil27 %d x %d x %d·GPUs, SpMV):\n", g, g, g);
  double weak_one = 0;
  for (const cluster& where : clusters) {
    if (!wanted("weak")) break;
    const auto a = generate::stencil27<T>(g, g, g * where.size());
    const auto da = distribute(a, where);
    const auto dx = distribute(random_vector<T>(a.cols(), 7), da);
    const double ms = wall_median_ms([&] { vector<T, multi_gpu> y = da * dx; },
                                     [&] { detail::synchronize(where); }, warmups, reps);
    if (where.size() == 1) weak_one = ms;
    std::printf("  %d GPU: %d rows, %.3f ms, efficiency %.2f\n", where.size(), a.rows(), ms,
                weak_one / ms);
    csv.write(
        {"spmv_weak", "stencil27_" + std::to_string(g) + "^2x" + std::to_string(g * where.size()),
         std::to_string(a.rows()), std::to_string(a.nnz()), precision, std::to_string(where.size()),
         fixed(ms, 4), "", fixed(weak_one / ms, 3), "", "", ro.device, ro.commit});
  }

  // Projection: t(P) = t(1 GPU) / P + (worst part's halo bytes) / (measured link bandwidth),
  // i.e. perfect division of the local work and no overlap credit for the exchange.
  if (gpus >= 2) {
    const double bandwidth = measured_link_bandwidth(clusters[1]);
    std::printf("link: %.1f GB/s per direction between GPU 0 and 1 (NCCL, 256 MiB each way)\n",
                bandwidth / 1e9);
    for (const multi_row& r : rows) {
      if (r.gpus != 1 || r.operation == "spgemm") continue;
      const named* m = nullptr;
      for (const named& candidate : set)
        if (candidate.name == r.matrix) m = &candidate;
      const index_t row_width = r.operation == "spmv" ? 1 : width;
      std::string line = "  projected " + r.operation + " " + r.matrix + ":";
      for (index_t parts : {2, 4, 8}) {
        const double halo_bytes = static_cast<double>(worst_halo_rows(m->a, parts)) * row_width *
                                  static_cast<double>(sizeof(T));
        const double ms = r.ms / parts + halo_bytes / bandwidth * 1e3;
        line += " " + std::to_string(parts) + " GPUs " + fixed(ms, 3) + " ms (x" +
                fixed(r.ms / ms, 2) + ");";
        csv.write({r.operation + "_projected", r.matrix, std::to_string(r.rows),
                   std::to_string(r.entries), precision, std::to_string(parts), fixed(ms, 4), "",
                   fixed(r.ms / ms, 3), "", "", ro.device, ro.commit});
      }
      std::printf("%s\n", line.c_str());
    }
  }
  return 0;
}
