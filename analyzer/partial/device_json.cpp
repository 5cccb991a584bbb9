#include "analyzer/partial/device_json.h"

#include "analyzer/capture/capture_error.h"
#include "analyzer/report/report_format.h"
#include "analyzer/report/report_json.h"

#include <charconv>
#include <istream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <ostream>

namespace osc::partial {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

std::string real(const std::optional<double>& v) { return v ? json(*v).dump() : "null"; }

// The report writer's pipeline and all-to-all fields (putPipeline,
// putAllToAll in report_json_write.cpp) as JSON text; false for other keys.
bool patternField(std::string_view k, const std::optional<PipelineStageMetrics>& p,
                  const std::optional<AllToAllMetrics>& x, bool step, std::string& into) {
    const auto ns = [&](bool known, auto v) {
        into = known ? std::to_string(v) : "null";
        return true;
    };
    if (k == "pipeline_window_ns") return ns(p.has_value(), p ? p->window_ns : 0);
    if (k == "bubble_ns") return ns(p.has_value(), p ? p->bubble_ns : 0);
    if (k == "bubble_share") return into = p ? real(p->bubble_share) : "null", true;
    if (k == "theoretical_bubble_share") return into = p ? real(p->theoretical_bubble_share) : "null", true;
    if (k == "fill_ns") return ns(p.has_value(), p ? p->fill_ns : 0);
    if (k == "drain_ns") return ns(p.has_value(), p ? p->drain_ns : 0);
    if (k == "stall_ns") return ns(p.has_value(), p ? p->stall_ns : 0);
    if (step) {
        if (k == "pipeline_stage") return ns(p.has_value(), p ? p->stage : 0);
        if (k == "pipeline_stages") return ns(p.has_value(), p ? p->stages : 0);
        if (k == "microbatches") return ns(p.has_value(), p ? p->microbatches : 0);
        if (k == "slowest_stage") return into = p ? (p->slowest ? "true" : "false") : "null", true;
    }
    if (k == "alltoall_ops") return ns(x.has_value(), x ? x->ops : 0);
    if (k == "alltoall_ns") return ns(x.has_value(), x ? x->alltoall_ns : 0);
    if (k == "exposed_alltoall_ns") return ns(x.has_value(), x ? x->exposed_alltoall_ns : 0);
    if (k == "alltoall_transfer_ns") return ns(x.has_value(), x ? x->transfer_ns : 0);
    if (k == "alltoall_bytes_sent") return ns(x && x->bytes_sent, x && x->bytes_sent ? *x->bytes_sent : 0);
    if (k == "alltoall_bytes_received")
        return ns(x && x->bytes_received, x && x->bytes_received ? *x->bytes_received : 0);
    return false;
}

// Re-emits one JSON object in the layout of json::dump(2) (the report
// writer's), substituting the cross-rank values on the way. A small
// tokenizer of its own rather than a general parser: the input is our own
// writer's output, strings and numbers are copied as they are (already
// escaped, already in the writer's number format), and a device object of
// hundreds of megabytes is rewritten at memory speed. It still checks the
// grammar, so a damaged file is an error, not a damaged report.
class Rewriter {
public:
    Rewriter(const std::string& in, std::ostream& out, int indent, const crossrank::DeviceCrossRank& cross,
             const std::vector<std::pair<int, TimeNs>>& idleGapAt, const std::string& origin)
        : in_(&in), out_(out), indent_(indent), cross_(cross), idleGapAt_(idleGapAt), origin_(origin) {}

    void run() {
        skipSpace();
        if (at_ >= in_->size() || (*in_)[at_] != '{') fail("does not start with '{'");
        value();
        skipSpace();
        if (at_ != in_->size()) fail("has bytes after its end");
        flush();
    }

private:
    struct Frame {
        bool object;
        size_t count = 0;      // members or elements so far
        std::string_view key;  // the member being written
    };

