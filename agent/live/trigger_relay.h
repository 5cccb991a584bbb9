// One rank's --capture-when captures the same steps on the job's other
// ranks (docs/agent.md "Look-back"):
//  - on this node at once, through their control sockets: each is asked for
//    a step capture from the first step of ours (which its look-back ring
//    still holds) for as many steps, again and again while it does not
//    answer (a busy node), up to a deadline;
//  - on other nodes through a file in a directory every node sees
//    (--trigger-dir, a shared file system): the trigger is written there,
//    and every agent of the job looks at that file every `pollMs`.
// The job's other ranks are the agents with the same job name (`run --job`,
// $SLURM_JOB_ID), or, without one, started by the same `overlapscope run`.
// One agent thread does all of it: the writer thread only queues.
#pragma once

#include "agent/live/live_pipeline.h"

#include <sys/types.h>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace osc::agent::live {

class TriggerRelay {
public:
    struct Options {
        std::string socketDir;
        int64_t pid = 0;  // ours: never asked
        std::string host;
        int rank = -1;
        std::string job, runId;
        std::string triggerDir;  // "" = this node only
        int pollMs = 250;
        // How long the agents of this node are asked again, `retryMs` apart,
        // while one does not answer (each try waits control::answerTimeoutMs()).
        int deadlineMs = 30'000;
        int retryMs = 250;
    };
    // Starts a step capture here for another node's trigger.
    using Arm = std::function<void(int64_t firstStep, int steps, const std::string& trigger)>;

    TriggerRelay(Options options, Arm arm);
    ~TriggerRelay();
    TriggerRelay(const TriggerRelay&) = delete;
    TriggerRelay& operator=(const TriggerRelay&) = delete;

    void start();
    void stop();
    // Any thread; never waits.
    void announce(const CaptureTrigger& trigger);

    // What a trigger says of itself (recorded in every rank's capture as
    // step_capture_trigger, and how an agent tells a trigger it has served).
    static std::string triggerText(const std::string& host, int rank, int64_t step);
    // The trigger file of a job in `dir` ("" without a job name or run).
    static std::string triggerFile(const std::string& dir, const std::string& jobKey);

private:
    void loop();
    void tellThisNode(const CaptureTrigger& t, const std::string& text);
    void writeTriggerFile(const CaptureTrigger& t, const std::string& text);
    void readTriggerFile(bool act);
    bool sameJob(const std::string& job, const std::string& runId) const;

    Options options_;
    Arm arm_;
    std::string file_;  // the trigger file, "" when none
    std::mutex mutex_;
    std::condition_variable cv_;
    std::deque<CaptureTrigger> queue_;
    bool stopping_ = false;
    std::thread thread_;
    // The trigger file as last seen: a change is a new trigger.
    struct Signature {
        ino_t inode = 0;
        int64_t mtimeNs = 0;
        off_t size = -1;
        bool operator==(const Signature&) const = default;
    } seen_;
};

}  // namespace osc::agent::live
