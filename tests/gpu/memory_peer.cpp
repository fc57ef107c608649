// A second process for tests/gpu/test_gpu_memory.cpp: takes `bytes` of device memory through
// Spade's default context, writes them, and exits 0; 3 with the message when it cannot.
#include <cstdio>
#include <cstdlib>

#include <spade/spade.hpp>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: gpu_memory_peer BYTES\n");
    return 2;
  }
  const auto bytes = static_cast<std::size_t>(std::strtoull(argv[1], nullptr, 10));
  try {
    spade::device_buffer<unsigned char> block(bytes);
    block.fill_zero();
    spade::default_context().synchronize();
  } catch (const spade::error& e) {
    std::fprintf(stderr, "gpu_memory_peer: %s\n", e.what());
    return 3;
  }
  std::printf("gpu_memory_peer: took and wrote %zu bytes\n", bytes);
  return 0;
}
