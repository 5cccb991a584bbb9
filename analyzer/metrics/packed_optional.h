// PackedOptional<T>: std::optional's meaning in sizeof(T) + 1 bytes with an
// alignment of 1, for records held by the hundred thousand. A
// std::optional<uint64_t> or <double> takes 16 bytes, half of them padding;
// the seven of a communication operation (CollectiveInstance) took 112 of
// its 256 bytes and take 63 as these.
//
// The value is stored as bytes and handed out by value: there is no
// reference to it (it may sit at any address), so `*x += 1` does not
// compile; write `x = *x + 1`. It converts to and from std::optional<T>.
#pragma once

#include <cstring>
#include <optional>
#include <type_traits>
#include <utility>

namespace osc {

template <typename T>
class PackedOptional {
    static_assert(std::is_trivially_copyable_v<T>, "stored as bytes");

public:
    using value_type = T;

    PackedOptional() = default;
    PackedOptional(std::nullopt_t) {}
    PackedOptional(const T& value) { set(value); }
    PackedOptional(const std::optional<T>& value) {
        if (value) set(*value);
    }

    PackedOptional& operator=(std::nullopt_t) {
        reset();
        return *this;
    }
    PackedOptional& operator=(const T& value) {
        set(value);
        return *this;
    }
    PackedOptional& operator=(const std::optional<T>& value) {
        if (value)
            set(*value);
        else
            reset();
        return *this;
    }

    bool has_value() const { return has_; }
    explicit operator bool() const { return has_; }
    T operator*() const {
        T value;
        std::memcpy(&value, bytes_, sizeof(T));
        return value;
    }
    T value() const {
        if (!has_) throw std::bad_optional_access();
        return **this;
    }
    template <typename U>
    T value_or(U&& fallback) const {
        return has_ ? **this : static_cast<T>(std::forward<U>(fallback));
    }
    void reset() { has_ = false; }
    void emplace(const T& value) { set(value); }

    std::optional<T> optional() const { return has_ ? std::optional<T>(**this) : std::nullopt; }
    operator std::optional<T>() const { return optional(); }

    bool operator==(const PackedOptional& other) const { return has_ == other.has_ && (!has_ || **this == *other); }
    bool operator==(std::nullopt_t) const { return !has_; }
    bool operator==(const T& value) const { return has_ && **this == value; }

private:
    void set(const T& value) {
        std::memcpy(bytes_, &value, sizeof(T));
        has_ = true;
    }

    unsigned char bytes_[sizeof(T)] = {};
    bool has_ = false;
};

}  // namespace osc
