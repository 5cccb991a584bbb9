#include "analyzer/capture/row_tables.h"

namespace osc {

void appendRow(CopyTable& c, const CopyRow& r) {
    c.start.push_back(r.start);
    c.end.push_back(r.end);
    c.stream.push_back(r.streamId);
    c.correlation.push_back(r.correlationId);
    c.bytes.push_back(r.bytes);
    c.copyKind.push_back(r.copyKind);
    c.srcKind.push_back(r.srcKind);
    c.dstKind.push_back(r.dstKind);
    c.srcDevice.push_back(r.srcDeviceId);
    c.dstDevice.push_back(r.dstDeviceId);
}

void appendRow(MemsetTable& m, const MemsetRow& r) {
    m.start.push_back(r.start);
    m.end.push_back(r.end);
    m.stream.push_back(r.streamId);
    m.correlation.push_back(r.correlationId);
    m.bytes.push_back(r.bytes);
    m.value.push_back(r.value);
}

void appendRow(CollectiveTable& c, StringTable& strings, const CollectiveRow& r) {
    c.commHash.push_back(r.commHash);
    c.rank.push_back(r.rank);
    c.nranks.push_back(r.nranks);
    c.seqNumber.push_back(r.seqNumber);
    c.func.push_back(strings.intern(r.func));
    c.datatype.push_back(strings.intern(r.datatype));
    c.algo.push_back(strings.intern(r.algo));
    c.proto.push_back(strings.intern(r.proto));
    c.count.push_back(r.count);
    c.bytes.push_back(r.bytes);
    c.root.push_back(r.root);
    c.nChannels.push_back(r.nChannels);
    c.device.push_back(r.deviceId);
    c.enqueue.push_back(r.enqueue);
    c.gpuStart.push_back(r.gpuStart);
    c.gpuEnd.push_back(r.gpuEnd);
}

}  // namespace osc
