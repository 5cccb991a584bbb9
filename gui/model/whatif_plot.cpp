#include "gui/model/whatif_plot.h"

#include "analyzer/whatif/whatif_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace osc::gui {
namespace {

// Room for two text lines above (title, legend), the y axis title and tick
// labels on the left, and the x tick labels, the x axis title, the
// caption and the fit below.
constexpr double kLeft = 66, kRight = 18, kTop = 46, kBottom = 78;

std::string fixed(double v, int decimals) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

// A "nice" tick spacing for a range: 1, 2 or 5 times a power of ten.
double niceStep(double range, int ticks) {
    const double raw = range / std::max(1, ticks);
    const double p = std::pow(10.0, std::floor(std::log10(raw)));
    for (double m : {1.0, 2.0, 5.0, 10.0})
        if (raw <= m * p) return m * p;
    return 10 * p;
}

std::string r2Text(std::optional<double> r2) { return r2 ? fixed(*r2, 3) : std::string("n/a"); }

// How alpha was set, when not by the fit itself.
std::string alphaNote(const whatif::CostModel& fit) {
    if (fit.alphaSource == "zero") return "; the fitted alpha was negative: refitted through zero";
    if (fit.alphaSource == "default") return "; one size only: alpha is the default, not fitted";
    if (fit.alphaSource == "given") return "; alpha given";
    return {};
}

std::string fitText(const whatif::WhatIfResult& result) {
    std::vector<const whatif::DeviceWhatIf*> modelled;
    for (const auto& d : result.devices)
        if (d.modelled) modelled.push_back(&d);
    if (modelled.size() == 1) {
        const whatif::CostModel& f = modelled.front()->fit;
        const std::string what =
            modelled.front()->collective == "copies" ? "copy round trip" : modelled.front()->collective;
        return "cost fit: " + fixed(f.alpha_ns / 1000.0, 1) + " µs + " + fixed(f.ns_per_byte, 4) + " ns/byte (" +
               fixed(f.ns_per_byte > 0 ? 1.0 / f.ns_per_byte : 0.0, 1) + " GB/s) per " + what + ", from " +
               std::to_string(f.samples) + " samples of " + std::to_string(f.distinctSizes) + " sizes, r² " +
               r2Text(f.r2) + alphaNote(f);
    }
    std::optional<double> low, high;
    int refitted = 0, defaulted = 0;
    for (const auto* d : modelled) {
        if (d->fit.r2) {
            low = std::min(low.value_or(*d->fit.r2), *d->fit.r2);
            high = std::max(high.value_or(*d->fit.r2), *d->fit.r2);
        }
        refitted += d->fit.alphaSource == "zero";
        defaulted += d->fit.alphaSource == "default";
    }
    std::string out =
        "cost fits of " + std::to_string(modelled.size()) + " devices: r² " +
        (low ? r2Text(low) + (*high != *low ? " to " + r2Text(high) : std::string()) : std::string("n/a"));
    if (refitted) out += "; " + std::to_string(refitted) + " refitted through zero (negative alpha)";
    if (defaulted) out += "; " + std::to_string(defaulted) + " with the default alpha (one size only)";
    return out;
}

}  // namespace

std::optional<WhatIfSeries> whatIfSeries(const whatif::WhatIfResult& result, std::string* why) {
    int modelled = 0;
    const whatif::DeviceWhatIf* one = nullptr;
    for (const auto& d : result.devices)
        if (d.modelled) {
            ++modelled;
            if (!one) one = &d;
        }
    if (modelled == 0) {
        if (why) {
            *why = result.devices.empty() ? "the capture holds no GPU activity"
                                          : result.devices.front().label + ": " + result.devices.front().reason;
        }
        return std::nullopt;
    }
    if (const auto misfit = whatif::modelMisfit(result)) {
        if (why) *why = *misfit;
        return std::nullopt;
    }
    WhatIfSeries s;
    s.fit = fitText(result);
    if (modelled == 1) {
        s.label = one->label;
        s.scenarios = one->scenarios;
        s.observed = one->observed;
        s.selfCheck = one->self_check_error;
    } else {
        s.label = "median over " + std::to_string(modelled) + " devices";
        s.scenarios = result.summary;
        s.observed = result.summaryObserved;
        s.selfCheck = result.summarySelfCheck;
    }
    return s;
}

