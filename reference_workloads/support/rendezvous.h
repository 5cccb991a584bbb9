// Hands an opaque blob (the 128-byte ncclUniqueId) from rank 0 to every other
// rank before NCCL exists. Two transports: a file on a shared filesystem
// ("file:/path") and a TCP connection to rank 0 ("tcp://host:port").
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace oscwl {

using Blob = std::vector<std::uint8_t>;

struct RendezvousSpec {
    enum class Kind { file, tcp };
    Kind kind = Kind::file;
    std::string path;  // file
    std::string host;  // tcp
    int port = 0;      // tcp
};

// UsageError for anything that is not file:/path or tcp://host:port.
RendezvousSpec parse_rendezvous(const std::string& text);

// Rank 0 publishes `blob` and returns it; the other ranks return what rank 0
// published (exactly `blob_size` bytes). WorkloadError on timeout or I/O
// failure; UsageError when rank 0 finds the file already there (it never
// overwrites a file: a stale id would make the other ranks hang).
Blob exchange_blob(const RendezvousSpec& spec, int rank, int world, const Blob& blob, std::size_t blob_size,
                   std::chrono::milliseconds timeout);

// Rank 0 removes the rendezvous file once every rank has joined (after
// communicator init). No-op for TCP.
void finish_rendezvous(const RendezvousSpec& spec, int rank);

// TCP pieces, exposed so tests can bind port 0 and learn the real port.
class TcpBlobServer {
public:
    // Binds and listens; host "" means every interface (what rank 0 uses).
    TcpBlobServer(const std::string& host, int port);
    ~TcpBlobServer();
    TcpBlobServer(const TcpBlobServer&) = delete;
    TcpBlobServer& operator=(const TcpBlobServer&) = delete;
    int port() const { return port_; }
    // Serves `blob` to `clients` connections, then returns.
    void serve(const Blob& blob, int clients, std::chrono::milliseconds timeout);

private:
    int fd_ = -1;
    int port_ = 0;
};

// Connects (retrying while rank 0 is not listening yet) and reads the blob.
Blob fetch_blob_tcp(const std::string& host, int port, int rank, std::size_t blob_size,
                    std::chrono::milliseconds timeout);

}  // namespace oscwl
