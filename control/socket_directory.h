// Where agent sockets live, and which directories may be trusted to hold
// them. The agent and the client apply the same test: a directory is
// trusted only if it is a real directory (not a symlink) owned by the user
// and closed to group and others, so nobody else can have put a socket in it.
#pragma once

#include <sys/types.h>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace osc::control {

// The per-user directory that holds agent sockets: $OVERLAPSCOPE_SOCKET_DIR,
// else $XDG_RUNTIME_DIR/overlapscope, else /tmp/overlapscope-<uid>.
std::string socketDirectory();
std::string socketPathFor(const std::string& dir, int64_t pid);
// The pid encoded in a socket file name ("agent-<pid>.sock"), or -1.
int64_t pidFromSocketName(const std::string& fileName);

// Why `dir` may not hold `uid`'s sockets ("owned by uid 65534", "open to
// others (mode 0755)", "a symbolic link", ...), or nullopt when it may.
// A directory that does not exist gives "does not exist".
std::optional<std::string> untrustedDirectoryReason(const std::string& dir, uid_t uid);

// When `dir` cannot be trusted (another user created /tmp/overlapscope-<uid>
// first), an agent makes a fresh private directory beside it with mkdtemp:
// "<dir>-XXXXXX". The template for that.
std::string fallbackDirectoryTemplate(const std::string& dir);
// `dir` followed by every existing "<dir>-XXXXXX" beside it, trusted or not:
// where a client looks for agents. Nothing else is ever searched.
std::vector<std::string> socketDirectoriesFor(const std::string& dir);

}  // namespace osc::control
