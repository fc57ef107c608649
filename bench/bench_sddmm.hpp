// spade-bench sddmm: cwise_product(S, X * transpose(Y)) sampled at S's entries, for every matrix
// of the sets at the --n depths (default 32,128), against cusparseSDDMM in the same run.
// Included by spade_bench.cpp inside its namespace, after run_options (like bench_cwise.hpp); the
// headers it needs are included at the top of spade_bench.cpp.
#pragma once

template <class T>
dense<T, cpu> random_dense(index_t rows, index_t cols, std::uint64_t seed) {
  dense<T, cpu> d(rows, cols);
  const vector<T, cpu> v = random_vector<T>(rows * cols, seed);
  std::copy_n(v.values().data(), d.element_count(), d.values().data());
  return d;
}

/// cusparseSDDMM alone (C = X·Yᵀ ∘ spy(C), β = 0: it samples the pattern and does not multiply
/// by S's values, so it does a little less than Spade's side), descriptors, workspace and
/// preprocessing made once outside the timed region.
template <class T>
double time_cusparse_sddmm(const dense<T, gpu>& x, const dense<T, gpu>& y, csr<T, gpu>& out,
                           gpu_timer& timer, const run_options& ro) {
  const cusparse_handle handle = make_cusparse(spade_stream());
  const_dn_mat dx, dy;
  check_cusparse(
      cusparseCreateConstDnMat(dx.out(), x.rows(), x.cols(), std::max<index_t>(x.cols(), 1),
                               x.data(), cuda_type<T>, CUSPARSE_ORDER_ROW),
      "cusparseCreateConstDnMat");
  check_cusparse(
      cusparseCreateConstDnMat(dy.out(), y.rows(), y.cols(), std::max<index_t>(y.cols(), 1),
                               y.data(), cuda_type<T>, CUSPARSE_ORDER_ROW),
      "cusparseCreateConstDnMat");
  sp_mat dc;
  check_cusparse(cusparseCreateCsr(dc.out(), out.rows(), out.cols(), out.nnz(),
                                   const_cast<index_t*>(out.row_ptr().data()),
                                   const_cast<index_t*>(out.col_idx().data()), out.values().data(),
                                   CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                                   cuda_type<T>),
                 "cusparseCreateCsr");
  const T one = 1, zero = 0;
  const auto op_x = CUSPARSE_OPERATION_NON_TRANSPOSE, op_y = CUSPARSE_OPERATION_TRANSPOSE;
  std::size_t bytes = 0;
  check_cusparse(
      cusparseSDDMM_bufferSize(handle.get(), op_x, op_y, &one, dx.get(), dy.get(), &zero, dc.get(),
                               cuda_type<T>, CUSPARSE_SDDMM_ALG_DEFAULT, &bytes),
      "cusparseSDDMM_bufferSize");
  raw_buffer buffer = workspace(bytes, spade_stream());
  check_cusparse(
      cusparseSDDMM_preprocess(handle.get(), op_x, op_y, &one, dx.get(), dy.get(), &zero, dc.get(),
                               cuda_type<T>, CUSPARSE_SDDMM_ALG_DEFAULT, buffer.get()),
      "cusparseSDDMM_preprocess");
  return timer
      .kernel(
          [&] {
            check_cusparse(
                cusparseSDDMM(handle.get(), op_x, op_y, &one, dx.get(), dy.get(), &zero, dc.get(),
                              cuda_type<T>, CUSPARSE_SDDMM_ALG_DEFAULT, buffer.get()),
                "cusparseSDDMM");
          },
          ro.timing)
      .median;
}