WhatIfPlot layoutWhatIfPlot(const WhatIfSeries& series, int width, int height) {
    WhatIfPlot p;
    p.fit = series.fit;
    p.left = kLeft;
    p.top = kTop;
    p.right = std::max(p.left + 10, width - kRight);
    p.bottom = std::max(p.top + 10, height - kBottom);
    p.title = "Predicted step time by DDP bucket size: " + series.label;
    p.xTitleAt = {(p.left + p.right) / 2, p.bottom + 34};
    p.yTitleAt = {16, (p.top + p.bottom) / 2};
    if (series.scenarios.empty()) return p;

    double xMin = INFINITY, xMax = -INFINITY, yMin = INFINITY, yMax = -INFINITY;
    const auto seeX = [&](double mb) {
        xMin = std::min(xMin, std::log2(mb));
        xMax = std::max(xMax, std::log2(mb));
    };
    const auto seeY = [&](TimeNs ns) {
        yMin = std::min(yMin, static_cast<double>(ns) / 1e6);
        yMax = std::max(yMax, static_cast<double>(ns) / 1e6);
    };
    for (const auto& s : series.scenarios) {
        seeX(s.bucket_mb);
        seeY(s.step_ns);
        seeY(s.no_overlap_step_ns);
        seeY(s.perfect_overlap_step_ns);
    }
    if (series.observed && series.observed->bucket_mb > 0) {
        seeX(series.observed->bucket_mb);
        seeY(series.observed->step_ns);
    }
    if (xMax - xMin < 1e-9) {
        xMin -= 1;
        xMax += 1;
    }
    const double pad = std::max(1e-6, (yMax - yMin) * 0.06);
    const double yStep = niceStep(yMax - yMin + 2 * pad, 5);
    yMin = std::floor((yMin - pad) / yStep) * yStep;
    yMax = std::ceil((yMax + pad) / yStep) * yStep;

    const auto px = [&](double mb) { return p.left + (std::log2(mb) - xMin) / (xMax - xMin) * (p.right - p.left); };
    const auto py = [&](TimeNs ns) {
        return p.bottom - (static_cast<double>(ns) / 1e6 - yMin) / (yMax - yMin) * (p.bottom - p.top);
    };
    for (size_t i = 0; i < series.scenarios.size(); ++i) {
        const auto& s = series.scenarios[i];
        p.step.push_back({px(s.bucket_mb), py(s.step_ns)});
        p.noOverlap.push_back({px(s.bucket_mb), py(s.no_overlap_step_ns)});
        p.perfect.push_back({px(s.bucket_mb), py(s.perfect_overlap_step_ns)});
        if (s.best) p.best = static_cast<int>(i);
        p.xTicks.push_back({px(s.bucket_mb), whatif::formatMb(s.bucket_mb)});
    }
    if (series.observed && series.observed->bucket_mb > 0)
        p.observed = PlotPoint{px(series.observed->bucket_mb), py(series.observed->step_ns)};
    const int decimals = yStep >= 1 ? 0 : yStep >= 0.1 ? 1 : yStep >= 0.01 ? 2 : 3;
    for (double v = yMin; v <= yMax + yStep / 2; v += yStep)
        p.yTicks.push_back({p.bottom - (v - yMin) / (yMax - yMin) * (p.bottom - p.top), fixed(v, decimals)});

    if (p.best >= 0) {
        const auto& b = series.scenarios[static_cast<size_t>(p.best)];
        p.caption = "best " + whatif::formatMb(b.bucket_mb) +
                    " MiB: " + fixed(static_cast<double>(b.step_ns) / 1e6, 3) + " ms per step";
    }
    if (series.observed)
        p.caption += (p.caption.empty() ? "" : "; ") + std::string("observed ") +
                     whatif::formatMb(series.observed->bucket_mb) +
                     " MiB: " + fixed(static_cast<double>(series.observed->step_ns) / 1e6, 3) + " ms";
    if (series.selfCheck) {
        char buf[48];
        std::snprintf(buf, sizeof buf, "; self-check %+.1f%%", 100 * *series.selfCheck);
        p.caption += buf;
        if (std::fabs(*series.selfCheck) > whatif::kSelfCheckWarn)
            p.caption += " (above 5%: treat the predictions with care)";
    }
    return p;
}

}  // namespace osc::gui
