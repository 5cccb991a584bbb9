#include "analyzer/partial/device_json.h"

#include "analyzer/capture/capture_error.h"

#include <nlohmann/json.hpp>

#include <istream>
#include <ostream>

namespace osc::partial {
namespace {

using nlohmann::json;
constexpr auto kReplace = json::error_handler_t::replace;

// Re-emits SAX events in the layout of json::dump(2), which is the layout of
// the report writer, substituting the cross-rank values on the way.
class Rewriter final : public nlohmann::json_sax<json> {
public:
    Rewriter(std::ostream& out, int indent, const DeviceCrossRank& cross) : out_(out), indent_(indent), cross_(cross) {}

    bool null() override { return scalar([] { return std::string("null"); }); }
    bool boolean(bool v) override { return scalar([v] { return std::string(v ? "true" : "false"); }); }
    bool number_integer(number_integer_t v) override {
        return scalar([&] { return std::to_string(isTime() ? v + cross_.shift : v); });
    }
    bool number_unsigned(number_unsigned_t v) override {
        return scalar([&] {
            if (isTime() && v <= static_cast<number_unsigned_t>(INT64_MAX))
                return std::to_string(static_cast<int64_t>(v) + cross_.shift);
            return std::to_string(v);
        });
    }
    bool number_float(number_float_t, const string_t& text) override {
        return scalar([&] { return text; });
    }
    bool string(string_t& v) override { return scalar([&] { return json(v).dump(-1, ' ', false, kReplace); }); }
    bool binary(binary_t&) override { return false; }

    bool start_object(std::size_t) override {
        beginValue();
        out_ << '{';
        frames_.push_back({true, 0, {}});
        return true;
    }
    bool key(string_t& k) override {
        Frame& f = frames_.back();
        out_ << (f.count++ ? ",\n" : "\n") << pad(frames_.size()) << json(k).dump(-1, ' ', false, kReplace)
             << ": ";
        f.key = k;
        return true;
    }
    bool end_object() override {
        if (frames_.size() == 1 && cross_.clockShift) {
            Frame& f = frames_.back();
            out_ << (f.count++ ? ",\n" : "\n") << pad(1) << "\"clock_shift_ns\": " << *cross_.clockShift;
        }
        return close('}');
    }
    bool start_array(std::size_t) override {
        beginValue();
        out_ << '[';
        frames_.push_back({false, 0, {}});
        return true;
    }
    bool end_array() override { return close(']'); }
    bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) override {
        error_ = "at byte " + std::to_string(position) + ": " + e.what();
        return false;
    }

    const std::string& error() const { return error_; }
    bool complete() const { return done_; }

private:
    struct Frame {
        bool object;
        size_t count;  // members or elements so far
        std::string key;
    };

    std::string pad(size_t depth) const { return std::string(static_cast<size_t>(indent_) + 2 * depth, ' '); }

    // Array elements start on their own line; object values follow their key.
    void beginValue() {
        if (frames_.empty() || frames_.back().object) return;
        Frame& f = frames_.back();
        out_ << (f.count++ ? ",\n" : "\n") << pad(frames_.size());
    }
    bool close(char bracket) {
        const bool empty = frames_.back().count == 0;
        frames_.pop_back();
        if (!empty) out_ << '\n' << pad(frames_.size());
        out_ << bracket;
        if (frames_.empty()) done_ = true;
        return true;
    }

    const std::string& currentKey() const {
        static const std::string kNone;
        return !frames_.empty() && frames_.back().object ? frames_.back().key : kNone;
    }
    bool isTime() const {
        const std::string& k = currentKey();
        return k == "start_ns" || k == "end_ns";
    }

    // The cross-rank value for the field being written, if it is one.
    std::optional<std::string> replacement() const {
        const std::string& k = currentKey();
        const auto orNull = [](const auto& v) { return v ? std::to_string(*v) : std::string("null"); };
        const auto waitField = [&](const std::optional<WaitTransferMetrics>& w) -> std::optional<std::string> {
            if (k == "comm_wait_ns") return w ? std::to_string(w->comm_wait_ns) : "null";
            if (k == "exposed_wait_ns") return w ? std::to_string(w->exposed_wait_ns) : "null";
            if (k == "exposed_transfer_ns") return w ? std::to_string(w->exposed_transfer_ns) : "null";
            return std::nullopt;
        };
        // devices[i].totals
        if (frames_.size() == 2 && frames_[0].key == "totals" && frames_[1].object) {
            if (k == "last_arrivals") return orNull(cross_.lastArrivals);
            if (k == "delay_caused_ns") return orNull(cross_.delayCaused);
            return waitField(cross_.wait);
        }
        // devices[i].steps[s]
        if (frames_.size() == 3 && frames_[0].key == "steps" && !frames_[1].object && frames_[2].object) {
            const size_t s = frames_[1].count - 1;
            std::optional<WaitTransferMetrics> w;
            if (cross_.wait && s < cross_.stepWait.size()) w = cross_.stepWait[s];
            return waitField(w);
        }
        return std::nullopt;
    }

    template <typename Text>
    bool scalar(Text text) {
        beginValue();
        if (auto r = replacement()) out_ << *r;
        else out_ << text();
        if (frames_.empty()) done_ = true;
        return true;
    }

    std::ostream& out_;
    int indent_;
    const DeviceCrossRank& cross_;
    std::vector<Frame> frames_;
    std::string error_;
    bool done_ = false;
};

}  // namespace

void rewriteDeviceJson(std::istream& in, std::ostream& out, int indent, const DeviceCrossRank& cross,
                       const std::string& origin) {
    Rewriter rewriter(out, indent, cross);
    // Not strict: the object is followed by the next line of the file.
    const bool ok = json::sax_parse(in, &rewriter, json::input_format_t::json, false);
    if (!ok || !rewriter.complete())
        throw CaptureError(origin, "not a valid partial result: a device's report object " +
                                       (rewriter.error().empty() ? std::string("is cut off") : rewriter.error()));
}

}  // namespace osc::partial