    [[noreturn]] void fail(const std::string& what) const {
        throw CaptureError(origin_, "not a valid partial result: a device's report object " + what + " (byte " +
                                        std::to_string(at_) + ")");
    }
    void skipSpace() {
        while (at_ < in_->size() &&
               ((*in_)[at_] == ' ' || (*in_)[at_] == '\n' || (*in_)[at_] == '\r' || (*in_)[at_] == '\t'))
            ++at_;
    }
    char peek() {
        skipSpace();
        if (at_ >= in_->size()) fail("is cut off");
        return (*in_)[at_];
    }
    void expect(char c) {
        if (peek() != c) fail(std::string("lacks a '") + c + "'");
        ++at_;
    }
    void pad(size_t depth) { buf_.append(static_cast<size_t>(indent_) + 2 * depth, ' '); }
    void flush() {
        out_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
        buf_.clear();
    }

    // A string token, quotes included, as it is.
    std::string_view stringToken() {
        if (peek() != '"') fail("has a key that is not a string");
        const size_t start = at_++;
        while (at_ < in_->size()) {
            const char c = (*in_)[at_++];
            if (c == '\\') {
                if (at_ >= in_->size()) break;
                ++at_;
            } else if (c == '"') {
                return std::string_view(*in_).substr(start, at_ - start);
            } else if (static_cast<unsigned char>(c) < 0x20) {
                fail("has a raw control character in a string");
            } else if (static_cast<unsigned char>(c) >= 0x80) {
                at_ = utf8End(at_ - 1);
            }
        }
        fail("is cut off in a string");
    }
    // The end of the UTF-8 sequence starting at `i` (the writer replaced
    // broken bytes with U+FFFD: anything else here is a damaged file).
    size_t utf8End(size_t i) {
        const auto byte = [&](size_t k) { return k < in_->size() ? static_cast<unsigned char>((*in_)[k]) : 0u; };
        const unsigned b = byte(i);
        size_t n = 0;
        unsigned lo = 0x80, hi = 0xBF;
        if (b >= 0xC2 && b <= 0xDF)
            n = 1;
        else if (b >= 0xE0 && b <= 0xEF)
            n = 2, lo = b == 0xE0 ? 0xA0 : 0x80, hi = b == 0xED ? 0x9F : 0xBF;
        else if (b >= 0xF0 && b <= 0xF4)
            n = 3, lo = b == 0xF0 ? 0x90 : 0x80, hi = b == 0xF4 ? 0x8F : 0xBF;
        else
            fail("holds bytes that are not UTF-8");
        for (size_t k = 1; k <= n; ++k) {
            const unsigned c = byte(i + k);
            if (c < (k == 1 ? lo : 0x80u) || c > (k == 1 ? hi : 0xBFu)) fail("holds bytes that are not UTF-8");
        }
        return i + n + 1;
    }

    // JSON's number grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
    static bool validNumber(std::string_view t) {
        size_t i = 0;
        const auto digits = [&] {
            const size_t from = i;
            while (i < t.size() && t[i] >= '0' && t[i] <= '9') ++i;
            return i > from;
        };
        if (i < t.size() && t[i] == '-') ++i;
        if (i < t.size() && t[i] == '0')
            ++i;
        else if (!digits())
            return false;
        if (i < t.size() && t[i] == '.' && (++i, !digits())) return false;
        if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
            ++i;
            if (i < t.size() && (t[i] == '+' || t[i] == '-')) ++i;
            if (!digits()) return false;
        }
        return i == t.size();
    }

