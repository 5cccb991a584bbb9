#include "analyzer/output/temp_cleanup.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>
#include <mutex>

namespace osc::output {
namespace {

constexpr std::array<int, 3> kSignals = {SIGINT, SIGTERM, SIGHUP};

// Fixed storage: the handler may only read memory that is never reallocated.
struct Slot {
    std::atomic<int> dir{-1};  // set last, cleared first: the handler sees a whole name or none
    char name[NAME_MAX + 1] = {};
};
static_assert(std::atomic<int>::is_always_lock_free);

std::array<Slot, 8> slots;
std::array<struct sigaction, kSignals.size()> previous;
std::array<bool, kSignals.size()> installed{};
std::mutex mutex;  // registration only; never taken in the handler
int registered = 0;

extern "C" void removeTemporariesAndReraise(int signal) {
    const int savedErrno = errno;
    for (auto& slot : slots)
        if (const int dir = slot.dir.load(std::memory_order_acquire); dir >= 0) ::unlinkat(dir, slot.name, 0);
    for (size_t i = 0; i < kSignals.size(); ++i)
        if (kSignals[i] == signal) ::sigaction(signal, &previous[i], nullptr);
    errno = savedErrno;
    // Blocked until this handler returns, then handled as it was before us
    // (by default: the process ends with the signal's status).
    ::raise(signal);
}

void install() {
    for (size_t i = 0; i < kSignals.size(); ++i) {
        installed[i] = false;
        struct sigaction current {};
        if (::sigaction(kSignals[i], nullptr, &current) != 0 || current.sa_handler == SIG_IGN) continue;
        struct sigaction ours {};
        ours.sa_handler = removeTemporariesAndReraise;
        sigemptyset(&ours.sa_mask);
        if (::sigaction(kSignals[i], &ours, &previous[i]) == 0) installed[i] = true;
    }
}

void restore() {
    for (size_t i = 0; i < kSignals.size(); ++i)
        if (installed[i]) ::sigaction(kSignals[i], &previous[i], nullptr);
}

}  // namespace

TemporaryFileGuard::TemporaryFileGuard(int dir, const std::string& name) {
    if (name.size() > NAME_MAX) return;
    std::lock_guard lock(mutex);
    for (size_t i = 0; i < slots.size(); ++i) {
        if (slots[i].dir.load(std::memory_order_relaxed) >= 0) continue;
        std::memcpy(slots[i].name, name.c_str(), name.size() + 1);
        slots[i].dir.store(dir, std::memory_order_release);
        slot_ = static_cast<int>(i);
        if (registered++ == 0) install();
        return;
    }
}

TemporaryFileGuard::~TemporaryFileGuard() {
    if (slot_ < 0) return;
    std::lock_guard lock(mutex);
    slots[static_cast<size_t>(slot_)].dir.store(-1, std::memory_order_release);
    if (--registered == 0) restore();
}

}  // namespace osc::output
