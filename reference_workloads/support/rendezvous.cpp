#include "reference_workloads/support/rendezvous.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <thread>

#include "reference_workloads/support/workload_error.h"

namespace oscwl {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kPoll = std::chrono::milliseconds(20);

std::string errno_text() { return std::strerror(errno); }

class Fd {
public:
    explicit Fd(int fd = -1) : fd_(fd) {}
    ~Fd() {
        if (fd_ >= 0) ::close(fd_);
    }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    int get() const { return fd_; }

private:
    int fd_;
};

void write_all(int fd, const void* data, std::size_t n, const std::string& what) {
    auto p = static_cast<const std::uint8_t*>(data);
    while (n > 0) {
        ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) throw WorkloadError("rendezvous " + what + ": send failed: " + errno_text());
        p += w;
        n -= static_cast<std::size_t>(w);
    }
}

void read_all(int fd, void* data, std::size_t n, const std::string& what) {
    auto p = static_cast<std::uint8_t*>(data);
    while (n > 0) {
        ssize_t r = ::recv(fd, p, n, 0);
        if (r < 0 && errno == EINTR) continue;
        if (r == 0) throw WorkloadError("rendezvous " + what + ": connection closed early");
        if (r < 0) throw WorkloadError("rendezvous " + what + ": receive failed: " + errno_text());
        p += r;
        n -= static_cast<std::size_t>(r);
    }
}

void set_io_timeout(int fd, std::chrono::milliseconds t) {
    timeval tv{};
    tv.tv_sec = static_cast<time_t>(t.count() / 1000);
    tv.tv_usec = static_cast<suseconds_t>((t.count() % 1000) * 1000);
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

addrinfo* resolve(const std::string& host, int port, bool passive) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    if (passive) hints.ai_flags = AI_PASSIVE;
    addrinfo* res = nullptr;
    std::string service = std::to_string(port);
    int rc = ::getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &res);
    if (rc != 0)
        throw WorkloadError("rendezvous tcp://" + host + ":" + service + ": cannot resolve: " + ::gai_strerror(rc));
    return res;
}

void publish_file(const std::string& path, const Blob& blob) {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0)
        throw UsageError("rendezvous file " + path +
                         " already exists (left by an earlier run?); remove it or choose a new path");
    // Write a private temporary, then link() it into place: link never
    // replaces an existing file and readers never see a partial id.
    std::string tmp = path + ".tmp." + std::to_string(::getpid());
    {
        Fd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600));
        if (fd.get() < 0) throw WorkloadError("rendezvous file " + tmp + ": cannot create: " + errno_text());
        std::size_t off = 0;
        while (off < blob.size()) {
            ssize_t w = ::write(fd.get(), blob.data() + off, blob.size() - off);
            if (w <= 0) {
                ::unlink(tmp.c_str());
                throw WorkloadError("rendezvous file " + tmp + ": write failed: " + errno_text());
            }
            off += static_cast<std::size_t>(w);
        }
        ::fsync(fd.get());
    }
    int rc = ::link(tmp.c_str(), path.c_str());
    int link_errno = errno;
    ::unlink(tmp.c_str());
    if (rc != 0) {
        errno = link_errno;
        throw WorkloadError("rendezvous file " + path + ": cannot publish: " + errno_text());
    }
}

Blob fetch_file(const std::string& path, std::size_t blob_size, std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    for (;;) {
        std::ifstream in(path, std::ios::binary);
        if (in) {
            Blob data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
            if (data.size() == blob_size) return data;
            // link() makes the file appear complete, so a wrong size is not a race.
            throw WorkloadError("rendezvous file " + path + " holds " + std::to_string(data.size()) +
                                " bytes, expected " + std::to_string(blob_size));
        }
        if (Clock::now() >= deadline)
            throw WorkloadError("rendezvous file " + path + " did not appear within " +
                                std::to_string(timeout.count() / 1000) + " s (is rank 0 running?)");
        std::this_thread::sleep_for(kPoll);
    }
}

}  // namespace

RendezvousSpec parse_rendezvous(const std::string& text) {
    RendezvousSpec s;
    if (text.rfind("file:", 0) == 0) {
        s.kind = RendezvousSpec::Kind::file;
        s.path = text.substr(5);
        if (s.path.empty()) throw UsageError("--rendezvous file: needs a path, e.g. file:/shared/id");
        return s;
    }
    if (text.rfind("tcp://", 0) == 0) {
        s.kind = RendezvousSpec::Kind::tcp;
        std::string rest = text.substr(6);
        auto colon = rest.rfind(':');
        if (colon == std::string::npos || colon == 0 || colon + 1 == rest.size())
            throw UsageError("--rendezvous " + text + ": expected tcp://host:port");
        s.host = rest.substr(0, colon);
        if (s.host.size() > 2 && s.host.front() == '[' && s.host.back() == ']')
            s.host = s.host.substr(1, s.host.size() - 2);  // [::1]
        std::string port = rest.substr(colon + 1);
        char* end = nullptr;
        long p = std::strtol(port.c_str(), &end, 10);
        if (*end != '\0' || p < 1 || p > 65535) throw UsageError("--rendezvous " + text + ": port must be 1..65535");
        s.port = static_cast<int>(p);
        return s;
    }
    throw UsageError("--rendezvous must be file:/path or tcp://host:port, got '" + text + "'");
}