    std::string_view scalarToken() {
        const size_t start = at_;
        const char c = (*in_)[at_];
        if (c == 't' || c == 'f' || c == 'n') {
            for (const char* word : {"true", "false", "null"})
                if (in_->compare(at_, std::char_traits<char>::length(word), word) == 0) {
                    at_ += std::char_traits<char>::length(word);
                    return std::string_view(*in_).substr(start, at_ - start);
                }
            fail("has an unknown literal");
        }
        if (c != '-' && (c < '0' || c > '9')) fail("has an unexpected character");
        while (at_ < in_->size()) {
            const char d = (*in_)[at_];
            if ((d >= '0' && d <= '9') || d == '-' || d == '+' || d == '.' || d == 'e' || d == 'E')
                ++at_;
            else
                break;
        }
        const std::string_view token = std::string_view(*in_).substr(start, at_ - start);
        if (!validNumber(token)) fail("has a malformed number");
        return token;
    }

    const std::string_view& currentKey() const {
        static const std::string_view kNone;
        return !frames_.empty() && frames_.back().object ? frames_.back().key : kNone;
    }

    // The cross-rank value for the member being written, if it is one.
    bool replacement(std::string& into) const {
        const std::string_view k = currentKey();
        const auto number = [&](auto v) {
            into = std::to_string(v);
            return true;
        };
        const auto orNull = [&](const auto& v) {
            if (v) return number(*v);
            into = "null";
            return true;
        };
        // Null with one device, and where waiting is unknown (report_json_write.cpp).
        const auto waitField = [&](const std::optional<WaitTransferMetrics>& w) {
            const bool known = w && w->known();
            if (k == "comm_wait_ns") return known ? number(w->comm_wait_ns) : (into = "null", true);
            if (k == "exposed_wait_ns") return known ? number(w->exposed_wait_ns) : (into = "null", true);
            if (k == "exposed_transfer_ns") return known ? number(w->exposed_transfer_ns) : (into = "null", true);
            if (k == "kernels_without_peer") return w ? number(w->kernels_without_peer) : (into = "null", true);
            return false;
        };
        const DeviceAnalysis* shell = cross_.patterns;
        // devices[i]: docs/design.md 4d's objects
        if (frames_.size() == 1) {
            if (k == "busbw") return into = report::busBandwidthJsonText(cross_.busbw), true;
            if (k == "straggler") return into = report::stragglerJsonText(cross_.straggler), true;
            return false;
        }
        // devices[i].collectives[c]: its bandwidth (docs/design.md 4d)
        if (frames_.size() == 3 && frames_[0].key == "collectives" && !frames_[1].object && frames_[2].object) {
            const size_t c = frames_[1].count - 1;
            static const crossrank::OpBandwidth kNone;
            const crossrank::OpBandwidth& b = c < cross_.bandwidth.size() ? cross_.bandwidth[c] : kNone;
            if (k == "algbw_gbps") return into = real(b.algbw_gbps), true;
            if (k == "busbw_gbps") return into = real(b.busbw_gbps), true;
            if (k == "busbw_fraction") return into = real(b.busbw_fraction), true;
            if (k == "busbw_basis")
                return into = b.basis == BusBwBasis::None ? "null" : json(report::toString(b.basis)).dump(), true;
            return false;
        }
        // devices[i].totals
        if (frames_.size() == 2 && frames_[0].key == "totals" && frames_[1].object) {
            if (k == "last_arrivals") return orNull(cross_.lastArrivals);
            if (k == "delay_caused_ns") return orNull(cross_.delayCaused);
            if (shell && patternField(k, shell->pipeline, shell->alltoall, false, into)) return true;
            return waitField(cross_.wait);
        }
        // devices[i].steps[s]
        if (frames_.size() == 3 && frames_[0].key == "steps" && !frames_[1].object && frames_[2].object) {
            const size_t s = frames_[1].count - 1;
            if (shell && s < shell->steps.size() &&
                patternField(k, shell->steps[s].pipeline, shell->steps[s].alltoall, true, into))
                return true;
            std::optional<WaitTransferMetrics> w;
            if (cross_.wait && s < cross_.stepWait.size()) w = cross_.stepWait[s];
            return waitField(w);
        }
        return false;
    }

