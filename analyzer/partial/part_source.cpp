#include "analyzer/partial/part_source.h"

#include <algorithm>
#include <climits>
#include <map>

namespace osc::partial {

PartSource::PartSource(const PartSet& parts) : parts_(parts) {
    struct Slot {
        size_t file;
        int process;
    };
    std::vector<Slot> slots;
    int64_t origin = INT64_MAX;
    for (size_t f = 0; f < parts.files.size(); ++f) {
        const auto& file = parts.files[f];
        for (size_t p = 0; p < file.processes.size(); ++p) slots.push_back({f, static_cast<int>(p)});
        if (!file.processes.empty()) origin = std::min(origin, file.originUtcNs);
    }
    std::stable_sort(slots.begin(), slots.end(), [&](const Slot& a, const Slot& b) {
        return processBefore(parts.files[a.file].processes[static_cast<size_t>(a.process)],
                             parts.files[b.file].processes[static_cast<size_t>(b.process)]);
    });
    processes_ = slots.size();
    fileShift_.resize(parts.files.size(), 0);
    for (size_t f = 0; f < parts.files.size(); ++f)
        if (!parts.files[f].processes.empty()) fileShift_[f] = parts.files[f].originUtcNs - origin;
    std::map<std::pair<size_t, int>, std::vector<size_t>> devicesOf;
    for (size_t d = 0; d < parts.devices.size(); ++d)
        devicesOf[{parts.devices[d].file, parts.devices[d].process}].push_back(d);
    for (size_t g = 0; g < slots.size(); ++g) {
        const auto it = devicesOf.find({slots[g].file, slots[g].process});
        if (it != devicesOf.end())
            for (size_t d : it->second) {
                order_.push_back(d);
                processOf_.push_back(static_cast<int>(g));
            }
        for (const auto& [process, message] : parts.files[slots[g].file].warnings)
            if (process == slots[g].process) warnings_.push_back(message);
    }
}

std::optional<uint64_t> PartSource::droppedRecords() const {
    std::optional<uint64_t> n;
    for (const auto& f : parts_.files)
        if (f.droppedRecords) n = n.value_or(0) + *f.droppedRecords;
    return n;
}

}  // namespace osc::partial
