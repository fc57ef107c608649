// Per-operand cache of derived storage (converted formats, transposed copies) the planner reuses.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <typeindex>
#include <utility>
#include <vector>

namespace spade {

/// Holds objects derived from the matrix that owns the cache, keyed by type. A copy of the
/// owner starts with an empty cache; any non-const access to the owner's values clears it, so
/// a cached conversion never outlives the data it was made from.
class conversion_cache {
 public:
  conversion_cache() = default;
  conversion_cache(const conversion_cache&) {}
  conversion_cache& operator=(const conversion_cache&) {
    entries_.clear();
    return *this;
  }
  conversion_cache(conversion_cache&&) noexcept = default;
  conversion_cache& operator=(conversion_cache&&) noexcept = default;

  /// The cached object for `Key`, made by `make()` on a miss. `hit`, when given, says which.
  template <class Key, class Value, class Make>
  const Value& get_or_make(Make&& make, bool* hit = nullptr) {
    const std::type_index key(typeid(Key));
    for (const auto& entry : entries_)
      if (entry.first == key) {
        if (hit) *hit = true;
        return *static_cast<const Value*>(entry.second.get());
      }
    if (hit) *hit = false;
    auto value = std::make_shared<Value>(make());
    const Value& ref = *value;
    entries_.emplace_back(key, std::move(value));
    return ref;
  }
  template <class Key>
  bool contains() const {
    for (const auto& entry : entries_)
      if (entry.first == std::type_index(typeid(Key))) return true;
    return false;
  }
  void clear() noexcept { entries_.clear(); }
  std::size_t size() const noexcept { return entries_.size(); }

 private:
  std::vector<std::pair<std::type_index, std::shared_ptr<const void>>> entries_;
};

/// Conversions actually performed (cache misses included, hits not): tests count them.
inline std::atomic<std::size_t>& conversion_counter() {
  static std::atomic<std::size_t> count{0};
  return count;
}

}  // namespace spade
