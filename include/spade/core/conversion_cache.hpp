// Per-operand cache of derived storage (converted formats, transposed copies) the planner reuses.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <typeindex>
#include <utility>
#include <vector>

namespace spade {

/// Holds objects derived from the matrix that owns the cache, keyed by type, and facts about
/// the owner paired with another operand, keyed by type and the partner's identity(). A copy
/// of the owner starts with an empty cache; any non-const access to the owner's values clears
/// it, so a cached conversion or fact never outlives the data it was made from.
class conversion_cache {
 public:
  conversion_cache() = default;
  conversion_cache(const conversion_cache&) {}
  conversion_cache& operator=(const conversion_cache&) {
    clear();
    return *this;
  }
  conversion_cache(conversion_cache&& other) noexcept
      : entries_(std::move(other.entries_)),
        pair_entries_(std::move(other.pair_entries_)),
        identity_(other.identity_) {
    other.clear();
  }
  conversion_cache& operator=(conversion_cache&& other) noexcept {
    entries_ = std::move(other.entries_);
    pair_entries_ = std::move(other.pair_entries_);
    identity_ = other.identity_;
    other.clear();
    return *this;
  }

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

  /// The cached fact `Key` about the owner together with the operand whose cache has identity
  /// `partner`, made by `make()` on a miss. At most pair_entries_per_key partners are kept per
  /// key (the oldest goes first), so a long-lived operand multiplied by many others stays small.
  template <class Key, class Value, class Make>
  const Value& get_or_make_for(std::uint64_t partner, Make&& make, bool* hit = nullptr) {
    const std::type_index key(typeid(Key));
    std::size_t same_key = 0;
    for (const auto& entry : pair_entries_)
      if (entry.key == key) {
        if (entry.partner == partner) {
          if (hit) *hit = true;
          return *static_cast<const Value*>(entry.value.get());
        }
        ++same_key;
      }
    if (hit) *hit = false;
    auto value = std::make_shared<Value>(make());
    const Value& ref = *value;
    if (same_key >= pair_entries_per_key)
      for (auto it = pair_entries_.begin(); it != pair_entries_.end(); ++it)
        if (it->key == key) {
          pair_entries_.erase(it);
          break;
        }
    pair_entries_.push_back({key, partner, std::move(value)});
    return ref;
  }

  template <class Key>
  bool contains() const {
    for (const auto& entry : entries_)
      if (entry.first == std::type_index(typeid(Key))) return true;
    return false;
  }
  /// Forgets everything and takes a new identity: facts cached on other operands about this
  /// one no longer match it.
  void clear() noexcept {
    entries_.clear();
    pair_entries_.clear();
    identity_ = next_identity();
  }
  std::size_t size() const noexcept { return entries_.size() + pair_entries_.size(); }
  /// Names the owner's current contents: unique in the process, renewed by clear(), copies and
  /// assignments; a moved-to cache takes over the moved-from one's identity.
  std::uint64_t identity() const noexcept { return identity_; }

  static constexpr std::size_t pair_entries_per_key = 8;

 private:
  static std::uint64_t next_identity() noexcept {
    static std::atomic<std::uint64_t> counter{0};
    return ++counter;
  }
  struct pair_entry {
    std::type_index key;
    std::uint64_t partner;
    std::shared_ptr<const void> value;
  };
  std::vector<std::pair<std::type_index, std::shared_ptr<const void>>> entries_;
  std::vector<pair_entry> pair_entries_;
  std::uint64_t identity_ = next_identity();
};

/// Conversions actually performed (cache misses included, hits not): tests count them.
inline std::atomic<std::size_t>& conversion_counter() {
  static std::atomic<std::size_t> count{0};
  return count;
}

}  // namespace spade