TcpBlobServer::TcpBlobServer(const std::string& host, int port) {
    addrinfo* res = resolve(host, port, true);
    std::string last_error = "no address";
    for (addrinfo* a = res; a; a = a->ai_next) {
        int fd = ::socket(a->ai_family, a->ai_socktype, a->ai_protocol);
        if (fd < 0) continue;
        int one = 1;
        ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 128) == 0) {
            fd_ = fd;
            break;
        }
        last_error = errno_text();
        ::close(fd);
    }
    ::freeaddrinfo(res);
    if (fd_ < 0)
        throw WorkloadError("rendezvous tcp://" + host + ":" + std::to_string(port) + ": cannot listen: " + last_error);
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = addr.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port)
                                       : ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
}

TcpBlobServer::~TcpBlobServer() {
    if (fd_ >= 0) ::close(fd_);
}

void TcpBlobServer::serve(const Blob& blob, int clients, std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    for (int served = 0; served < clients;) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
        if (left.count() <= 0)
            throw WorkloadError("rendezvous: only " + std::to_string(served) + " of " + std::to_string(clients) +
                                " ranks connected to rank 0 in time");
        pollfd p{fd_, POLLIN, 0};
        int rc = ::poll(&p, 1, static_cast<int>(left.count()));
        if (rc < 0 && errno == EINTR) continue;
        if (rc <= 0) continue;
        Fd conn(::accept(fd_, nullptr, nullptr));
        if (conn.get() < 0) continue;
        set_io_timeout(conn.get(), std::chrono::milliseconds(10000));
        try {
            std::uint32_t rank_be = 0;
            read_all(conn.get(), &rank_be, sizeof rank_be, "server");
            std::uint32_t size_be = htonl(static_cast<std::uint32_t>(blob.size()));
            write_all(conn.get(), &size_be, sizeof size_be, "server");
            write_all(conn.get(), blob.data(), blob.size(), "server");
            ++served;
        } catch (const WorkloadError&) {
            // A peer that hung up (a port scanner, a killed rank) must not
            // stop the others; the deadline bounds the wait.
        }
    }
}

Blob fetch_blob_tcp(const std::string& host, int port, int rank, std::size_t blob_size,
                    std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    const std::string where = "tcp://" + host + ":" + std::to_string(port);
    std::string last_error;
    for (;;) {
        addrinfo* res = resolve(host, port, false);
        for (addrinfo* a = res; a; a = a->ai_next) {
            Fd fd(::socket(a->ai_family, a->ai_socktype, a->ai_protocol));
            if (fd.get() < 0) continue;
            if (::connect(fd.get(), a->ai_addr, a->ai_addrlen) != 0) {
                last_error = errno_text();
                continue;
            }
            ::freeaddrinfo(res);
            set_io_timeout(fd.get(), std::chrono::milliseconds(10000));
            std::uint32_t rank_be = htonl(static_cast<std::uint32_t>(rank));
            write_all(fd.get(), &rank_be, sizeof rank_be, where);
            std::uint32_t size_be = 0;
            read_all(fd.get(), &size_be, sizeof size_be, where);
            if (ntohl(size_be) != blob_size)
                throw WorkloadError("rendezvous " + where + ": rank 0 sent " + std::to_string(ntohl(size_be)) +
                                    " bytes, expected " + std::to_string(blob_size));
            Blob blob(blob_size);
            read_all(fd.get(), blob.data(), blob.size(), where);
            return blob;
        }
        ::freeaddrinfo(res);
        if (Clock::now() >= deadline)
            throw WorkloadError("rendezvous " + where + ": cannot reach rank 0 (" + last_error + ")");
        std::this_thread::sleep_for(kPoll);
    }
}

Blob exchange_blob(const RendezvousSpec& spec, int rank, int world, const Blob& blob, std::size_t blob_size,
                   std::chrono::milliseconds timeout) {
    if (spec.kind == RendezvousSpec::Kind::file) {
        if (rank == 0) {
            publish_file(spec.path, blob);
            return blob;
        }
        return fetch_file(spec.path, blob_size, timeout);
    }
    if (rank == 0) {
        // Listen on every interface: the host in the URL is how the other
        // ranks reach rank 0, and on many systems rank 0's own hostname
        // resolves to a loopback address that other nodes cannot reach.
        TcpBlobServer server("", spec.port);
        server.serve(blob, world - 1, timeout);
        return blob;
    }
    return fetch_blob_tcp(spec.host, spec.port, rank, blob_size, timeout);
}

void finish_rendezvous(const RendezvousSpec& spec, int rank) {
    if (spec.kind == RendezvousSpec::Kind::file && rank == 0) ::unlink(spec.path.c_str());
}

}  // namespace oscwl
