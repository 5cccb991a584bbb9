// writeJsonReport with the devices' objects, nearly all of a large report,
// rendered on several threads a few devices ahead of the one being written;
// of fewer devices than threads, each device's collectives so.
#include "analyzer/report/rendered_ahead.h"
#include "analyzer/report/report_json.h"

#include <memory>
#include <ostream>

namespace osc::report {

void writeJsonReportOnThreads(std::ostream& out, const Analysis& a, const ReportOptions& options, int threads) {
    if (threads <= 1) return writeJsonReport(out, a, options);
    StreamedReportBody body;
    body.deviceCount = a.devices.size();
    std::unique_ptr<RenderedAhead> ahead;
    if (a.devices.size() < static_cast<size_t>(threads)) {
        body.writeDevice = [&](std::ostream& os, int indent, size_t i) {
            writeDeviceJson(os, a.devices[i], indent, threads);
        };
    } else {
        body.writeDevice = [&](std::ostream& os, int indent, size_t i) {
            if (!ahead)
                ahead = std::make_unique<RenderedAhead>(
                    a.devices.size(),
                    [&a, indent](std::ostream& text, size_t d) { writeDeviceJson(text, a.devices[d], indent); },
                    threads);
            ahead->write(os, i);
        };
    }
    body.matchedCount = a.matched.size();
    body.matched = [&](size_t i) { return a.matched[i]; };
    writeJsonReport(out, a, options, body);
}

}  // namespace osc::report