    // What changes in the findings array being written: the shell's
    // findings to add, whether the pipeline's note applies, the idle gap's
    // time to move. False when it stays as it is.
    struct FindingsPatch {
        const std::vector<Finding>* added = nullptr;   // the shell's
        const std::vector<Finding>* engine = nullptr;  // the engine's own
        bool note = false;
        std::optional<TimeNs> idleGapAt;
    };
    bool findingsPatch(FindingsPatch& patch) const {
        if (currentKey() != "findings") return false;
        int window;
        if (frames_.size() == 1) {  // devices[i].findings
            window = -1;
        } else if (frames_.size() == 4 && frames_[0].key == "steps" && !frames_[1].object &&
                   frames_[2].key == "bottleneck" && frames_[3].object) {  // devices[i].steps[s].bottleneck.findings
            window = static_cast<int>(frames_[1].count - 1);
        } else {
            return false;
        }
        if (const DeviceAnalysis* shell = cross_.patterns) {
            if (window < 0) {
                patch.added = &shell->findings;
                patch.note = shell->pipeline.has_value();
            } else if (static_cast<size_t>(window) < shell->steps.size()) {
                patch.added = &shell->steps[static_cast<size_t>(window)].bottleneck.findings;
                patch.note = shell->steps[static_cast<size_t>(window)].pipeline.has_value();
            }
        }
        if (window < 0)
            patch.engine = &cross_.findings;
        else if (static_cast<size_t>(window) < cross_.stepFindings.size())
            patch.engine = &cross_.stepFindings[static_cast<size_t>(window)];
        if (cross_.messageShift != 0)
            for (const auto& [w, at] : idleGapAt_)
                if (w == window) patch.idleGapAt = at;
        return (patch.added && !patch.added->empty()) || (patch.engine && !patch.engine->empty()) || patch.note ||
               patch.idleGapAt;
    }

    // Skips one value (checked later by the JSON parser).
    void skipValue() {
        int depth = 0;
        do {
            const char c = peek();
            if (c == '"') {
                stringToken();
            } else if (c == '[' || c == '{') {
                ++depth;
                ++at_;
            } else if (c == ']' || c == '}') {
                --depth;
                ++at_;
            } else if (c == ',' || c == ':') {
                ++at_;
            } else {
                scalarToken();
            }
        } while (depth > 0);
    }

    // The findings array at at_, with the shell's added as analyze() adds
    // them (addFinding, in order), the pipeline's note and the idle gap's
    // time on the job's timeline, written in place.
    void patchFindings(const FindingsPatch& patch) {
        const size_t from = at_;
        skipValue();
        std::vector<Finding> findings;
        try {
            const json arr = json::parse(std::string_view(*in_).substr(from, at_ - from));
            if (!arr.is_array()) fail("has findings that are not a list");
            for (const auto& f : arr) {
                if (!f.is_object() || !f.contains("kind") || !f["kind"].is_string() || !f.contains("message") ||
                    !f["message"].is_string() || !f.contains("exposed_ns") || !f["exposed_ns"].is_number_integer())
                    fail("has a finding without kind, message and exposed_ns");
                findings.push_back({report::parseFindingKind(f["kind"].get<std::string>()),
                                    f["message"].get<std::string>(), f["exposed_ns"].get<TimeNs>()});
            }
        } catch (const json::exception&) {
            fail("has findings that are not JSON");
        } catch (const std::invalid_argument& e) {
            fail(std::string("has a finding of an ") + e.what());
        }
        if (patch.idleGapAt)
            for (auto& f : findings) crossrank::moveIdleGapMessage(f, *patch.idleGapAt, cross_.messageShift);
        static const std::vector<Finding> kNone;
        crossrank::addCrossRankFindings(findings, patch.added ? *patch.added : kNone,
                                        patch.engine ? *patch.engine : kNone, patch.note);
        ordered_json arr = ordered_json::array();
        for (const auto& f : findings)
            arr.push_back({{"kind", report::toString(f.kind)}, {"message", f.message}, {"exposed_ns", f.exposed_ns}});
        layout(arr.dump(-1, ' ', false, json::error_handler_t::replace));
    }

