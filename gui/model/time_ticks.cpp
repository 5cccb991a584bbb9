#include "gui/model/time_ticks.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace osc::gui {
namespace {

struct Unit {
    TimeNs ns;
    const char* name;
};

Unit unitFor(TimeNs magnitude) {
    if (magnitude >= 1'000'000'000) return {1'000'000'000, "s"};
    if (magnitude >= 1'000'000) return {1'000'000, "ms"};
    if (magnitude >= 1'000) return {1'000, "µs"};
    return {1, "ns"};
}

std::string trimmed(double value, int decimals, const char* unit) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
    std::string s = buf;
    if (s.find('.') != std::string::npos) {
        while (s.back() == '0') s.pop_back();
        if (s.back() == '.') s.pop_back();
    }
    return s + " " + unit;
}

}  // namespace

TimeNs niceTickStep(double nsPerPx, double minSpacingPx) {
    const double minStep = std::max(1.0, nsPerPx * minSpacingPx);
    TimeNs decade = 1;
    while (static_cast<double>(decade) * 10 <= minStep) decade *= 10;
    for (TimeNs m : {1, 2, 5, 10}) {
        if (static_cast<double>(decade * m) >= minStep) return decade * m;
    }
    return decade * 10;
}

std::vector<Tick> makeTicks(const TimeScale& scale, double minSpacingPx) {
    std::vector<Tick> ticks;
    const TimeNs step = niceTickStep(scale.nsPerPx(), minSpacingPx);
    const ViewRange r = scale.range();
    // Floor division that also works for negative times.
    TimeNs first = r.start / step * step;
    if (first < r.start) first += step;
    for (TimeNs t = first; t <= r.end; t += step) {
        ticks.push_back({t, scale.toX(t), formatTickLabel(t, step)});
    }
    return ticks;
}

Ruler makeRuler(const TimeScale& scale, double minSpacingPx, size_t maxLabelChars) {
    Ruler r;
    r.ticks = makeTicks(scale, minSpacingPx);
    const auto chars = [](const std::string& s) {
        size_t n = 0;  // UTF-8 code points: "µ" is two bytes and one character
        for (unsigned char c : s) n += (c & 0xC0) != 0x80;
        return n;
    };
    bool tooLong = false;
    for (const Tick& t : r.ticks) tooLong |= chars(t.label) > maxLabelChars;
    if (!tooLong || r.ticks.size() < 2) return r;
    const TimeNs step = r.ticks[1].time - r.ticks[0].time;
    const TimeNs base = r.ticks.front().time;
    r.origin = formatTickLabel(base, step);  // every digit the step needs
    for (Tick& t : r.ticks) t.label = t.time == base ? "+0" : "+" + formatTickLabel(t.time - base, step);
    return r;
}

std::string formatDuration(TimeNs ns, int significant) {
    const TimeNs mag = ns < 0 ? -ns : ns;
    const Unit u = unitFor(mag);
    const double v = static_cast<double>(ns) / static_cast<double>(u.ns);
    const double av = std::fabs(v);
    const int intDigits = av >= 100 ? 3 : av >= 10 ? 2 : 1;
    const int decimals = u.ns == 1 ? 0 : std::max(0, significant - intDigits);
    return trimmed(v, decimals, u.name);
}

std::string formatTimestamp(TimeNs t) {
    const TimeNs mag = t < 0 ? -t : t;
    char buf[64];
    const double v = static_cast<double>(t);
    if (mag >= 1'000'000'000)
        std::snprintf(buf, sizeof buf, "%.6f s", v / 1e9);
    else if (mag >= 1'000'000)
        std::snprintf(buf, sizeof buf, "%.3f ms", v / 1e6);
    else if (mag >= 1'000)
        std::snprintf(buf, sizeof buf, "%.3f µs", v / 1e3);
    else
        std::snprintf(buf, sizeof buf, "%lld ns", static_cast<long long>(t));
    return buf;
}

std::string formatBytes(uint64_t b) {
    static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
    if (b < 1024) return std::to_string(b) + " B";
    double v = static_cast<double>(b) / 1024;
    int u = 0;
    while (v >= 1024 && u < 3) v /= 1024, ++u;
    return trimmed(v, v >= 100 ? 0 : v >= 10 ? 1 : 2, kUnits[u]);
}

std::string formatCount(uint64_t n) {
    // Built forwards: GCC 12 warns (-Wrestrict, wrongly) on inserting into the digits.
    const std::string digits = std::to_string(n);
    std::string out;
    out.reserve(digits.size() + digits.size() / 3);
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return out;
}

std::string formatPercent(double fraction) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f %%", fraction * 100.0);
    return buf;
}

std::string formatTickLabel(TimeNs t, TimeNs step) {
    const TimeNs mag = std::max<TimeNs>(t < 0 ? -t : t, step);
    const Unit u = unitFor(mag);
    // Decimals needed so that consecutive ticks differ in the printed text.
    int decimals = 0;
    for (TimeNs q = u.ns; q > step && decimals < 9; q /= 10) ++decimals;
    return trimmed(static_cast<double>(t) / static_cast<double>(u.ns), decimals, u.name);
}

}  // namespace osc::gui

namespace osc::gui {

std::optional<TimeNs> parseDuration(std::string_view text) {
    std::string s(text);
    while (!s.empty() && s.back() == ' ') s.pop_back();
    double scale = 1;
    struct Suffix {
        const char* text;
        double ns;
    };
    for (const Suffix& suf :
         {Suffix{"ns", 1}, Suffix{"us", 1e3}, Suffix{"µs", 1e3}, Suffix{"ms", 1e6}, Suffix{"s", 1e9}}) {
        const std::string_view sv(suf.text);
        if (s.size() > sv.size() && s.compare(s.size() - sv.size(), sv.size(), sv) == 0) {
            scale = suf.ns;
            s.resize(s.size() - sv.size());
            break;
        }
    }
    if (s.empty()) return std::nullopt;
    char* endp = nullptr;
    const double v = std::strtod(s.c_str(), &endp);
    if (endp != s.c_str() + s.size() || !std::isfinite(v)) return std::nullopt;
    return static_cast<TimeNs>(std::llround(v * scale));
}

}  // namespace osc::gui
