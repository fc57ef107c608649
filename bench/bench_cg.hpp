// spade-bench cg: Jacobi-preconditioned conjugate gradient end to end, written in Spade's vector
// algebra exactly as examples/02_conjugate_gradient.cpp writes it, against the same algorithm
// written directly on cuSPARSE (SpMV, CSR) and cuBLAS (dot, nrm2, axpy, geam).
//
// A part of spade_bench.cpp, not a standalone header: spade_bench.cpp includes it inside its
// namespace spade::bench { namespace { ... } }, after run_options and chosen_kernel, and every
// library header it uses is included at the top of that file. So it includes nothing and opens
// no namespace itself.
//
// What is measured: one Spade solve to the tolerance (or --max-iterations) fixes the iteration
// count and warms Spade up (plan, conversions cached on A, pool growth); a direct solve of that
// count warms the direct side up. Then --reps times (default 5) each side solves again for
// exactly that count, the two sides alternating, and CUDA events on Spade's stream around the
// iteration loop (not the setup r₀ = b, z₀ = M·r₀, p₀ = z₀) give the time; the median is
// reported. Both sides synchronise on every dot and norm (host pointer mode), so the events
// see the host's work between launches too: this is the time a user waits.

// ---- the matrices ---------------------------------------------------------------------------

/// CG needs A symmetric positive definite. Of the real set (../shared/matrices/README.md) these
/// six are: stored `symmetric real`, every diagonal entry positive, and a sparse Cholesky
/// factorisation in double (Eigen SimplicialLLT) succeeds on each. The other `symmetric real`
/// ones (ct2010, nh2010, PGPgiantcompo, zenios) have zero diagonals, the `symmetric pattern`
/// graphs store no diagonal at all, and the `general` ones are not symmetric. Jacobi-CG in double
/// (Eigen, to 1e-10) needs 29 (Chem97ZtZ), 181 (Dubcova1), 190 (bcsstk03), 874 (s1rmq4m1) and
/// 1567 (bcsstk13) iterations; ex10hs needs ≈ 97,000, so it runs to the cap: a timing case only.
inline const std::vector<std::string> cg_real_matrices = {"bcsstk03", "bcsstk13", "s1rmq4m1",
                                                          "Dubcova1", "ex10hs",   "Chem97ZtZ"};
/// The generator's stencils, both symmetric positive definite: stencil27 (26 on the diagonal,
/// −1 off, irreducibly diagonally dominant) and stencil7 (the Dirichlet 7-point Laplacian, 6 on
/// the diagonal, −1 off). Names as matrix_set gives them.
inline const std::vector<std::string> cg_synthetic_matrices = {"stencil27_100^3", "stencil7_160^3"};
/// --quick: one stencil, a well and an ill-conditioned real matrix.
inline const std::vector<std::string> cg_quick_matrices = {"stencil27_100^3", "Dubcova1",
                                                           "bcsstk13"};