    // An object or array given as compact text, written by the same code
    // as the rest, in the same layout.
    void layout(const std::string& text) {
        const std::string* outer = in_;
        const size_t resume = at_;
        in_ = &text;
        at_ = 0;
        container(text[0] == '{');
        in_ = outer;
        at_ = resume;
    }

    // Array elements start on their own line; object members after their key.
    void beginElement() {
        if (frames_.empty() || frames_.back().object) return;
        Frame& f = frames_.back();
        buf_ += f.count++ ? ",\n" : "\n";
        pad(frames_.size());
    }

    void value() {
        beginElement();
        const char c = peek();
        FindingsPatch patch;
        if (c == '[' && findingsPatch(patch)) {
            patchFindings(patch);
            return;
        }
        std::string replaced;
        if (replacement(replaced)) {
            skipValue();
            if (replaced[0] == '{' || replaced[0] == '[')
                layout(replaced);
            else
                buf_ += replaced;
            return;
        }
        if (c == '{' || c == '[') {
            container(c == '{');
            return;
        }
        if (c == '"') {
            buf_ += stringToken();
            return;
        }
        const std::string_view token = scalarToken();
        const std::string_view k = currentKey();
        if ((k == "start_ns" || k == "end_ns") && cross_.shift != 0 &&
            token.find_first_of(".eE") == std::string_view::npos) {
            int64_t v = 0;
            const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), v);
            if (ec == std::errc() && end == token.data() + token.size()) {
                buf_ += std::to_string(v + cross_.shift);
                return;
            }
        }
        buf_ += token;
    }

    void container(bool object) {
        const char close = object ? '}' : ']';
        buf_ += object ? '{' : '[';
        ++at_;
        frames_.push_back({object});
        if (frames_.size() > 64) fail("is nested too deeply");
        if (peek() != close) {
            for (;;) {
                if (object) {
                    Frame& f = frames_.back();
                    const std::string_view key = stringToken();
                    buf_ += f.count++ ? ",\n" : "\n";
                    pad(frames_.size());
                    buf_ += key;
                    buf_ += ": ";
                    f.key = key.substr(1, key.size() - 2);
                    expect(':');
                }
                value();
                if (peek() == ',') {
                    ++at_;
                    continue;
                }
                break;
            }
        }
        expect(close);
        if (object && frames_.size() == 1 && cross_.clockShift) {
            Frame& f = frames_.back();
            buf_ += f.count++ ? ",\n" : "\n";
            pad(1);
            buf_ += "\"clock_shift_ns\": " + std::to_string(*cross_.clockShift);
        }
        const bool empty = frames_.back().count == 0;
        frames_.pop_back();
        if (!empty) {
            buf_ += '\n';
            pad(frames_.size());
        }
        buf_ += close;
        if (buf_.size() >= (1u << 16)) flush();
    }

    const std::string* in_;  // the object, or while findings are put in, their new text
    size_t at_ = 0;
    std::ostream& out_;
    std::string buf_;
    int indent_;
    const crossrank::DeviceCrossRank& cross_;
    const std::vector<std::pair<int, TimeNs>>& idleGapAt_;
    const std::string& origin_;
    std::vector<Frame> frames_;
};

}  // namespace

void rewriteDeviceJson(std::istream& in, std::ostream& out, int indent, const crossrank::DeviceCrossRank& cross,
                       const std::vector<std::pair<int, TimeNs>>& idleGapAt, const std::string& origin) {
    // Read whole: one device object is what the merge may hold anyway.
    const std::string text(std::istreambuf_iterator<char>(in), {});
    Rewriter(text, out, indent, cross, idleGapAt, origin).run();
}

}  // namespace osc::partial
