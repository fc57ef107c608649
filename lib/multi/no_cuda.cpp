// spade::cluster for builds without CUDA: every use reports no_device.
#include <string>

#include "spade/core/error.hpp"
#include "spade/multi/cluster.hpp"

namespace spade {

namespace {
[[noreturn]] void no_cuda() {
  throw no_device(
      "no usable CUDA device: Spade was built without CUDA (SPADE_WITH_CUDA=OFF or no CUDA "
      "toolkit found); a spade::cluster needs GPUs");
}
}  // namespace

struct cluster::state {};

cluster cluster::local() {
  no_cuda();
}
cluster cluster::local(int) {
  no_cuda();
}
int cluster::size() const noexcept {
  return 0;
}
bool cluster::single_process() const noexcept {
  return true;
}
const std::vector<int>& cluster::my_parts() const noexcept {
  static const std::vector<int> none;
  return none;
}
context& cluster::context_of(int) const {
  no_cuda();
}
int cluster::device_of(int) const {
  no_cuda();
}
std::string cluster::describe() const {
  return "an empty cluster";
}
void cluster::set_timeout(double) {
  no_cuda();
}
double cluster::timeout() const noexcept {
  return 0.0;
}

namespace detail {
nccl_id new_nccl_id() {
  no_cuda();
}
int visible_device_count() noexcept {
  return 0;
}
device_uuid uuid_of(int) noexcept {
  return {};
}
cluster join_cluster(int, int, const nccl_id&, int) {
  no_cuda();
}
std::vector<std::vector<std::int64_t>> exchange_counts(
    const cluster&, const std::vector<std::vector<std::int64_t>>&) {
  no_cuda();
}
void post_exchange(const cluster&, const std::vector<part_exchange>&, bool) {
  no_cuda();
}
void order_communication(const cluster&) {
  no_cuda();
}
void join_exchange(const cluster&) {
  no_cuda();
}
void synchronize(const cluster&) {
  no_cuda();
}
double combine_parts(const cluster&, const std::vector<double>&, part_combine) {
  no_cuda();
}
template <scalar T>
void pack_rows(const cluster&, int, const T*, index_t, index_t, bool, const index_t*, index_t, T*) {
  no_cuda();
}
template <scalar T>
void scatter_add_rows(context&, const T*, index_t, index_t, const index_t*, T*, index_t, bool) {
  no_cuda();
}
template void scatter_add_rows<float>(context&, const float*, index_t, index_t, const index_t*,
                                      float*, index_t, bool);
template void scatter_add_rows<double>(context&, const double*, index_t, index_t, const index_t*,
                                       double*, index_t, bool);
void add_to_indices(context&, index_t*, std::size_t, std::int64_t) {
  no_cuda();
}
void fill_interleaved_rows(context&, index_t, index_t, index_t*) {
  no_cuda();
}
void copy_strided(context&, const index_t*, std::size_t, std::size_t, index_t*) {
  no_cuda();
}
std::int64_t gather_row_pointers(context&, const index_t*, const index_t*, index_t, index_t*) {
  no_cuda();
}
template <scalar T>
void gather_row_entries(context&, const index_t*, const index_t*, const T*, const index_t*, index_t,
                        const index_t*, index_t*, T*) {
  no_cuda();
}
template void gather_row_entries<float>(context&, const index_t*, const index_t*, const float*,
                                        const index_t*, index_t, const index_t*, index_t*, float*);
template void gather_row_entries<double>(context&, const index_t*, const index_t*, const double*,
                                         const index_t*, index_t, const index_t*, index_t*,
                                         double*);
template void pack_rows<float>(const cluster&, int, const float*, index_t, index_t, bool,
                               const index_t*, index_t, float*);
template void pack_rows<double>(const cluster&, int, const double*, index_t, index_t, bool,
                                const index_t*, index_t, double*);
}  // namespace detail

}  // namespace spade
