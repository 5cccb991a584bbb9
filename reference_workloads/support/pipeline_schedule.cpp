#include "reference_workloads/support/pipeline_schedule.h"

#include <algorithm>
#include <limits>
#include <map>
#include <stdexcept>
#include <tuple>

namespace oscwl {
namespace {

struct Transfer {
    PipeData data;
    int mb;
    int from, to;  // equal for a loopback
};

// Every transfer of one step, in no particular order.
std::vector<Transfer> all_transfers(int stages, int microbatches) {
    std::vector<Transfer> out;
    for (int m = 0; m < microbatches; ++m) {
        if (stages == 1) {
            out.push_back({PipeData::input, m, 0, 0});
            out.push_back({PipeData::loss, m, 0, 0});
            out.push_back({PipeData::drain, m, 0, 0});
            continue;
        }
        for (int s = 0; s + 1 < stages; ++s) {
            out.push_back({PipeData::activation, m, s, s + 1});
            out.push_back({PipeData::gradient, m, s + 1, s});
        }
    }
    return out;
}

int index_of(const std::vector<PipePass>& passes, PipePass p) {
    const auto it = std::find(passes.begin(), passes.end(), p);
    if (it == passes.end()) throw std::logic_error("pipeline plan: a pass is missing from a stage");
    return static_cast<int>(it - passes.begin());
}

// A transfer as one stage sees it: its operation and the passes (indices in
// the stage's order) that produce what it sends and consume what it receives.
struct StageOp {
    PipeP2P op;
    int producer = -1;
    int consumer = -1;
};

StageOp stage_op(const Transfer& t, int stage, const std::vector<PipePass>& passes) {
    StageOp s;
    const PipePass fwd{false, t.mb}, bwd{true, t.mb};
    if (t.from == t.to) {
        s.op = {PipeP2P::Role::loopback, t.data, t.mb, stage};
        if (t.data == PipeData::input) s.consumer = index_of(passes, fwd);
        if (t.data == PipeData::loss) {
            s.producer = index_of(passes, fwd);
            s.consumer = index_of(passes, bwd);
        }
        if (t.data == PipeData::drain) s.producer = index_of(passes, bwd);
        return s;
    }
    const PipePass pass = t.data == PipeData::activation ? fwd : bwd;
    if (stage == t.from) {
        s.op = {PipeP2P::Role::send, t.data, t.mb, t.to};
        s.producer = index_of(passes, pass);
    } else {
        s.op = {PipeP2P::Role::recv, t.data, t.mb, t.from};
        s.consumer = index_of(passes, pass);
    }
    return s;
}

bool involves(const Transfer& t, int stage) { return t.from == stage || t.to == stage; }

// Start and end of every pass with free communication, forward 1 and
// backward 2 time units: the order in which the transfers' data appear.
void ideal_times(const std::vector<std::vector<PipePass>>& passes, std::vector<std::vector<long>>& start,
                 std::vector<std::vector<long>>& end) {
    const int stages = static_cast<int>(passes.size());
    start.assign(passes.size(), {});
    end.assign(passes.size(), {});
    std::vector<std::size_t> next(passes.size(), 0);
    std::vector<long> free_at(passes.size(), 0);
    auto producer_end = [&](int stage, PipePass p) -> long {  // -1 while not yet scheduled
        const int i = index_of(passes[static_cast<std::size_t>(stage)], p);
        return static_cast<std::size_t>(i) < end[static_cast<std::size_t>(stage)].size()
                   ? end[static_cast<std::size_t>(stage)][static_cast<std::size_t>(i)]
                   : -1;
    };
    for (bool progress = true; progress;) {
        progress = false;
        for (int s = 0; s < stages; ++s) {
            const auto su = static_cast<std::size_t>(s);
            if (next[su] == passes[su].size()) continue;
            const PipePass p = passes[su][next[su]];
            long ready = free_at[su];
            // Input from a neighbour: F(m) from stage s-1, B(m) from stage s+1.
            const int from = p.backward ? s + 1 : s - 1;
            if (from >= 0 && from < stages) {
                const long e = producer_end(from, p);
                if (e < 0) continue;
                ready = std::max(ready, e);
            }
            start[su].push_back(ready);
            end[su].push_back(ready + (p.backward ? 2 : 1));
            free_at[su] = end[su].back();
            ++next[su];
            progress = true;
        }
    }
    for (int s = 0; s < stages; ++s)
        if (next[static_cast<std::size_t>(s)] != passes[static_cast<std::size_t>(s)].size())
            throw std::logic_error("pipeline plan: the pass orders wait on each other");
}

StagePlan naive_stage(int stage, const std::vector<PipePass>& passes, const std::vector<Transfer>& transfers) {
    // Groups between passes: what pass k-1 sends, with what pass k receives.
    std::vector<std::vector<PipeP2P>> between(passes.size() + 1);
    for (const Transfer& t : transfers) {
        if (!involves(t, stage)) continue;
        const StageOp s = stage_op(t, stage, passes);
        // A loopback goes out when its data exists; a receive just before its pass.
        const int slot = s.producer >= 0 ? s.producer + 1 : s.consumer;
        between[static_cast<std::size_t>(slot)].push_back(s.op);
    }
    StagePlan plan;
    for (std::size_t k = 0; k <= passes.size(); ++k) {
        // Sends first, for whoever reads the plan; NCCL does not mind.
        std::stable_partition(between[k].begin(), between[k].end(),
                              [](const PipeP2P& op) { return op.role != PipeP2P::Role::recv; });
        if (!between[k].empty()) plan.actions.push_back({false, {}, between[k], {}});
        if (k < passes.size()) plan.actions.push_back({true, passes[k], {}, {}});
    }
    return plan;
}

StagePlan overlapped_stage(int stage, const std::vector<PipePass>& passes, const std::vector<Transfer>& ordered,
                           bool recv_joins_send) {
    std::vector<StageOp> fifo;
    for (const Transfer& t : ordered)
        if (involves(t, stage)) fifo.push_back(stage_op(t, stage, passes));
    // Two neighbours in the queue, one send and one receive, may form one
    // group: they move at once instead of one after the other. A send takes
    // the receive behind it; with `recv_joins_send` a receive also takes the
    // send behind it, if the receive's pass comes after the send's (the
    // group starts once the send's pass is done, so the receive is posted
    // later: it helps 1F1B, where the receive's data comes late anyway, and
    // hurts GPipe). Never more than two, so a pass waiting for its receive
    // waits for nothing queued after it, and no group waits for itself.
    struct Group {
        std::vector<PipeP2P> ops;
        int last_producer = -1;  // the pass that must be issued before the group
    };
    std::vector<Group> groups;
    for (std::size_t q = 0; q < fifo.size();) {
        const StageOp& first = fifo[q++];
        Group g{{first.op}, first.producer};
        if (q < fifo.size()) {
            const StageOp& second = fifo[q];
            const bool send_then_recv = first.op.role == PipeP2P::Role::send && second.op.role == PipeP2P::Role::recv;
            const bool recv_then_send = recv_joins_send && first.op.role == PipeP2P::Role::recv &&
                                        second.op.role == PipeP2P::Role::send && first.consumer > second.producer;
            if (send_then_recv || recv_then_send) {
                g.ops.push_back(second.op);
                g.last_producer = std::max(g.last_producer, second.producer);
                ++q;
            }
        }
        groups.push_back(std::move(g));
    }
    StagePlan plan;
    std::size_t next = 0;
    for (std::size_t k = 0; k <= passes.size(); ++k) {
        // Issue the queue up to the first group whose sending pass is not issued yet.
        while (next < groups.size() && (k == passes.size() || groups[next].last_producer < static_cast<int>(k)))
            plan.actions.push_back({false, {}, groups[next++].ops, {}});
        if (k < passes.size()) plan.actions.push_back({true, passes[k], {}, {}});
    }
    return plan;
}

// Fills `waits` from what each pass consumes and each group sends.
void link_waits(int stage, const std::vector<PipePass>& passes, StagePlan& plan) {
    std::vector<int> action_of_pass(passes.size(), -1);
    for (std::size_t a = 0; a < plan.actions.size(); ++a)
        if (plan.actions[a].is_pass)
            action_of_pass[static_cast<std::size_t>(index_of(passes, plan.actions[a].pass))] = static_cast<int>(a);
    std::vector<int> input_group(passes.size(), -1);
    for (std::size_t a = 0; a < plan.actions.size(); ++a) {
        PipeAction& act = plan.actions[a];
        if (act.is_pass) continue;
        for (const PipeP2P& op : act.group) {
            const Transfer t{op.data, op.mb, op.role == PipeP2P::Role::recv ? op.peer : stage,
                             op.role == PipeP2P::Role::send ? op.peer : stage};
            const StageOp s = stage_op(t, stage, passes);
            if (s.producer >= 0) {
                const int p = action_of_pass[static_cast<std::size_t>(s.producer)];
                if (p > static_cast<int>(a)) throw std::logic_error("pipeline plan: a send is issued before its pass");
                act.waits.push_back(p);
            }
            if (s.consumer >= 0) input_group[static_cast<std::size_t>(s.consumer)] = static_cast<int>(a);
        }
    }
    for (std::size_t k = 0; k < passes.size(); ++k) {
        const int a = action_of_pass[k];
        const int g = input_group[k];
        if (g > a) throw std::logic_error("pipeline plan: a pass is issued before its input is received");
        if (g >= 0) plan.actions[static_cast<std::size_t>(a)].waits.push_back(g);
    }
}

}  // namespace

const char* to_string(PipeSchedule s) { return s == PipeSchedule::gpipe ? "gpipe" : "1f1b"; }

const char* to_string(PipeData d) {
    switch (d) {
        case PipeData::activation:
            return "activation";
        case PipeData::gradient:
            return "gradient";
        case PipeData::input:
            return "input";
        case PipeData::loss:
            return "loss";
        case PipeData::drain:
            return "drain";
    }
    return "?";
}

std::vector<PipePass> stage_passes(PipeSchedule schedule, int stages, int stage, int microbatches) {
    if (stages < 1 || microbatches < 1 || stage < 0 || stage >= stages)
        throw std::invalid_argument("stage_passes: bad stage, stages or micro-batches");
    std::vector<PipePass> out;
    if (schedule == PipeSchedule::gpipe) {
        for (int m = 0; m < microbatches; ++m) out.push_back({false, m});
        for (int m = 0; m < microbatches; ++m) out.push_back({true, m});
        return out;
    }
    const int warmup = std::min(stages - 1 - stage, microbatches);
    for (int m = 0; m < warmup; ++m) out.push_back({false, m});
    for (int i = 0; i < microbatches - warmup; ++i) {
        out.push_back({false, warmup + i});
        out.push_back({true, i});
    }
    for (int m = microbatches - warmup; m < microbatches; ++m) out.push_back({true, m});
    return out;
}

int StagePlan::groups() const {
    return static_cast<int>(
        std::count_if(actions.begin(), actions.end(), [](const PipeAction& a) { return !a.is_pass; }));
}

int StagePlan::transfers() const {
    int n = 0;
    for (const PipeAction& a : actions) n += static_cast<int>(a.group.size());
    return n;
}

PipelinePlan plan_pipeline(PipeSchedule schedule, int stages, int microbatches, bool overlap) {
    PipelinePlan plan;
    plan.schedule = schedule;
    plan.stages = stages;
    plan.microbatches = microbatches;
    plan.overlap = overlap;
    std::vector<std::vector<PipePass>> passes;
    for (int s = 0; s < stages; ++s) passes.push_back(stage_passes(schedule, stages, s, microbatches));
    std::vector<Transfer> transfers = all_transfers(stages, microbatches);
    if (overlap) {
        std::vector<std::vector<long>> start, end;
        ideal_times(passes, start, end);
        // The time the transfer's data is needed: the start of the pass
        // consuming it (a drain has none: when it is produced). Always later
        // than the start of the pass producing it, so sorting by it orders
        // every transfer after those it depends on.
        auto key = [&](const Transfer& t) {
            const bool backward = t.data == PipeData::gradient || t.data == PipeData::loss;
            const int stage = t.data == PipeData::drain ? t.from : t.to;
            const auto& order = passes[static_cast<std::size_t>(stage)];
            const auto i = static_cast<std::size_t>(index_of(order, {backward || t.data == PipeData::drain, t.mb}));
            return t.data == PipeData::drain ? end[static_cast<std::size_t>(stage)][i]
                                             : start[static_cast<std::size_t>(stage)][i];
        };
        // Ties: the later micro-batch first. A stage then receives the next
        // micro-batch before it sends on the current one, which the
        // neighbours need at the same time.
        std::stable_sort(transfers.begin(), transfers.end(), [&](const Transfer& a, const Transfer& b) {
            return std::make_tuple(key(a), -a.mb, static_cast<int>(a.data), a.from) <
                   std::make_tuple(key(b), -b.mb, static_cast<int>(b.data), b.from);
        });
    }
    auto build = [&](bool recv_joins_send) {
        PipelinePlan out = plan;
        for (int s = 0; s < stages; ++s) {
            const auto& order = passes[static_cast<std::size_t>(s)];
            StagePlan sp =
                overlap ? overlapped_stage(s, order, transfers, recv_joins_send) : naive_stage(s, order, transfers);
            link_waits(s, order, sp);
            out.stage.push_back(std::move(sp));
        }
        return out;
    };
    if (!overlap) return build(false);
    // Of the two ways to group the queue, the one with the shorter step in
    // the timeline model (forward 1, backward 2, a transfer 0.5).
    PipelinePlan early = build(false), joined = build(true);
    return simulate_pipeline(joined, 1, 2, 0.5).makespan < simulate_pipeline(early, 1, 2, 0.5).makespan ? joined
                                                                                                        : early;
}

double pipeline_bubble_fraction(int stages, int microbatches) {
    return static_cast<double>(stages - 1) / static_cast<double>(microbatches + stages - 1);
}

PipelineTimeline simulate_pipeline(const PipelinePlan& plan, double t_fwd, double t_bwd, double t_p2p) {
    const double unknown = -1;
    const auto stages = static_cast<std::size_t>(plan.stages);
    std::vector<std::vector<double>> start(stages), end(stages);
    // Where each send or receive's partner sits: (stage, action).
    std::map<std::tuple<int, int, int, int>, std::pair<int, int>> where;  // (stage, role, data, mb)
    for (std::size_t s = 0; s < stages; ++s) {
        const auto& acts = plan.stage[s].actions;
        start[s].assign(acts.size(), unknown);
        end[s].assign(acts.size(), unknown);
        for (std::size_t a = 0; a < acts.size(); ++a)
            for (const PipeP2P& op : acts[a].group)
                where[{static_cast<int>(s), static_cast<int>(op.role), static_cast<int>(op.data), op.mb}] = {
                    static_cast<int>(s), static_cast<int>(a)};
    }
    auto stream_of = [&](const PipeAction& a) { return plan.overlap && !a.is_pass ? 1 : 0; };
    for (bool progress = true; progress;) {
        progress = false;
        for (std::size_t s = 0; s < stages; ++s) {
            const auto& acts = plan.stage[s].actions;
            for (std::size_t a = 0; a < acts.size(); ++a) {
                const PipeAction& act = acts[a];
                if (start[s][a] == unknown) {
                    double t = 0;
                    bool ready = true;
                    for (std::size_t b = a; b-- > 0;)
                        if (stream_of(acts[b]) == stream_of(act)) {
                            ready = end[s][b] != unknown;
                            t = std::max(t, end[s][b]);
                            break;
                        }
                    for (int w : act.waits) {
                        ready = ready && end[s][static_cast<std::size_t>(w)] != unknown;
                        t = std::max(t, end[s][static_cast<std::size_t>(w)]);
                    }
                    if (!ready) continue;
                    start[s][a] = t;
                    progress = true;
                }
                if (end[s][a] != unknown) continue;
                if (act.is_pass) {
                    end[s][a] = start[s][a] + (act.pass.backward ? t_bwd : t_fwd);
                    progress = true;
                    continue;
                }
                double done = start[s][a];
                bool known = true;
                for (const PipeP2P& op : act.group) {
                    if (op.role == PipeP2P::Role::loopback) {
                        done = std::max(done, start[s][a] + t_p2p);
                        continue;
                    }
                    const int other = op.role == PipeP2P::Role::send ? static_cast<int>(PipeP2P::Role::recv)
                                                                     : static_cast<int>(PipeP2P::Role::send);
                    const auto it = where.find({op.peer, other, static_cast<int>(op.data), op.mb});
                    if (it == where.end()) throw std::logic_error("simulate_pipeline: a transfer has no partner");
                    const double peer_start =
                        start[static_cast<std::size_t>(it->second.first)][static_cast<std::size_t>(it->second.second)];
                    if (peer_start == unknown) {
                        known = false;
                        break;
                    }
                    done = std::max(done, std::max(start[s][a], peer_start) + t_p2p);
                }
                if (!known) continue;
                end[s][a] = done;
                progress = true;
            }
        }
    }
    PipelineTimeline out;
    out.busy.assign(stages, 0);
    out.pass_times.resize(stages);
    for (std::size_t s = 0; s < stages; ++s) {
        const auto& acts = plan.stage[s].actions;
        for (std::size_t a = 0; a < acts.size(); ++a) {
            if (end[s][a] == unknown) {
                out.deadlock = true;
                continue;
            }
            out.makespan = std::max(out.makespan, end[s][a]);
            if (acts[a].is_pass) {
                out.busy[s] += end[s][a] - start[s][a];
                out.pass_times[s].push_back({start[s][a], end[s][a]});
            }
        }
    }
    return out;
}

}  // namespace oscwl
