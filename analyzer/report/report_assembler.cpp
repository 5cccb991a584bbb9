#include "analyzer/report/report_assembler.h"

#include <algorithm>
#include <numeric>

namespace osc::report {
namespace {

// Cuts `rows` to the `top` that matchedTable(rows, top) would show, still in
// matched order, so that ties break as they would over all rows.
void keepMostSkewed(std::vector<MatchedRow>& rows, size_t top) {
    std::vector<size_t> order(rows.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::nth_element(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(top), order.end(),
                     [&](size_t x, size_t y) {
                         if (rows[x].skew_ns != rows[y].skew_ns) return rows[x].skew_ns > rows[y].skew_ns;
                         return x < y;
                     });
    order.resize(top);
    std::sort(order.begin(), order.end());
    std::vector<MatchedRow> kept;
    kept.reserve(rows.size());  // the same room again: the next cut comes after as many rows
    for (size_t i : order) kept.push_back(std::move(rows[i]));
    rows = std::move(kept);
}

}  // namespace

DeviceAnalysis jobLevelCopy(const DeviceAnalysis& d) {
    DeviceAnalysis out;
    out.processIndex = d.processIndex;
    out.rank = d.rank;
    out.host = d.host;
    out.pid = d.pid;
    out.device = d.device;
    out.totals = d.totals;
    out.last_arrivals = d.last_arrivals;
    out.delay_caused_ns = d.delay_caused_ns;
    out.pipeline = d.pipeline;
    out.alltoall = d.alltoall;
    out.straggler = d.straggler;
    return out;
}

ReportAssembler::ReportAssembler(ReportFormat format, ReportOptions options)
    : format_(format), options_(std::move(options)) {
    keepsMatched_ = format_ == ReportFormat::Text && options_.collectives;
}

void ReportAssembler::addDevice(const DeviceAnalysis& device) {
    if (format_ == ReportFormat::Text)
        addTextSections(device, options_, sections_);
    else
        addMarkdownSections(device, options_, sections_);
    devices_.push_back(jobLevelCopy(device));
}

void ReportAssembler::addMatched(const MatchedCollective& matched) {
    ++matchedCount_;
    if (!keepsMatched_) return;
    matched_.push_back(matchedRow(matched));
    const size_t top = options_.topCollectives;
    // Cut at twice the rows shown: each row is then moved a bounded number of times.
    if (top != 0 && matched_.size() >= 2 * top) keepMostSkewed(matched_, top);
}

std::string ReportAssembler::finish(const Analysis& rest) const {
    const JobParts job{rest, devices_, matchedCount_, matched_};
    return format_ == ReportFormat::Text ? textReport(sections_, job, options_)
                                         : markdownReport(sections_, job, options_);
}

}  // namespace osc::report
