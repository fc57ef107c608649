// spade-bench cwise: fused element-wise maps and reductions against the copy bandwidth and CUB
// (BENCHMARKS.md's bars; bench/cwise_cupy.py times CuPy on the same expressions in the same run),
// and the first-call cost of a generated kernel: cold (NVRTC), from the disk cache, in memory.
// Included by spade_bench.cpp inside its namespace, after run_options (like bench_cg.hpp); the
// headers it needs are included at the top of spade_bench.cpp.
#pragma once

/// Which rows `spade-bench cwise` times: `elementwise` the maps (contiguous and through views)
/// and the first-call costs, `reduce` the reductions, `cwise` both.
enum class cwise_part { all, elementwise, reduce };

template <class T>
int command_cwise(const options& opt, const run_options& ro, cwise_part part = cwise_part::all) {
  const long long n = opt.number("n", 1LL << 26);
  gpu_timer timer(spade_stream());
  const double copy = timer.copy_bandwidth_gbps();
  const char* scalar = std::is_same_v<T, float> ? "float" : "double";
  std::printf("cwise: n = %lld %s; device copy %.0f GB/s\n", n, scalar, copy);
  const auto idx = static_cast<index_t>(n);
  const vector<T, gpu> x = to_gpu(random_vector<T>(idx, ro.seed)),
                       y = to_gpu(random_vector<T>(idx, ro.seed + 1)),
                       w = to_gpu(random_vector<T>(idx, ro.seed + 2));
  vector<T, gpu> out(static_cast<index_t>(n));
  csv_writer csv(ro.csv, {"case", "scalar", "n", "ms", "gbytes_per_s", "fraction_of_copy",
                          "baseline_ms", "ratio", "commit", "device"});
  const auto report = [&](const char* name, double ms, double bytes, double baseline_ms) {
    const double gbs = bytes / (ms * 1e-3) / 1e9;
    std::printf("  %-44s %9.4f ms %7.0f GB/s %5.1f %% of copy", name, ms, gbs, 100 * gbs / copy);
    if (baseline_ms > 0) std::printf("  %.3fx the baseline", baseline_ms / ms);
    std::printf("\n");
    csv.write({name, scalar, std::to_string(n), std::to_string(ms), std::to_string(gbs),
               std::to_string(gbs / copy), baseline_ms > 0 ? std::to_string(baseline_ms) : "",
               baseline_ms > 0 ? std::to_string(baseline_ms / ms) : "", ro.commit, ro.device});
  };
  const double elem = sizeof(T);

  const bool maps = part != cwise_part::reduce, reductions = part != cwise_part::elementwise;
  if (maps) {
    // The map BENCHMARKS.md names: 2x + 3y - sqrt(|w|)x, 3 inputs and 1 output.
    const auto map = [&] {
      out = T(2) * x + T(3) * y - spade::cwise_product(spade::sqrt(spade::abs(w)), x);
    };
    map();
    report("map 2x+3y-sqrt(|w|)x", timer.kernel(map, ro.timing).median, 4 * elem * n, 0);
    const auto deep = [&] {
      out = spade::tanh(spade::exp(-spade::square(x)) * T(0.5) + spade::cwise_max(y, w)) / T(3);
    };
    deep();
    report("map tanh(exp(-x^2)/2 + max(y, w))/3", timer.kernel(deep, ro.timing).median,
           4 * elem * n, 0);

    // Views: 2a + 3b over (side-1)-square blocks of side × side matrices, read and written through
    // the leading dimension in one fused pass (each block row a run of side-1 elements), beside
    // the same sum over the whole matrices (not element-wise: the sum plan, cuBLAS GEAM); and a
    // column of a row-major matrix (one element per row: the worst stride) copied into a vector.
    const auto side = static_cast<index_t>(std::sqrt(static_cast<double>(n)));
    const dense<T, gpu> ma = to_gpu(random_dense<T>(side, side, ro.seed)),
                        mb = to_gpu(random_dense<T>(side, side, ro.seed + 1));
    dense<T, gpu> mc(side, side);
    const double cells = double(side) * side, inner = double(side - 1) * (side - 1);
    const auto whole = [&] { mc = T(2) * ma + T(3) * mb; };
    whole();
    const double whole_ms = timer.kernel(whole, ro.timing).median;
    report("matrix 2a+3b (whole: the sum plan, cuBLAS GEAM)", whole_ms, 3 * elem * cells, 0);
    const auto blocked = [&] {
      spade::block(mc, 1, 1, side - 1, side - 1) =
          T(2) * spade::block(ma, 0, 0, side - 1, side - 1) +
          T(3) * spade::block(mb, 1, 0, side - 1, side - 1);
    };
    blocked();
    report("block(c) = 2 block(a) + 3 block(b)", timer.kernel(blocked, ro.timing).median,
           3 * elem * inner, 0);
    // The same with every block row starting at column 0 (aligned runs): separates the cost of
    // c's rows starting one element past a sector boundary above.
    const auto aligned = [&] {
      spade::block(mc, 1, 0, side - 1, side - 1) =
          T(2) * spade::block(ma, 0, 0, side - 1, side - 1) +
          T(3) * spade::block(mb, 1, 0, side - 1, side - 1);
    };
    aligned();
    report("block(c) = ... (rows from column 0)", timer.kernel(aligned, ro.timing).median,
           3 * elem * inner, 0);
    vector<T, gpu> column(side);
    const auto strided = [&] { column = spade::col(ma, 1); };
    strided();
    report("vector = col(a, 1) (stride side)", timer.kernel(strided, ro.timing).median,
           2 * elem * side, 0);

    // Views as product operands. The planned paths (a block times a vector: GEMV on the block
    // in place; a strided x or GEMM operands: copied first) beside the contiguous products and
    // cuBLAS called directly on the views in place (the measurement behind the rule,
    // eval/operands.hpp strided_product). Bytes: the matrix read (GEMV), 3 blocks (GEMM).
    const index_t s1 = side - 1, half_side = side / 2;
    const auto viewed = [](const dense<T, gpu>& m, index_t i, index_t j) {
      return strided_operand<T>{m.data() + m.offset(i, j), 0,    0,
                                m.leading_dimension(),     true, m.values().owner()};
    };
    const vector<T, gpu> xs = to_gpu(random_vector<T>(s1, ro.seed + 3));
    const dense<T, gpu> block_copy = spade::block(mb, 1, 1, s1, s1);
    vector<T, gpu> product_out(s1);
    const auto gemv_contiguous = [&] { product_out = block_copy * xs; };
    const auto gemv_copy_path = [&] {
      const dense<T, gpu> copied = spade::block(mb, 1, 1, s1, s1);
      product_out = copied * xs;
    };
    const auto gemv_in_place = [&] { product_out = spade::block(mb, 1, 1, s1, s1) * xs; };
    gemv_contiguous();
    gemv_copy_path();
    gemv_in_place();
    const double gemv_ms = timer.kernel(gemv_contiguous, ro.timing).median;
    const double block_bytes = elem * double(s1) * s1;
    report("y = B * x, B a contiguous copy of the block (GEMV)", gemv_ms, block_bytes, 0);
    report("y = block(b) * x copied first (the copy path)",
           timer.kernel(gemv_copy_path, ro.timing).median, block_bytes, gemv_ms);
    report("y = block(b) * x (planned: GEMV on the block in place)",
           timer.kernel(gemv_in_place, ro.timing).median, block_bytes, gemv_ms);

    const vector<T, gpu> column_copy = spade::col(ma, 1);
    vector<T, gpu> full_out(side);
    const auto gemv_x_contiguous = [&] { full_out = mb * column_copy; };
    const auto gemv_x_planned = [&] { full_out = mb * spade::col(ma, 1); };
    auto x_in_place = viewed(ma, 0, 1);
    x_in_place.rows = side;
    x_in_place.cols = 1;
    auto whole_b = viewed(mb, 0, 0);
    whole_b.rows = side;
    whole_b.cols = side;
    const auto gemv_x_in_place = [&] {
      device::gemv_strided(T(1), whole_b, device::operation::none, x_in_place, T(0), full_out);
    };
    gemv_x_contiguous();
    gemv_x_planned();
    gemv_x_in_place();
    const double gemv_x_ms = timer.kernel(gemv_x_contiguous, ro.timing).median;
    report("y = b * x, x a contiguous copy of col(a, 1)", gemv_x_ms, elem * cells, 0);
    report("y = b * col(a, 1) (planned: x copied first)",
           timer.kernel(gemv_x_planned, ro.timing).median, elem * cells, gemv_x_ms);
    report("  cuBLAS GEMV reading col(a, 1) in place",
           timer.kernel(gemv_x_in_place, ro.timing).median, elem * cells, gemv_x_ms);

    const dense<T, gpu> block_a = spade::block(ma, 1, 1, half_side, half_side),
                        block_b = spade::block(mb, 0, 1, half_side, half_side);
    dense<T, gpu> gemm_out(half_side, half_side);
    const auto gemm_contiguous = [&] { gemm_out = block_a * block_b; };
    const auto gemm_planned = [&] {
      gemm_out = spade::block(ma, 1, 1, half_side, half_side) *
                 spade::block(mb, 0, 1, half_side, half_side);
    };
    auto a_in_place = viewed(ma, 1, 1), b_in_place = viewed(mb, 0, 1);
    a_in_place.rows = a_in_place.cols = b_in_place.rows = b_in_place.cols = half_side;
    const auto gemm_in_place = [&] {
      device::gemm_strided(T(1), a_in_place, device::operation::none, b_in_place,
                           device::operation::none, T(0), gemm_out);
    };
    gemm_contiguous();
    gemm_planned();
    gemm_in_place();
    const double gemm_ms = timer.kernel(gemm_contiguous, ro.timing).median;
    const double gemm_bytes = 3 * elem * double(half_side) * half_side;
    report("C = A * B on contiguous block copies (GEMM)", gemm_ms, gemm_bytes, 0);
    report("C = block(a) * block(b) (planned: blocks copied first)",
           timer.kernel(gemm_planned, ro.timing).median, gemm_bytes, gemm_ms);
    report("  cuBLAS GEMM reading both blocks in place",
           timer.kernel(gemm_in_place, ro.timing).median, gemm_bytes, gemm_ms);

    // Casts to and from the 16-bit storage types (each element read in one type, written in the
    // other); bench/cwise_cupy.py times CuPy's copyto into float16 on the same bytes.
    vector<half, gpu> halves(idx);
    vector<bfloat16, gpu> bfloats(idx);
    const auto narrow = [&] { halves = spade::cast<half>(x); };
    narrow();
    report("vector<half> = cast<half>(x)", timer.kernel(narrow, ro.timing).median, (elem + 2) * n,
           0);
    const auto narrow_b = [&] { bfloats = spade::cast<bfloat16>(x); };
    narrow_b();
    report("vector<bfloat16> = cast<bfloat16>(x)", timer.kernel(narrow_b, ro.timing).median,
           (elem + 2) * n, 0);
    const auto widen = [&] { out = spade::cast<T>(halves); };
    widen();
    report("x = cast<T>(half)", timer.kernel(widen, ro.timing).median, (elem + 2) * n, 0);
  }

  T sink = 0;
  if (reductions) {
    // Reductions return to the host (they synchronise), so both sides are timed with the result
    // copied back; CUB sums the materialised input.
    T* d_result = nullptr;
    check_cuda(cudaMalloc(reinterpret_cast<void**>(&d_result), sizeof(T)), "cudaMalloc");
    std::size_t temp_bytes = 0;
    check_cuda(cub_sum<T>(x.data(), d_result, n, nullptr, &temp_bytes, spade_stream()), "cub");
    raw_buffer temp(temp_bytes, spade_stream());
    const auto cub = [&] {
      check_cuda(cub_sum<T>(x.data(), d_result, n, temp.get(), &temp_bytes, spade_stream()), "cub");
      check_cuda(
          cudaMemcpyAsync(&sink, d_result, sizeof(T), cudaMemcpyDeviceToHost, spade_stream()),
          "cudaMemcpyAsync");
      check_cuda(cudaStreamSynchronize(spade_stream()), "cudaStreamSynchronize");
    };
    const double cub_ms = timer.kernel(cub, ro.timing, false).median;
    report("CUB DeviceReduce::Sum(x) + copy back", cub_ms, elem * n, 0);
    report("sum(x)", timer.kernel([&] { sink = spade::sum(x); }, ro.timing, false).median, elem * n,
           cub_ms);
    report("squared_norm(2x+3y)",
           timer.kernel([&] { sink = spade::squared_norm(T(2) * x + T(3) * y); }, ro.timing, false)
               .median,
           2 * elem * n, 0);
    report("dot(abs(x), y)",
           timer.kernel([&] { sink = spade::dot(spade::abs(x), y); }, ro.timing, false).median,
           2 * elem * n, 0);
    cudaFree(d_result);
  }
  if (!maps) return 0;

  // First calls of a kernel never seen: cold (NVRTC into an empty cache directory), then from
  // the disk cache (loaded kernels forgotten), then in memory.
  const auto dir =
      std::filesystem::temp_directory_path() / ("spade-bench-jit-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  ::setenv("SPADE_CACHE_DIR", dir.c_str(), 1);
  const auto first = [&] {
    jit_forget_loaded_kernels();
    const auto t0 = std::chrono::steady_clock::now();
    out = spade::cos(x) * T(7) + spade::log(spade::abs(y) + T(1));
    default_context().synchronize();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  };
  const double cold = first(), disk = first();
  const auto t0 = std::chrono::steady_clock::now();
  out = spade::cos(x) * T(7) + spade::log(spade::abs(y) + T(1));
  default_context().synchronize();
  const double warm =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf(
      "  first call: cold %.1f ms (NVRTC), from the disk cache %.2f ms, in memory %.3f ms "
      "(wall, with the %lld-element kernel)\n",
      cold, disk, warm, n);
  csv.write({"first call cold", scalar, std::to_string(n), std::to_string(cold), "", "", "", "",
             ro.commit, ro.device});
  csv.write({"first call from disk", scalar, std::to_string(n), std::to_string(disk), "", "", "",
             "", ro.commit, ro.device});
  std::filesystem::remove_all(dir);
  (void)sink;
  return 0;
}
