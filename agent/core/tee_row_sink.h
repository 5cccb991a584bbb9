// Every row to a capture file and to the live pipeline (row_tap.h). Kernel
// rows carry name ids of the sink that gave them; each side has its own
// table, so the tee hands out ids of its own and translates them per side.
#pragma once

#include "analyzer/capture/row_sink.h"

#include <vector>

namespace osc::agent {

class TeeRowSink final : public RowSink {
public:
    // `file` may be null: a stream with no capture file.
    TeeRowSink(RowSink* file, RowSink& tap) : file_(file), tap_(tap) {}

    uint32_t stringId(std::string_view text) override {
        fileIds_.push_back(file_ ? file_->stringId(text) : kNoId);
        tapIds_.push_back(tap_.stringId(text));
        return static_cast<uint32_t>(fileIds_.size() - 1);
    }
    void addKernel(const KernelRow& r) override {
        KernelRow k = r;
        if (file_) {
            k.demangledNameId = mapped(fileIds_, r.demangledNameId);
            k.shortNameId = mapped(fileIds_, r.shortNameId);
            file_->addKernel(k);
        }
        k.demangledNameId = mapped(tapIds_, r.demangledNameId);
        k.shortNameId = mapped(tapIds_, r.shortNameId);
        tap_.addKernel(k);
    }
    void addApiCall(const ApiCallRow& r) override {
        ApiCallRow a = r;
        if (file_) {
            a.nameId = mapped(fileIds_, r.nameId);
            file_->addApiCall(a);
        }
        a.nameId = mapped(tapIds_, r.nameId);
        tap_.addApiCall(a);
    }
    void addRange(const RangeRow& r) override {
        RangeRow g = r;
        if (file_) {
            g.textId = mapped(fileIds_, r.textId);
            file_->addRange(g);
        }
        g.textId = mapped(tapIds_, r.textId);
        tap_.addRange(g);
    }
    void addCopy(const CopyRow& r) override {
        both([&](RowSink& s) { s.addCopy(r); });
    }
    void addMemset(const MemsetRow& r) override {
        both([&](RowSink& s) { s.addMemset(r); });
    }
    void addSync(const SyncRow& r) override {
        both([&](RowSink& s) { s.addSync(r); });
    }
    void addCollective(const CollectiveRow& r) override {
        both([&](RowSink& s) { s.addCollective(r); });
    }
    void addGpu(const GpuInfo& g) override {
        both([&](RowSink& s) { s.addGpu(g); });
    }
    void addCudaEvent(const CudaEventRow& r) override {
        both([&](RowSink& s) { s.addCudaEvent(r); });
    }
    void addStreamName(uint64_t globalPid, uint32_t deviceId, uint32_t streamId, std::string_view name) override {
        both([&](RowSink& s) { s.addStreamName(globalPid, deviceId, streamId, name); });
    }
    void addThreadName(uint64_t globalTid, std::string_view name) override {
        both([&](RowSink& s) { s.addThreadName(globalTid, name); });
    }
    void addObjectName(const ObjectNameRow& r) override {
        both([&](RowSink& s) { s.addObjectName(r); });
    }

private:
    static uint32_t mapped(const std::vector<uint32_t>& ids, uint32_t id) { return id < ids.size() ? ids[id] : kNoId; }
    template <class F>
    void both(F f) {
        if (file_) f(*file_);
        f(tap_);
    }

    RowSink* file_;
    RowSink& tap_;
    std::vector<uint32_t> fileIds_, tapIds_;  // by our id
};

}  // namespace osc::agent