template <class T>
int command_sddmm(const set_options& so, const options& opt, const run_options& ro) {
  gpu_timer timer(spade_stream());
  const char* scalar = std::is_same_v<T, float> ? "float" : "double";
  csv_writer csv(ro.csv, {"matrix", "family", "scalar", "rows", "cols", "nnz", "k", "planned_ms",
                          "kernel_ms", "cusparse_ms", "ratio_planned", "ratio_kernel",
                          "kernel_gflops", "max_rel_error", "launch", "commit", "device"});
  std::vector<double> planned_ratios, kernel_ratios;
  double worst = 1e300;
  std::string worst_name;
  int failed = 0;
  std::printf("sddmm (%s): S o (X * Y^T) at S's entries, X rows x k and Y cols x k row-major\n",
              scalar);
  std::printf("%-26s %5s %10s %10s %10s %10s %7s %7s %8s\n", "matrix", "k", "nnz", "planned",
              "kernel", "cuSPARSE", "ratio", "kernel", "GFLOP/s");
  for (const auto& mc : matrix_set<T>(so)) {
    const csr<T, cpu> host = mc.make();
    const csr<T, gpu> s = to_gpu(host);
    for (const int k : int_list(opt.get("n", "32,128"))) {
      const auto depth = static_cast<index_t>(k);
      const dense<T, cpu> xh = random_dense<T>(s.rows(), depth, ro.seed + 1);
      const dense<T, cpu> yh = random_dense<T>(s.cols(), depth, ro.seed + 2);
      const dense<T, gpu> x = to_gpu(xh), y = to_gpu(yh);
      csr<T, gpu> planned_out;
      const auto planned = [&] { planned_out = cwise_product(s, x * transpose(y)); };
      planned();
      const double planned_ms = timer.kernel(planned, ro.timing).median;
      csr<T, gpu> out = s;
      device::sddmm_launch launch;
      const auto kernel = [&] {
        launch = device::sddmm(T(1), s, x, device::operation::none, y, device::operation::transpose,
                               out);
      };
      kernel();
      const double kernel_ms = timer.kernel(kernel, ro.timing).median;
      csr<T, gpu> vendor_out = s;
      const double cusparse_ms = time_cusparse_sddmm(x, y, vendor_out, timer, ro);
      // Checked against a double sum over the first entries (at most 20000), relative to the
      // terms' magnitudes.
      const csr<T, cpu> got = to_cpu(planned_out);
      double max_rel = 0;
      const index_t checked = std::min<index_t>(host.nnz(), 20000);
      for (index_t r = 0, e = 0; r < host.rows() && e < checked; ++r)
        for (index_t p = host.row_ptr()[r]; p < host.row_ptr()[r + 1] && e < checked; ++p, ++e) {
          const index_t c = host.col_idx()[p];
          double acc = 0, size = 0;
          for (index_t t = 0; t < depth; ++t) {
            const double term = double(xh.values()[static_cast<std::size_t>(r) * depth + t]) *
                                double(yh.values()[static_cast<std::size_t>(c) * depth + t]);
            acc += term;
            size += std::fabs(term);
          }
          const double v = double(host.values()[p]);
          // Values below T's normal range (bayer03's reach 1e-151) are rounded as subnormals.
          const double diff = std::max(0.0, std::fabs(double(got.values()[p]) - v * acc) -
                                                2 * double(std::numeric_limits<T>::denorm_min()));
          max_rel = std::max(max_rel, size > 0 ? diff / (std::fabs(v) * size) : diff);
        }
      const bool ok = max_rel <= (depth + 2) * std::numeric_limits<T>::epsilon();
      if (!ok) ++failed;
      const double ratio = cusparse_ms / planned_ms, kratio = cusparse_ms / kernel_ms;
      const double gflops = 2.0 * double(host.nnz()) * depth / (kernel_ms * 1e-3) / 1e9;
      planned_ratios.push_back(ratio);
      kernel_ratios.push_back(kratio);
      if (ratio < worst) {
        worst = ratio;
        worst_name = mc.name + " k=" + std::to_string(k);
      }
      std::printf("%-26s %5d %10d %10.4f %10.4f %10.4f %7.3f %7.3f %8.0f%s\n", mc.name.c_str(), k,
                  host.nnz(), planned_ms, kernel_ms, cusparse_ms, ratio, kratio, gflops,
                  ok ? "" : "  WRONG");
      csv.write({mc.name, mc.family, scalar, std::to_string(host.rows()),
                 std::to_string(host.cols()), std::to_string(host.nnz()), std::to_string(k),
                 std::to_string(planned_ms), std::to_string(kernel_ms), std::to_string(cusparse_ms),
                 std::to_string(ratio), std::to_string(kratio), std::to_string(gflops),
                 std::to_string(max_rel), launch.describe(), ro.commit, ro.device});
    }
    trim_default_pool();
  }
  std::printf(
      "\nsddmm summary (%s): planned vs cusparseSDDMM geomean %.3f (worst %.3f, %s), kernel alone "
      "%.3f over %zu cases; %d wrong\n",
      scalar, geomean(planned_ratios), worst, worst_name.c_str(), geomean(kernel_ratios),
      planned_ratios.size(), failed);
  std::printf(
      "planned: out = cwise_product(S, X * transpose(Y)) with the result's allocation; "
      "kernel: device::sddmm into a reused result; ratio = cuSPARSE ms / Spade ms\n");
  return failed > 0 ? 3 : 0;
}
