// Every field of a Capture as text, string ids as they are (and the string
// table in id order), so two readers of one file can be compared exactly.
#pragma once

#include "analyzer/capture/model.h"

#include <sstream>
#include <string>
#include <vector>

namespace osc::testing {

namespace dump_detail {
template <typename T>
void column(std::ostringstream& out, const char* name, const std::vector<T>& v) {
    out << name << '[' << v.size() << "]:";
    for (const auto& x : v) {
        if constexpr (sizeof(T) == 1)
            out << ' ' << static_cast<int>(x);
        else
            out << ' ' << x;
    }
    out << '\n';
}
}  // namespace dump_detail

inline std::string dumpCapture(const Capture& c) {
    using dump_detail::column;
    std::ostringstream out;
    out << "strings " << c.strings.size() << '\n';
    for (uint32_t i = 0; i < c.strings.size(); ++i) out << i << '=' << c.strings.at(i) << '\n';
    out << "origin " << c.originUtcNs << '\n';
    for (const auto& w : c.warnings) out << "warning " << w << '\n';
    for (const Process& p : c.processes) {
        out << "process " << p.sourcePath << '|' << p.host << '|' << p.pid << '|' << p.rank << '|' << p.localRank << '|'
            << p.worldSize << '|' << p.name << '|' << p.sessionStartUtcNs << '|' << p.timeOffsetNs << '\n';
        for (const auto& [k, v] : p.meta) out << "meta " << k << '=' << v << '\n';
        for (const auto& [k, v] : p.threadNames) out << "thread " << k << '=' << v << '\n';
        for (const Device& d : p.devices) {
            out << "device " << d.id << ' ' << d.gpu.id << '|' << d.gpu.name << '|' << d.gpu.totalMemory << '|'
                << d.gpu.smCount << '|' << d.gpu.computeMajor << '.' << d.gpu.computeMinor << '\n';
            const KernelTable& k = d.kernels;
            column(out, "k.start", k.start);
            column(out, "k.end", k.end);
            column(out, "k.stream", k.stream);
            column(out, "k.correlation", k.correlation);
            column(out, "k.name", k.name);
            column(out, "k.shortName", k.shortName);
            for (const auto* v : {&k.gridX, &k.gridY, &k.gridZ, &k.blockX, &k.blockY, &k.blockZ, &k.registersPerThread,
                                  &k.staticSharedMemory, &k.dynamicSharedMemory, &k.graphId})
                column(out, "k.launch", *v);
            column(out, "k.graphNodeId", k.graphNodeId);
            const CopyTable& m = d.copies;
            column(out, "c.start", m.start);
            column(out, "c.end", m.end);
            column(out, "c.stream", m.stream);
            column(out, "c.correlation", m.correlation);
            column(out, "c.bytes", m.bytes);
            column(out, "c.kinds", m.copyKind);
            column(out, "c.src", m.srcKind);
            column(out, "c.dst", m.dstKind);
            column(out, "c.srcDevice", m.srcDevice);
            column(out, "c.dstDevice", m.dstDevice);
            const MemsetTable& s = d.memsets;
            column(out, "m.start", s.start);
            column(out, "m.end", s.end);
            column(out, "m.stream", s.stream);
            column(out, "m.correlation", s.correlation);
            column(out, "m.bytes", s.bytes);
            column(out, "m.value", s.value);
            const SyncTable& y = d.syncs;
            column(out, "s.start", y.start);
            column(out, "s.end", y.end);
            column(out, "s.stream", y.stream);
            column(out, "s.correlation", y.correlation);
            column(out, "s.type", y.type);
            column(out, "s.eventId", y.eventId);
        }
        const ApiCallTable& a = p.apiCalls;
        column(out, "a.start", a.start);
        column(out, "a.end", a.end);
        column(out, "a.globalTid", a.globalTid);
        column(out, "a.correlation", a.correlation);
        column(out, "a.name", a.name);
        column(out, "a.returnValue", a.returnValue);
        column(out, "a.kind", a.kind);
        column(out, "o.start", p.cpuOps.start);
        column(out, "o.end", p.cpuOps.end);
        column(out, "o.name", p.cpuOps.name);
        column(out, "o.globalTid", p.cpuOps.globalTid);
        for (const RangeTable* r : {&p.ranges}) {
            column(out, "r.start", r->start);
            column(out, "r.end", r->end);
            column(out, "r.name", r->name);
            column(out, "r.globalTid", r->globalTid);
            column(out, "r.domain", r->domain);
            column(out, "r.category", r->category);
            column(out, "r.color", r->color);
            column(out, "r.kind", r->kind);
            column(out, "r.onGpu", r->onGpu);
        }
        const CollectiveTable& t = p.collectives;
        column(out, "n.commHash", t.commHash);
        column(out, "n.rank", t.rank);
        column(out, "n.nranks", t.nranks);
        column(out, "n.seq", t.seqNumber);
        column(out, "n.func", t.func);
        column(out, "n.datatype", t.datatype);
        column(out, "n.algo", t.algo);
        column(out, "n.proto", t.proto);
        column(out, "n.count", t.count);
        column(out, "n.bytes", t.bytes);
        column(out, "n.root", t.root);
        column(out, "n.nChannels", t.nChannels);
        column(out, "n.device", t.device);
        column(out, "n.enqueue", t.enqueue);
        column(out, "n.gpuStart", t.gpuStart);
        column(out, "n.gpuEnd", t.gpuEnd);
        out << "n.p2pNumbered " << t.p2pNumbered << '\n';
        for (const GroupCall& g : p.groupCalls)
            out << "group " << g.group << ' ' << g.collective << ' ' << g.dtype << ' ' << g.seq << ' ' << g.seqFromOrder
                << ' ' << g.bytes << ' ' << g.groupSize << ' ' << g.groupRank << ' ' << g.entered << ' ' << g.device
                << ' ' << (g.gpuStart ? std::to_string(*g.gpuStart) : "-") << ' '
                << (g.gpuEnd ? std::to_string(*g.gpuEnd) : "-") << '\n';
    }
    return out.str();
}

}  // namespace osc::testing
