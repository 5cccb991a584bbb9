// CompactList<T>: a vector for a member that is almost always empty, in 8
// bytes instead of 24. A communication operation's sends and receives
// (CollectiveInstance::p2p) exist only for point-to-point and all-to-all
// kernels; a report of 300,000 all-reduces held 7 MB of empty vectors.
// The elements live in a std::vector allocated on the first one.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <memory>
#include <utility>
#include <vector>

namespace osc {

template <typename T>
class CompactList {
public:
    using value_type = T;
    using iterator = T*;
    using const_iterator = const T*;

    CompactList() = default;
    CompactList(std::initializer_list<T> values) {
        if (values.size()) items_ = std::make_unique<std::vector<T>>(values);
    }
    CompactList(const CompactList& other)
        : items_(other.empty() ? nullptr : std::make_unique<std::vector<T>>(*other.items_)) {}
    CompactList(CompactList&&) noexcept = default;
    CompactList& operator=(const CompactList& other) {
        if (this != &other) items_ = other.empty() ? nullptr : std::make_unique<std::vector<T>>(*other.items_);
        return *this;
    }
    CompactList& operator=(CompactList&&) noexcept = default;
    CompactList& operator=(std::initializer_list<T> values) { return *this = CompactList(values); }

    size_t size() const { return items_ ? items_->size() : 0; }
    bool empty() const { return size() == 0; }
    T* data() { return items_ ? items_->data() : nullptr; }
    const T* data() const { return items_ ? items_->data() : nullptr; }
    T* begin() { return data(); }
    T* end() { return data() + size(); }
    const T* begin() const { return data(); }
    const T* end() const { return data() + size(); }
    T& operator[](size_t i) { return (*items_)[i]; }
    const T& operator[](size_t i) const { return (*items_)[i]; }
    T& front() { return items_->front(); }
    const T& front() const { return items_->front(); }
    T& back() { return items_->back(); }
    const T& back() const { return items_->back(); }

    void push_back(const T& value) { list().push_back(value); }
    void push_back(T&& value) { list().push_back(std::move(value)); }
    template <typename... Args>
    T& emplace_back(Args&&... args) {
        return list().emplace_back(std::forward<Args>(args)...);
    }
    void reserve(size_t n) {
        if (n) list().reserve(n);
    }
    void resize(size_t n) {
        if (n)
            list().resize(n);
        else
            clear();
    }
    void clear() { items_.reset(); }

    bool operator==(const CompactList& other) const {
        if (size() != other.size()) return false;
        for (size_t i = 0; i < size(); ++i)
            if (!((*this)[i] == other[i])) return false;
        return true;
    }

private:
    std::vector<T>& list() {
        if (!items_) items_ = std::make_unique<std::vector<T>>();
        return *items_;
    }

    std::unique_ptr<std::vector<T>> items_;
};

}  // namespace osc
