// HTA's get_gpu_kernel_breakdown over the events hta_trace.cpp kept: both of
// its tables as far as pandas' group-bys and sorts give one order only. The
// sort of the kernel types by time and the fold of a rank's least kernels
// into "others" stay in pandas (hta.py): their order of ties is numpy's
// quicksort's, which differs across versions.
#include "python/src/columns.h"
#include "python/src/hta_engine.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace osc::python {
namespace {

std::vector<HtaKernelType> analysedTypes(bool includeMemory) {
    if (includeMemory) return {HtaKernelType::Computation, HtaKernelType::Communication, HtaKernelType::Memory};
    return {HtaKernelType::Computation, HtaKernelType::Communication};
}

// The time in whole us of each kernel-type combination over the job, by
// label in text order (pandas' group-by on the label). HTA truncates each
// piece of a rank's sweep to whole us (astype(int)); the sums are whole
// numbers, exact in any order.
std::map<std::string, double> typeTimes(const std::vector<HtaRank>& ranks, bool includeMemory) {
    const std::vector<HtaKernelType> analysed = analysedTypes(includeMemory);
    std::map<std::string, double> byLabel;
    for (const HtaRank& r : ranks) {
        std::vector<std::pair<const std::vector<HtaSpan>*, int>> typed;
        for (size_t bit = 0; bit < analysed.size(); ++bit) typed.emplace_back(&r.unions.of(analysed[bit]), 1 << bit);
        const auto events = htaStatusEvents(typed);
        std::vector<double> byRunning(size_t{1} << analysed.size());
        int running = 0;
        for (size_t k = 0; k + 1 < events.size(); ++k) {
            running += events[k].delta;
            if (running <= 0) continue;
            // Above every type's bit only where groups of negative length overlap.
            if (static_cast<size_t>(running) >= byRunning.size()) byRunning.resize(static_cast<size_t>(running) + 1);
            byRunning[static_cast<size_t>(running)] += std::trunc(htaUs(events[k + 1].time - events[k].time));
        }
        for (size_t value = 1; value < byRunning.size(); ++value) {
            const double time = byRunning[value];
            std::string label;
            for (size_t bit = 0; bit < analysed.size(); ++bit)
                if (value & (1 << bit))
                    label += (label.empty() ? "" : " overlapping ") + std::string(htaKernelTypeName(analysed[bit]));
            // HTA's zero rows come from its unstable sort of ties: none here.
            if (time != 0) byLabel[label] += time;
        }
    }
    return byLabel;
}

// pandas' groupby("name")["dur"].agg(["sum", "max", "min", "mean", "std"])
// as its Cython computes it: a Kahan-compensated sum, Welford's variance.
struct NameStats {
    int rank = 0;
    HtaKernelType type = HtaKernelType::Other;
    uint32_t name = 0;
    size_t count = 0;
    double sum = 0, compensation = 0, max = 0, min = 0, mean = 0, ssqdm = 0;

    void add(double v) {
        const double y = v - compensation;
        const double t = sum + y;
        compensation = t - sum - y;
        sum = t;
        max = count ? std::max(max, v) : v;
        min = count ? std::min(min, v) : v;
        ++count;
        const double old = mean;
        mean += (v - mean) / static_cast<double>(count);
        ssqdm += (v - old) * (v - mean);
    }
    double average() const { return sum / static_cast<double>(count); }  // the group-by's mean
    std::optional<double> stddev() const {                               // ddof 1
        if (count < 2) return std::nullopt;
        return std::sqrt(ssqdm / static_cast<double>(count - 1));
    }
};

// Per rank, its analysed kernels' statistics by (type, name): the rows
// HTA's per-rank group-by gives, in its order. A name has one type
// (hta_trace.cpp), so the name alone finds its row.
std::vector<NameStats> nameStats(const std::vector<HtaRank>& ranks, size_t names, bool includeMemory) {
    const std::vector<HtaKernelType> analysed = analysedTypes(includeMemory);
    std::vector<NameStats> rows;
    constexpr uint32_t kNone = UINT32_MAX;
    std::vector<uint32_t> slotOf(names, kNone);
    for (const HtaRank& r : ranks) {
        const size_t first = rows.size();
        for (size_t i = 0; i < r.start.size(); ++i) {
            if (std::find(analysed.begin(), analysed.end(), r.type[i]) == analysed.end()) continue;
            uint32_t& slot = slotOf[r.name[i]];
            if (slot == kNone) {
                slot = static_cast<uint32_t>(rows.size());
                rows.push_back({.rank = r.rank, .type = r.type[i], .name = r.name[i]});
            }
            rows[slot].add(htaUs(r.end[i] - r.start[i]));
        }
        for (size_t k = first; k < rows.size(); ++k) slotOf[rows[k].name] = kNone;
        std::sort(rows.begin() + static_cast<std::ptrdiff_t>(first), rows.end(),
                  [](const auto& a, const auto& b) { return std::pair(a.type, a.name) < std::pair(b.type, b.name); });
    }
    return rows;
}

}  // namespace

