#include "analyzer/partial/merge.h"

#include "analyzer/partial/device_json.h"
#include "analyzer/report/report_json.h"

#include <sstream>
#include <stdexcept>

namespace osc::partial {
namespace {

crossrank::EngineOptions engineOptions(const PartSet& parts, const MergeOptions& options) {
    if (!options.alignCollectives && !parts.alignAgreed)
        throw std::invalid_argument("the partial results were made with different --align choices; give --align");
    crossrank::EngineOptions out;
    out.settings = parts.settings;
    out.settings.alignCollectives = options.alignCollectives.value_or(parts.settings.alignCollectives);
    if (options.peakBusBwGbps) out.settings.peakBusBwGbps = options.peakBusBwGbps;
    out.instancesInMemory = options.instancesInMemory;
    return out;
}

}  // namespace

Merge::Merge(const PartSet& parts, const MergeOptions& options)
    : parts_(parts), options_(options), source_(parts), engine_(source_, engineOptions(parts, options)) {}

void Merge::writeDevice(std::ostream& out, int indent, size_t index) {
    const crossrank::DeviceCrossRank cross = engine_.device(index);
    const PartDevice& d = source_.part(index);
    if (d.binary) {
        DeviceAnalysis device = parts_.readDevice(d);
        crossrank::applyCrossRank(device, cross);
        report::writeDeviceJson(out, device, indent);
    } else {
        const auto in = parts_.openDeviceJson(d);
        rewriteDeviceJson(*in, out, indent, cross, d.idleGapAt, parts_.sourceName(d.source));
    }
    if (options_.progress) options_.progress(index + 1, engine_.deviceCount());
}

DeviceAnalysis Merge::device(size_t index) {
    const PartDevice& d = source_.part(index);
    DeviceAnalysis out;
    if (d.binary) {
        const crossrank::DeviceCrossRank cross = engine_.device(index);
        out = parts_.readDevice(d);
        crossrank::applyCrossRank(out, cross);
        if (options_.progress) options_.progress(index + 1, engine_.deviceCount());
    } else {
        std::ostringstream text;
        writeDevice(text, 0, index);
        out = report::parseDeviceJson(text.str(), parts_.sourceName(d.source));
    }
    out.processIndex = source_.processOf(index);
    return out;
}

void writeMergedJson(const PartSet& parts, const MergeOptions& options, const report::ReportOptions& report,
                     std::ostream& out, const std::function<void(const std::vector<std::string>&)>& warnings) {
    Merge merge(parts, options);
    if (warnings) warnings(merge.rest().warnings);
    report::StreamedReportBody body;
    body.deviceCount = merge.deviceCount();
    body.writeDevice = [&](std::ostream& os, int indent, size_t i) { merge.writeDevice(os, indent, i); };
    body.matchedCount = merge.matchedCount();
    body.matched = [&](size_t i) { return merge.matched(i); };
    report::writeJsonReport(out, merge.rest(), report, body);
}

std::string mergedReport(const PartSet& parts, const MergeOptions& options, const report::ReportOptions& report,
                         report::ReportFormat format, std::vector<std::string>* warnings) {
    Merge merge(parts, options);
    if (warnings) *warnings = merge.rest().warnings;
    report::ReportAssembler assembler(format, report);
    for (size_t i = 0; i < merge.deviceCount(); ++i) assembler.addDevice(merge.device(i));
    for (size_t g = 0; g < merge.matchedCount(); ++g) assembler.addMatched(merge.matched(g));
    return assembler.finish(merge.rest());
}

Analysis mergedAnalysis(const PartSet& parts, const MergeOptions& options, bool collectives) {
    Merge merge(parts, options);
    Analysis a = merge.rest();
    a.devices.clear();  // shells: the devices themselves come next
    a.devices.reserve(merge.deviceCount());
    for (size_t i = 0; i < merge.deviceCount(); ++i) {
        DeviceAnalysis d = merge.device(i);
        if (!collectives) {
            d.collectives = {};
            d.signatures = {};
        }
        a.devices.push_back(std::move(d));
    }
    if (collectives)
        for (size_t g = 0; g < merge.matchedCount(); ++g) a.matched.push_back(merge.matched(g));
    return a;
}

}  // namespace osc::partial
