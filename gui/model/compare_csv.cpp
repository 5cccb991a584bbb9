#include "gui/model/compare_csv.h"

#include "gui/model/csv_text.h"

#include <cmath>
#include <sstream>

namespace osc::gui {
namespace {

using csv::line;
using csv::number;
using csv::quoted;

constexpr const char* kStepMetrics[] = {"window_ns",       "compute_ns", "comm_ns",      "overlap_ns",
                                        "exposed_comm_ns", "idle_ns",    "overlap_ratio"};

// (B − A) / |A|, unknown where A is 0 or either side is unknown.
std::optional<double> relative(std::optional<double> a, std::optional<double> b) {
    if (!a || !b || *a == 0) return std::nullopt;
    return (*b - *a) / std::fabs(*a);
}

std::optional<double> change(std::optional<double> a, std::optional<double> b) {
    if (!a || !b) return std::nullopt;
    return *b - *a;
}

void addMetric(std::vector<std::string>& row, std::optional<double> a, std::optional<double> b) {
    row.push_back(number(a));
    row.push_back(number(b));
    row.push_back(number(change(a, b)));
    row.push_back(number(relative(a, b)));
}

void addHeader(std::vector<std::string>& header, const std::string& metric) {
    for (const char* suffix : {"_a", "_b", "_change", "_relative"}) header.push_back(metric + suffix);
}

const CollectiveInstance* at(const Analysis& a, int device, int collective) {
    return collective >= 0 ? &a.devices[static_cast<size_t>(device)].collectives[static_cast<size_t>(collective)]
                           : nullptr;
}

std::optional<double> field(const CollectiveInstance* c, TimeNs CollectiveInstance::*f) {
    return c ? std::optional<double>(static_cast<double>(c->*f)) : std::nullopt;
}

}  // namespace

std::string compareStepsCsv(const Analysis& base, const Analysis& candidate, const RunComparison& comparison) {
    std::ostringstream out;
    std::vector<std::string> header{"rank", "host", "pid", "device", "step", "name_a", "name_b"};
    for (const char* m : kStepMetrics) addHeader(header, m);
    line(out, header);
    for (const StepPair& p : comparison.steps) {
        const DeviceAnalysis& da = base.devices[static_cast<size_t>(p.baseDevice)];
        const DeviceAnalysis& db = candidate.devices[static_cast<size_t>(p.candidateDevice)];
        std::vector<std::string> row = csv::deviceFields(da);
        row.push_back(std::to_string(p.step));
        row.push_back(quoted(da.steps[static_cast<size_t>(p.step)].name));
        row.push_back(quoted(db.steps[static_cast<size_t>(p.step)].name));
        const report::DiffRow& diff = comparison.diff.rows[p.diffRow];
        for (const char* m : kStepMetrics) {
            const report::MetricDelta* d = findMetric(diff, m);
            addMetric(row, d ? d->base : std::nullopt, d ? d->candidate : std::nullopt);
        }
        line(out, row);
    }
    return out.str();
}

std::string compareCollectivesCsv(const Analysis& base, const Analysis& candidate, const RunComparison& comparison) {
    std::ostringstream out;
    std::vector<std::string> header{"rank",   "host",  "pid", "device", "step",   "collective", "group",
                                    "bucket", "bytes", "in",  "name_a", "name_b", "start_ns_a", "start_ns_b"};
    for (const char* m : {"duration_ns", "overlapped_ns", "exposed_ns"}) addHeader(header, m);
    line(out, header);
    for (const CollectivePair& p : comparison.collectives) {
        const CollectiveInstance* ca = at(base, p.baseDevice, p.baseCollective);
        const CollectiveInstance* cb = at(candidate, p.candidateDevice, p.candidateCollective);
        const CollectiveInstance* either = ca ? ca : cb;
        std::vector<std::string> row = csv::deviceFields(base.devices[static_cast<size_t>(p.baseDevice)]);
        row.push_back(p.step >= 0 ? std::to_string(p.step) : std::string());
        row.push_back(quoted(either->collectiveOrName()));
        row.push_back(quoted(p.group));
        row.push_back(std::to_string(p.bucket));
        row.push_back(number(either->bytes));
        row.push_back(ca && cb ? "both" : ca ? "a" : "b");
        row.push_back(ca ? quoted(ca->name) : std::string());
        row.push_back(cb ? quoted(cb->name) : std::string());
        row.push_back(ca ? std::to_string(ca->start_ns) : std::string());
        row.push_back(cb ? std::to_string(cb->start_ns) : std::string());
        for (TimeNs CollectiveInstance::*f :
             {&CollectiveInstance::duration_ns, &CollectiveInstance::overlapped_ns, &CollectiveInstance::exposed_ns})
            addMetric(row, field(ca, f), field(cb, f));
        line(out, row);
    }
    return out.str();
}

}  // namespace osc::gui