py::dict HtaTrace::kernelBreakdown(bool includeMemory, int numKernels) const {
    const std::map<std::string, double> times = typeTimes(ranks_, includeMemory);
    std::vector<std::string> labels;
    std::vector<int64_t> sums;
    int64_t total = 0;
    for (const auto& [label, time] : times) {
        labels.push_back(label);
        sums.push_back(static_cast<int64_t>(time));
        total += sums.back();
    }
    Columns types(labels.size());
    types.add("kernel_type", [&](size_t i) { return labels[i]; });
    types.add("sum", [&](size_t i) { return sums[i]; });
    // pandas: int64 / int64 in float64, times 100, rounded to one decimal.
    types.add("percentage", [&](size_t i) {
        return roundLikeNumpy(static_cast<double>(sums[i]) / static_cast<double>(total) * 100, 1);
    });

    // A (rank, type) group of more than numKernels names is folded; the
    // others' rows are final, ordered as the table's sort by kernel_type,
    // name and rank orders them (no two share all three).
    const std::vector<NameStats> rows = nameStats(ranks_, names_.size(), includeMemory);
    std::map<std::pair<int, HtaKernelType>, size_t> namesIn;
    for (const NameStats& s : rows) ++namesIn[{s.rank, s.type}];
    std::vector<const NameStats*> kept, folded;
    std::unordered_map<uint32_t, std::string> textOf;
    for (const NameStats& s : rows) {
        if (namesIn[{s.rank, s.type}] > static_cast<size_t>(std::max(numKernels, 0))) {
            folded.push_back(&s);
        } else {
            kept.push_back(&s);
            textOf.try_emplace(s.name, pythonText(names_[s.name]));
        }
    }
    std::sort(kept.begin(), kept.end(), [&](const NameStats* a, const NameStats* b) {
        const std::string_view typeA = htaKernelTypeName(a->type), typeB = htaKernelTypeName(b->type);
        if (typeA != typeB) return typeA < typeB;
        const std::string &nameA = textOf.at(a->name), &nameB = textOf.at(b->name);
        if (nameA != nameB) return nameA < nameB;
        return a->rank < b->rank;
    });
    Columns kernels(kept.size());
    kernels.add("name", [&](size_t i) -> std::string_view { return textOf.at(kept[i]->name); });
    kernels.add("sum (us)", [&](size_t i) { return kept[i]->sum; });
    kernels.add("max (us)", [&](size_t i) { return kept[i]->max; });
    kernels.add("min (us)", [&](size_t i) { return kept[i]->min; });
    kernels.add("stddev", [&](size_t i) { return kept[i]->stddev().value_or(0.0); });
    kernels.add("mean (us)", [&](size_t i) { return kept[i]->average(); });
    kernels.add("kernel_type", [&](size_t i) -> std::string { return htaKernelTypeName(kept[i]->type); });
    kernels.add("rank", [&](size_t i) { return kept[i]->rank; });

    Columns toFold(folded.size());
    toFold.add("rank", [&](size_t i) { return folded[i]->rank; });
    toFold.add("kernel_type", [&](size_t i) -> std::string { return htaKernelTypeName(folded[i]->type); });
    toFold.add("name", [&](size_t i) -> std::string_view { return names_[folded[i]->name]; });
    toFold.add("sum", [&](size_t i) { return folded[i]->sum; });
    toFold.add("max", [&](size_t i) { return folded[i]->max; });
    toFold.add("min", [&](size_t i) { return folded[i]->min; });
    toFold.add("mean", [&](size_t i) { return folded[i]->average(); });
    toFold.add("std", [&](size_t i) { return folded[i]->stddev(); });

    py::dict out;
    out["types"] = types.finish();
    out["kernels"] = kernels.finish();
    out["folded"] = toFold.finish();
    return out;
}

}  // namespace osc::python
