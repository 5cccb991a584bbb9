#include "analyzer/job/capture_file.h"

#include "analyzer/capture/time_range.h"
#include "analyzer/partial/partial_format.h"

#include <utility>

namespace osc::job {

partial::FilePart analyzeCaptureFile(const std::string& path, const AnalysisSettings& settings, CaptureReader reader,
                                     const LoadOptions& options) {
    partial::FilePart part;
    {
        Capture capture;
        capture.sourcePaths.push_back(path);
        reader(path, options, capture);
        checkTimeRanges(capture, 0, path);
        finishLoading(capture);
        part = partial::analyzeFilePart(std::move(capture), path, settings);
    }  // the capture is freed before its part is written anywhere
    return part;
}

void writeCapturePartial(std::ostream& out, const std::string& path, const AnalysisSettings& settings,
                         CaptureReader reader, const std::string& generator) {
    const partial::FilePart part = analyzeCaptureFile(path, settings, reader);
    partial::writePartialHeader(out, {settings, {path}, generator});
    const size_t devices = partial::writeFileSection(out, part);
    partial::writePartialTrailer(out, 1, devices);
}

}  // namespace osc::job