inline bool listed_in(const std::vector<std::string>& list, const std::string& name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

template <class T>
std::vector<matrix_case<T>> cg_matrix_set(set_options so) {
  const bool quick = so.quick;
  so.quick = false;  // matrix_set's quick subset is the SpMV one
  std::vector<matrix_case<T>> kept;
  for (auto& mc : matrix_set<T>(so)) {
    const bool spd = listed_in(cg_real_matrices, mc.name) ||
                     (mc.family != "real" && listed_in(cg_synthetic_matrices, mc.name));
    if (spd && (!quick || listed_in(cg_quick_matrices, mc.name))) kept.push_back(std::move(mc));
  }
  return kept;
}

/// The Jacobi preconditioner M = diag(A)⁻¹ as a diagonal csr, so z = M·r is an SpMV on both
/// sides (as in examples/02_conjugate_gradient.cpp). Throws when a diagonal entry is missing
/// or not positive: A is then not positive definite.
template <class T>
csr<T, cpu> jacobi_of(const csr<T, cpu>& a) {
  const index_t n = a.rows();
  std::vector<index_t> row_ptr(static_cast<std::size_t>(n) + 1);
  std::vector<index_t> col_idx(static_cast<std::size_t>(n));
  std::vector<T> inverse(static_cast<std::size_t>(n));
  const auto& a_row_ptr = a.row_ptr();
  const auto& a_col_idx = a.col_idx();
  const auto& a_values = a.values();
  for (index_t i = 0; i < n; ++i) {
    T diagonal = T(0);
    for (index_t k = a_row_ptr[i]; k < a_row_ptr[i + 1]; ++k)
      if (a_col_idx[k] == i) diagonal += a_values[k];
    if (!(diagonal > T(0)))
      throw std::runtime_error("not positive definite: diagonal entry " + std::to_string(i) +
                               " is " + std::to_string(diagonal));
    row_ptr[i + 1] = i + 1;
    col_idx[i] = i;
    inverse[i] = T(1) / diagonal;
  }
  return csr<T, cpu>(n, n, std::move(row_ptr), std::move(col_idx), std::move(inverse));
}

// ---- timing of the iteration loop -----------------------------------------------------------

/// A pair of CUDA events around a region of a stream's work.
class region_events {
 public:
  region_events() {
    check_cuda(cudaEventCreate(start_.out()), "cudaEventCreate");
    check_cuda(cudaEventCreate(stop_.out()), "cudaEventCreate");
  }
  void begin(cudaStream_t stream) {
    check_cuda(cudaEventRecord(start_.get(), stream), "cudaEventRecord");
  }
  void end(cudaStream_t stream) {
    check_cuda(cudaEventRecord(stop_.get(), stream), "cudaEventRecord");
  }
  /// Waits for the end event.
  double elapsed_ms() {
    check_cuda(cudaEventSynchronize(stop_.get()), "cudaEventSynchronize");
    float ms = 0;
    check_cuda(cudaEventElapsedTime(&ms, start_.get(), stop_.get()), "cudaEventElapsedTime");
    return ms;
  }

 private:
  cuda_event start_;
  cuda_event stop_;
};

// ---- (a) CG in Spade's vector algebra -------------------------------------------------------

/// What a solve ends with: the iterations run and the last ‖r‖ of the recurrence.
template <class T>
struct cg_outcome {
  int iterations = 0;
  T residual_norm = T(0);
};

/// Jacobi-preconditioned CG from x = 0, step for step as examples/02_conjugate_gradient.cpp.
/// Runs at most `iterations` iterations (one A·p each) and stops early once ‖r‖ < stop (stop = 0:
/// never). The last iteration skips z = M·r and the update of p, whose results nothing reads,
/// both when it converged and when the count ran out; the direct side does the same. `events`
/// bracket the iteration loop.
template <class T>
cg_outcome<T> spade_cg(const csr<T, gpu>& A, const csr<T, gpu>& M, const vector<T, gpu>& b,
                       vector<T, gpu>& x, int iterations, T stop, region_events& events) {
  x = vector<T, gpu>(A.cols());  // x₀ = 0
  vector<T, gpu> r = b - A * x, z = M * r, p = z, q;
  T rz = spade::dot(r, z);
  cg_outcome<T> outcome;
  events.begin(spade_stream());
  while (outcome.iterations < iterations) {
    q = A * p;
    const T alpha = rz / spade::dot(p, q);
    x = x + alpha * p;
    r = r - alpha * q;
    ++outcome.iterations;
    outcome.residual_norm = spade::norm(r);
    if (outcome.residual_norm < stop || outcome.iterations == iterations) break;
    z = M * r;
    const T rz_next = spade::dot(r, z);
    p = z + (rz_next / rz) * p;
    rz = rz_next;
  }
  events.end(spade_stream());
  return outcome;
}

// ---- (b) the same CG on cuSPARSE and cuBLAS -------------------------------------------------

inline cublasStatus_t blas_dot(cublasHandle_t h, int n, const float* x, const float* y, float* r) {
  return cublasSdot(h, n, x, 1, y, 1, r);
}
inline cublasStatus_t blas_dot(cublasHandle_t h, int n, const double* x, const double* y,
                               double* r) {
  return cublasDdot(h, n, x, 1, y, 1, r);
}
inline cublasStatus_t blas_nrm2(cublasHandle_t h, int n, const float* x, float* r) {
  return cublasSnrm2(h, n, x, 1, r);
}
inline cublasStatus_t blas_nrm2(cublasHandle_t h, int n, const double* x, double* r) {
  return cublasDnrm2(h, n, x, 1, r);
}
inline cublasStatus_t blas_axpy(cublasHandle_t h, int n, const float* a, const float* x, float* y) {
  return cublasSaxpy(h, n, a, x, 1, y, 1);
}
inline cublasStatus_t blas_axpy(cublasHandle_t h, int n, const double* a, const double* x,
                                double* y) {
  return cublasDaxpy(h, n, a, x, 1, y, 1);
}
/// y = a·x + b·y as GEAM on n × 1 matrices (in place on y is allowed with op N): one kernel that
/// reads x and y once and writes y once, as Spade's axpby does; SCAL + AXPY would move y twice.
inline cublasStatus_t blas_axpby(cublasHandle_t h, int n, const float* a, const float* x,
                                 const float* b, float* y) {
  return cublasSgeam(h, CUBLAS_OP_N, CUBLAS_OP_N, n, 1, a, x, n, b, y, n, y, n);
}
inline cublasStatus_t blas_axpby(cublasHandle_t h, int n, const double* a, const double* x,
                                 const double* b, double* y) {
  return cublasDgeam(h, CUBLAS_OP_N, CUBLAS_OP_N, n, 1, a, x, n, b, y, n, y, n);
}

/// y = A·x with cusparseSpMV on CSR for fixed x and y buffers: descriptors, workspace and
/// cusparseSpMV_preprocess made once, here.
template <class T>
class prepared_spmv {
 public:
  prepared_spmv(cusparseHandle_t handle, const csr<T, gpu>& a, const T* d_x, T* d_y,
                cusparseSpMVAlg_t algorithm, const char* name, cudaStream_t stream)
      : handle_(handle), algorithm_(algorithm), name_(name) {
    describe_csr(a_, a);
    check_cusparse(cusparseCreateConstDnVec(x_.out(), a.cols(), d_x, cuda_type<T>),
                   "cusparseCreateConstDnVec");
    check_cusparse(cusparseCreateDnVec(y_.out(), a.rows(), d_y, cuda_type<T>),
                   "cusparseCreateDnVec");
    std::size_t bytes = 0;
    check_cusparse(
        cusparseSpMV_bufferSize(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE, &one_, a_.get(),
                                x_.get(), &zero_, y_.get(), cuda_type<T>, algorithm_, &bytes),
        "cusparseSpMV_bufferSize");
    work_ = workspace(bytes, stream);
    // An algorithm without an analysis reports NOT_SUPPORTED and runs anyway.
    const cusparseStatus_t pre =
        cusparseSpMV_preprocess(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE, &one_, a_.get(),
                                x_.get(), &zero_, y_.get(), cuda_type<T>, algorithm_, work_.get());
    if (pre != CUSPARSE_STATUS_NOT_SUPPORTED) check_cusparse(pre, "cusparseSpMV_preprocess");
  }

  void run() {
    check_cusparse(cusparseSpMV(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE, &one_, a_.get(),
                                x_.get(), &zero_, y_.get(), cuda_type<T>, algorithm_, work_.get()),
                   "cusparseSpMV");
  }
  const std::string& name() const noexcept { return name_; }

 private:
  cusparseHandle_t handle_;
  cusparseSpMVAlg_t algorithm_;
  std::string name_;
  const_sp_mat a_;
  const_dn_vec x_;
  dn_vec y_;
  raw_buffer work_;
  T one_ = T(1);
  T zero_ = T(0);
};

/// The faster of CSR ALG1 and ALG2 for y = A·x (kernel time, as `spade-bench spmv` picks its
/// baseline): the direct side gets cuSPARSE's best SpMV, not its default.
template <class T>
prepared_spmv<T> fastest_spmv(cusparseHandle_t handle, const csr<T, gpu>& a, const T* d_x, T* d_y,
                              const timing_options& timing, gpu_timer& timer) {
  std::vector<prepared_spmv<T>> candidates;
  std::vector<double> medians;
  std::string refused;
  for (const auto& [algorithm, name] : {std::pair{CUSPARSE_SPMV_CSR_ALG1, "csr_alg1"},
                                        std::pair{CUSPARSE_SPMV_CSR_ALG2, "csr_alg2"}}) {
    try {
      prepared_spmv<T> spmv(handle, a, d_x, d_y, algorithm, name, timer.stream());
      medians.push_back(timer.kernel([&] { spmv.run(); }, timing).median);
      candidates.push_back(std::move(spmv));
    } catch (const library_failure& e) {
      refused += std::string(refused.empty() ? "" : "; ") + e.what();
    }
  }
  if (candidates.empty()) throw std::runtime_error("cusparseSpMV refused A: " + refused);
  const auto best = std::min_element(medians.begin(), medians.end()) - medians.begin();
  return std::move(candidates[static_cast<std::size_t>(best)]);
}

/// Device memory for n elements of T, zeroed (on `stream`).
template <class T>
raw_buffer zeroed_vector(index_t n, cudaStream_t stream) {
  const std::size_t bytes = sizeof(T) * static_cast<std::size_t>(n);
  raw_buffer v = workspace(bytes, stream);
  check_cuda(cudaMemsetAsync(v.get(), 0, bytes, stream), "cudaMemsetAsync");
  return v;
}

/// Jacobi-preconditioned CG on cuSPARSE and cuBLAS, the same steps and the same M as spade_cg,
/// on buffers, descriptors and workspaces made once (the constructor also picks the SpMV
/// algorithms, so it synchronises and takes a while). Pointer mode host: every dot and norm
/// waits for its result, as Spade's do.
template <class T>
class direct_cg {
 public:
  direct_cg(const csr<T, gpu>& a, const csr<T, gpu>& m, const vector<T, gpu>& b,
            const timing_options& timing, gpu_timer& timer)
      : n_(a.rows()),
        stream_(timer.stream()),
        sparse_(make_cusparse(stream_)),
        blas_(make_cublas(stream_)),
        d_b_(b.data()),
        x_(zeroed_vector<T>(n_, stream_)),
        r_(zeroed_vector<T>(n_, stream_)),
        z_(zeroed_vector<T>(n_, stream_)),
        p_(zeroed_vector<T>(n_, stream_)),
        q_(zeroed_vector<T>(n_, stream_)),
        a_times_p_(fastest_spmv<T>(sparse_.get(), a, p_.as<T>(), q_.as<T>(), timing, timer)),
        m_times_r_(fastest_spmv<T>(sparse_.get(), m, r_.as<T>(), z_.as<T>(), timing, timer)) {}

  /// As spade_cg: from x = 0, at most `iterations` iterations, early stop once ‖r‖ < stop.
  cg_outcome<T> solve(int iterations, T stop, region_events& events) {
    check_cuda(cudaMemsetAsync(x_.get(), 0, bytes(), stream_), "cudaMemsetAsync (x = 0)");
    // x₀ = 0, so r₀ = b − A·x₀ = b: a copy, where spade_cg runs the SpMV (outside the timing).
    check_cuda(cudaMemcpyAsync(r_.get(), d_b_, bytes(), cudaMemcpyDeviceToDevice, stream_),
               "cudaMemcpyAsync (r = b)");
    m_times_r_.run();
    check_cuda(cudaMemcpyAsync(p_.get(), z_.get(), bytes(), cudaMemcpyDeviceToDevice, stream_),
               "cudaMemcpyAsync (p = z)");
    T rz = dot(r_, z_);
    cg_outcome<T> outcome;
    events.begin(stream_);
    while (outcome.iterations < iterations) {
      a_times_p_.run();  // q = A·p
      const T alpha = rz / dot(p_, q_);
      const T minus_alpha = -alpha;
      check_cublas(blas_axpy(blas_.get(), n_, &alpha, p_.as<T>(), x_.as<T>()), "axpy (x += α·p)");
      check_cublas(blas_axpy(blas_.get(), n_, &minus_alpha, q_.as<T>(), r_.as<T>()),
                   "axpy (r −= α·q)");
      ++outcome.iterations;
      check_cublas(blas_nrm2(blas_.get(), n_, r_.as<T>(), &outcome.residual_norm), "nrm2 (‖r‖)");
      if (outcome.residual_norm < stop || outcome.iterations == iterations) break;
      m_times_r_.run();  // z = M·r
      const T rz_next = dot(r_, z_);
      const T one = T(1);
      const T beta = rz_next / rz;
      check_cublas(blas_axpby(blas_.get(), n_, &one, z_.as<T>(), &beta, p_.as<T>()),
                   "geam (p = z + β·p)");
      rz = rz_next;
    }
    events.end(stream_);
    return outcome;
  }

  /// x of the last solve, on the host (waits for it).
  std::vector<T> solution() const {
    std::vector<T> x(static_cast<std::size_t>(n_));
    check_cuda(cudaMemcpyAsync(x.data(), x_.get(), bytes(), cudaMemcpyDeviceToHost, stream_),
               "cudaMemcpyAsync (x)");
    check_cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
    return x;
  }
  /// The cuSPARSE algorithms picked for A·p and M·r.
  std::string spmv_names() const { return a_times_p_.name() + "," + m_times_r_.name(); }

 private:
  std::size_t bytes() const noexcept { return sizeof(T) * static_cast<std::size_t>(n_); }
  T dot(const raw_buffer& u, const raw_buffer& v) {
    T result = T(0);
    check_cublas(blas_dot(blas_.get(), n_, u.as<T>(), v.as<T>(), &result), "dot");
    return result;
  }

  index_t n_;
  cudaStream_t stream_;
  cusparse_handle sparse_;
  cublas_handle blas_;
  const T* d_b_;
  raw_buffer x_;
  raw_buffer r_;
  raw_buffer z_;
  raw_buffer p_;
  raw_buffer q_;
  prepared_spmv<T> a_times_p_;
  prepared_spmv<T> m_times_r_;
};

// ---- one matrix -----------------------------------------------------------------------------

struct cg_row {
  std::string matrix;
  index_t rows = 0;
  std::int64_t nnz = 0;
  std::string precision;
  int iterations = 0;
  bool converged = false;  // Spade's first solve reached the tolerance within the cap
  stats spade;
  stats direct;
  double ratio = NAN;  // direct_ms / spade_ms: > 1, Spade faster
  double spade_residual = NAN;
  double direct_residual = NAN;
  std::string spade_kernel;         // A·p
  std::string spade_jacobi_kernel;  // M·r
  std::string direct_spmv;          // cuSPARSE algorithms for A·p, M·r
  std::string check = "not run";
  std::string note;
};

const std::vector<std::string> cg_csv_columns = {"matrix",
                                                 "rows",
                                                 "nnz",
                                                 "precision",
                                                 "iterations",
                                                 "converged",
                                                 "spade_ms",
                                                 "spade_ms_min",
                                                 "spade_ms_max",
                                                 "direct_ms",
                                                 "direct_ms_min",
                                                 "direct_ms_max",
                                                 "ratio",
                                                 "spade_us_per_iter",
                                                 "direct_us_per_iter",
                                                 "spade_residual",
                                                 "direct_residual",
                                                 "spade_kernel",
                                                 "spade_jacobi_kernel",
                                                 "direct_spmv",
                                                 "check",
                                                 "note",
                                                 "commit",
                                                 "device",
                                                 "command"};

inline double per_iteration_us(double ms, int iterations) {
  return iterations > 0 ? ms * 1e3 / iterations : NAN;
}

std::vector<std::string> cg_csv_cells(const cg_row& r, const run_options& ro) {
  return {r.matrix,
          std::to_string(r.rows),
          std::to_string(r.nnz),
          r.precision,
          std::to_string(r.iterations),
          r.converged ? "yes" : "no",
          cell(r.spade.median),
          cell(r.spade.min),
          cell(r.spade.max),
          cell(r.direct.median),
          cell(r.direct.min),
          cell(r.direct.max),
          cell(r.ratio),
          cell(per_iteration_us(r.spade.median, r.iterations)),
          cell(per_iteration_us(r.direct.median, r.iterations)),
          cell(r.spade_residual),
          cell(r.direct_residual),
          r.spade_kernel,
          r.spade_jacobi_kernel,
          r.direct_spmv,
          r.check,
          r.note,
          ro.commit,
          ro.device,
          ro.command};
}

void print_cg_header() {
  std::printf("%-18s %9s %10s %6s %4s %10s %10s %6s %9s %9s %9s %9s %-15s %-17s %s\n", "matrix",
              "rows", "nnz", "iters", "conv", "spade_ms", "direct_ms", "ratio", "spade_us",
              "direct_us", "spade_res", "direct_res", "spade_kernel", "direct_spmv", "check");
}

void print_cg_row(const cg_row& r) {
  std::printf("%-18s %9d %10" PRId64
              " %6d %4s %10.4g %10.4g %6.3f %9.4g %9.4g %9.2e %9.2e %-15s %-17s %s\n",
              r.matrix.c_str(), r.rows, r.nnz, r.iterations, r.converged ? "yes" : "no",
              r.spade.median, r.direct.median, r.ratio,
              per_iteration_us(r.spade.median, r.iterations),
              per_iteration_us(r.direct.median, r.iterations), r.spade_residual, r.direct_residual,
              r.spade_kernel.c_str(), r.direct_spmv.c_str(), r.check.c_str());
  std::fflush(stdout);
}

/// ‖b − A·x‖₂ / ‖b‖₂ on the host in double, A·x through spade::reference (Eigen).
template <class T>
double relative_residual(const csr<double, cpu>& a, const vector<double, cpu>& b,
                         const std::vector<T>& x) {
  const vector<double, cpu> xd(std::vector<double>(x.begin(), x.end()));
  const std::vector<double> ax = spade::reference(a * xd).values();
  double r2 = 0;
  double b2 = 0;
  for (std::size_t i = 0; i < ax.size(); ++i) {
    const double bi = b.values()[i];
    r2 += (bi - ax[i]) * (bi - ax[i]);
    b2 += bi * bi;
  }
  return std::sqrt(r2 / b2);
}

/// Both solutions must be finite, and where Spade's solve converged the two residuals must be
/// close: the same iterations in the same arithmetic differ by rounding only, while a wrong
/// step leaves a residual orders of magnitude off. A solve stopped by the cap is not compared:
/// far from convergence CG's residual swings with rounding (ex10hs).
inline void judge_residuals(cg_row& r, double tolerance) {
  const double low = std::min(r.spade_residual, r.direct_residual);
  const double high = std::max(r.spade_residual, r.direct_residual);
  r.check = "ok";
  if (!std::isfinite(r.spade_residual) || !std::isfinite(r.direct_residual)) {
    r.check = "FAILED";
    append_note(r.note, "a residual is not finite");
  } else if (!r.converged) {
    append_note(r.note, "the iteration cap ran out first: residuals not compared");
  } else if (high > 10 * tolerance && high > 100 * low) {
    r.check = "FAILED";
    append_note(r.note, "the two residuals differ by more than 100x");
  }
}

template <class T>
cg_row bench_cg(const matrix_case<T>& mc, const csr<T, cpu>& host, int max_iterations,
                double tolerance, int reps, const run_options& ro, gpu_timer& timer) {
  cg_row row;
  row.matrix = mc.name;
  row.rows = host.rows();
  row.nnz = host.nnz();
  row.precision = precision_name<T>();
  const csr<T, gpu> A = to_gpu(host);
  const csr<T, gpu> M = to_gpu(jacobi_of(host));
  const vector<T, cpu> b_host = random_vector<T>(host.rows(), ro.seed);
  const vector<T, gpu> b = to_gpu(b_host);
  // The plan depends on types and sizes only, so b stands for p and r here.
  row.spade_kernel = chosen_kernel(explain(A * b));
  row.spade_jacobi_kernel = chosen_kernel(explain(M * b));

  // Spade's first solve fixes the iteration count and is its warm-up (the plan, conversions
  // cached on A, the pool's growth).
  region_events events;
  vector<T, gpu> x_spade;
  const T stop = static_cast<T>(tolerance) * spade::norm(b);
  const cg_outcome<T> first = spade_cg(A, M, b, x_spade, max_iterations, stop, events);
  row.iterations = first.iterations;
  row.converged = first.residual_norm < stop;

  direct_cg<T> direct(A, M, b, ro.timing, timer);
  row.direct_spmv = direct.spmv_names();
  direct.solve(row.iterations, T(0), events);  // warm-up

  std::vector<double> spade_ms;
  std::vector<double> direct_ms;
  for (int i = 0; i < reps; ++i) {
    spade_cg(A, M, b, x_spade, row.iterations, T(0), events);
    spade_ms.push_back(events.elapsed_ms());
    direct.solve(row.iterations, T(0), events);
    direct_ms.push_back(events.elapsed_ms());
  }
  row.spade = summarize(std::move(spade_ms));
  row.direct = summarize(std::move(direct_ms));
  if (row.spade.median > 0) row.ratio = row.direct.median / row.spade.median;

  const csr<double, cpu> a_double = to_double(host);
  const vector<double, cpu> b_double = to_double(b_host);
  row.spade_residual = relative_residual(a_double, b_double, x_spade.values().to_host());
  row.direct_residual = relative_residual(a_double, b_double, direct.solution());
  judge_residuals(row, tolerance);
  return row;
}

// ---- the command ----------------------------------------------------------------------------

/// spade-bench cg: prints a table, writes CSV rows to --csv; exit 3 when a solve failed its
/// check or raised an error.
template <class T>
int command_cg(const options& opt, const run_options& ro) {
  set_options so;
  const char* env = std::getenv("SPADE_MATRIX_DIR");
  so.matrix_dir = opt.get("matrices", env ? env : "");
  so.quick = opt.has("quick");
  const std::string sets = opt.get("sets", "all");
  if (sets != "all" && sets != "real" && sets != "synthetic")
    throw std::invalid_argument("--sets takes all, real or synthetic, not '" + sets + "'");
  so.real = sets == "all" || sets == "real";
  so.synthetic = sets == "all" || sets == "synthetic";
  so.only = opt.get("only");
  so.seed = ro.seed;
  if (so.real && so.matrix_dir.empty())
    std::printf("no --matrices DIR and no $SPADE_MATRIX_DIR: real matrices skipped\n");
  const int max_iterations = static_cast<int>(opt.number("max-iterations", 2000));
  // fp32 cannot reach 1e-10: its residual stalls near ε·κ-ish levels (ε ≈ 6e-8).
  const double tolerance = opt.real("tolerance", std::is_same_v<T, float> ? 1e-5 : 1e-10);
  const int reps = std::max<int>(1, static_cast<int>(opt.number("reps", 5)));
  if (max_iterations < 1) throw std::invalid_argument("--max-iterations must be at least 1");

  gpu_timer timer(spade_stream());
  const auto cases = cg_matrix_set<T>(so);
  std::printf(
      "cg (%s): Jacobi-preconditioned CG from x = 0, b = random_vector(seed %llu); iterations "
      "fixed by Spade's first solve (‖r‖ < %g·‖b‖ or at most %d); then the median of %d timed "
      "solves per side of exactly that many iterations, CUDA events around the loop\n",
      precision_name<T>(), static_cast<unsigned long long>(ro.seed), tolerance, max_iterations,
      reps);
  std::printf(
      "ratio = direct_ms / spade_ms (> 1: Spade faster); *_us: per iteration; *_res: "
      "‖b − A·x‖/‖b‖ recomputed on the host in double; %zu matrices\n\n",
      cases.size());
  csv_writer csv(ro.csv, cg_csv_columns);
  print_cg_header();
  std::vector<cg_row> rows;
  for (const auto& mc : cases) {
    cg_row row;
    try {
      const csr<T, cpu> host = mc.make();
      row = bench_cg(mc, host, max_iterations, tolerance, reps, ro, timer);
    } catch (const std::exception& e) {
      row.matrix = mc.name;
      row.precision = precision_name<T>();
      row.check = "error";
      row.note = e.what();
      std::fprintf(stderr, "%s: %s\n", mc.name.c_str(), e.what());
    }
    trim_default_pool();
    print_cg_row(row);
    csv.write(cg_csv_cells(row, ro));
    rows.push_back(std::move(row));
  }

  std::vector<double> ratios;
  int failed = 0;
  for (const auto& r : rows) {
    if (r.check != "ok") ++failed;
    if (!std::isnan(r.ratio)) ratios.push_back(r.ratio);
    if (!r.note.empty()) std::printf("%s: %s\n", r.matrix.c_str(), r.note.c_str());
  }
  std::printf("geomean ratio (direct_ms / spade_ms, > 1: Spade faster): %.3f over %zu\n",
              geomean(ratios), ratios.size());
  std::printf("failed or error: %d of %zu\ndevice: %s\ncommit: %s\n", failed, rows.size(),
              ro.device.c_str(), ro.commit.c_str());
  return failed > 0 ? 3 : 0;
}
