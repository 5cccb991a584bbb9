#include "analyzer/job/arriving_parts.h"

#include "analyzer/partial/device_codec.h"
#include "analyzer/partial/merge.h"

#include <stdexcept>
#include <utility>

namespace osc::job {

ArrivingParts::ArrivingParts(const AnalysisSettings& settings, std::vector<std::string> inputs) {
    set_.setHeader(settings, std::move(inputs));
}

void ArrivingParts::add(size_t index, std::string_view bytes, const std::string& origin) {
    if (index >= given_.size()) {
        given_.resize(index + 1, 0);
        waiting_.resize(index + 1);
    }
    if (given_[index]) throw std::invalid_argument("part " + std::to_string(index) + " given twice");
    auto part = std::make_unique<partial::PreparedPart>(
        partial::preparePart(partial::decodeFilePart(bytes.data(), bytes.size(), origin.c_str()), true));
    given_[index] = 1;
    waiting_[index] = std::move(part);
    // The set's own error (a capture given twice) waits for the rest: a part
    // that cannot be read, later in the job, is the one to report, as in
    // one process.
    for (; !error_ && next_ < waiting_.size() && waiting_[next_]; ++next_) {
        try {
            set_.addPrepared(waiting_[next_]->head, std::move(waiting_[next_]->devices), {});
        } catch (...) {
            error_ = std::current_exception();
        }
        waiting_[next_].reset();
    }
}

Analysis ArrivingParts::analysis(size_t count, const JobRequest& request, const JobProgress& progress) {
    if (error_) std::rethrow_exception(error_);
    if (given_.size() > count) throw std::invalid_argument("a part beyond the job's " + std::to_string(count));
    if (next_ < count) throw std::invalid_argument("part " + std::to_string(next_) + " never came");
    if (progress.warnings) progress.warnings(set_.loadWarnings());
    Analysis a = partial::mergedAnalysis(set_, mergeOptions(request, progress), request.collectives);
    if (progress.status) progress.status("");
    if (progress.warnings) progress.warnings(a.warnings);
    return a;
}

}  // namespace osc::job
