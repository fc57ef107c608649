// Standalone reproducer (no Spade): cusparseSpMV on a run of 31/32/33-row CSR matrices returns
// y[31] = 0 for one 32-row matrix whose product is right in a fresh process.
// Build: nvcc -std=c++17 -O2 -arch=sm_90 cusparse_spmv_last_row.cu -lcusparse -o repro
// Run:   ./repro [first_iteration]   (prints the wrong rows and a summary line)
#include <cuda_runtime.h>
#include <cusparse.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

int main(int argc, char** argv) {
  // Matrices before this iteration are generated but not multiplied.
  const int first = argc > 1 ? std::atoi(argv[1]) : 0;
  cusparseHandle_t handle;
  cusparseCreate(&handle);
  std::mt19937_64 gen(7);
  int wrong = 0;
  int run = 0;
  for (int it = 0; it < 600; ++it) {
    const int n = 31 + it % 3;
    const double density = static_cast<double>(gen() % 100) / 400.0;
    std::vector<int> row_ptr(n + 1, 0), col_idx;
    std::vector<float> values;
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j)
        if (static_cast<double>(gen() % 10000) / 10000.0 < density) {
          col_idx.push_back(j);
          values.push_back(0.5f + static_cast<float>(gen() % 100) / 100.0f);
        }
      row_ptr[i + 1] = static_cast<int>(col_idx.size());
    }
    std::vector<float> x(n);
    for (float& v : x)
      v = 1.0f + static_cast<float>(gen() % 10);
    if (it < first) continue;
    ++run;
    const int nnz = static_cast<int>(col_idx.size());
    int *d_row_ptr, *d_col_idx;
    float *d_values, *d_x, *d_y;
    cudaMalloc(&d_row_ptr, sizeof(int) * (n + 1));
    cudaMalloc(&d_col_idx, sizeof(int) * (nnz + 1));
    cudaMalloc(&d_values, sizeof(float) * (nnz + 1));
    cudaMalloc(&d_x, sizeof(float) * n);
    cudaMalloc(&d_y, sizeof(float) * n);
    cudaMemcpy(d_row_ptr, row_ptr.data(), sizeof(int) * (n + 1), cudaMemcpyHostToDevice);
    cudaMemcpy(d_col_idx, col_idx.data(), sizeof(int) * nnz, cudaMemcpyHostToDevice);
    cudaMemcpy(d_values, values.data(), sizeof(float) * nnz, cudaMemcpyHostToDevice);
    cudaMemcpy(d_x, x.data(), sizeof(float) * n, cudaMemcpyHostToDevice);
    cudaMemset(d_y, 0xFF, sizeof(float) * n);  // NaN: every row must be written
    cusparseSpMatDescr_t a;
    cusparseDnVecDescr_t dx, dy;
    cusparseCreateCsr(&a, n, n, nnz, d_row_ptr, d_col_idx, d_values, CUSPARSE_INDEX_32I,
                      CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F);
    cusparseCreateDnVec(&dx, n, d_x, CUDA_R_32F);
    cusparseCreateDnVec(&dy, n, d_y, CUDA_R_32F);
    const float alpha = 1.0f, beta = 0.0f;
    std::size_t bytes = 0;
    cusparseSpMV_bufferSize(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, a, dx, &beta, dy,
                            CUDA_R_32F, CUSPARSE_SPMV_CSR_ALG1, &bytes);
    void* work;
    cudaMalloc(&work, bytes + 1);
    const cusparseStatus_t status =
        cusparseSpMV(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, a, dx, &beta, dy, CUDA_R_32F,
                     CUSPARSE_SPMV_CSR_ALG1, work);
    std::vector<float> y(n);
    cudaMemcpy(y.data(), d_y, sizeof(float) * n, cudaMemcpyDeviceToHost);
    for (int i = 0; i < n; ++i) {
      double want = 0;
      for (int k = row_ptr[i]; k < row_ptr[i + 1]; ++k)
        want += double(values[k]) * x[col_idx[k]];
      if (status != CUSPARSE_STATUS_SUCCESS || !(std::abs(y[i] - want) <= 1e-4 * (1 + want))) {
        std::printf("iteration %d (%d rows, %d entries): row %d is %g, want %g (status %d)\n", it,
                    n, nnz, i, y[i], want, static_cast<int>(status));
        ++wrong;
        break;
      }
    }
    cusparseDestroySpMat(a);
    cusparseDestroyDnVec(dx);
    cusparseDestroyDnVec(dy);
    cudaFree(work);
    cudaFree(d_row_ptr);
    cudaFree(d_col_idx);
    cudaFree(d_values);
    cudaFree(d_x);
    cudaFree(d_y);
  }
  int version = 0;
  cusparseGetVersion(handle, &version);
  std::printf("cuSPARSE %d: %d wrong products of %d (CUDA error state: %s)\n", version, wrong, run,
              cudaGetErrorString(cudaGetLastError()));
  cusparseDestroy(handle);
  return wrong == 0 ? 0 : 1;
}
