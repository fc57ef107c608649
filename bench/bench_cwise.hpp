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
