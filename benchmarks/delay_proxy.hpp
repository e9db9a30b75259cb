#pragma once
// A TCP proxy on the loopback interface that adds latency: each request a client
// sends waits `delay` before it is passed on, as if the server were that much further
// away. A "request" is the first bytes a client sends on a connection, and the first
// it sends after the server has answered something (HTTP/1.1 keep-alive connections,
// curl's "Expect: 100-continue" turns included), so every round trip costs `delay`
// more, and requests on different connections wait side by side. For benchmarks
// (bench_s3); POSIX sockets and a thread per direction of each connection.

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

namespace tdbg::bench {

class delay_proxy {
public:
    /// Listens on 127.0.0.1 (a free port) and forwards to 127.0.0.1:`upstream_port`.
    delay_proxy(int upstream_port, std::chrono::milliseconds delay) : upstream_port_(upstream_port), delay_(delay) {
        listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
        if (listener_ < 0) {
            throw std::runtime_error(std::string("delay_proxy: socket: ") + std::strerror(errno));
        }
        sockaddr_in address = loopback(0);
        socklen_t size = sizeof address;
        if (::bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
            ::listen(listener_, 64) != 0 ||
            ::getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &size) != 0) {
            const std::string problem = std::strerror(errno);
            ::close(listener_);
            throw std::runtime_error("delay_proxy: cannot listen: " + problem);
        }
        port_ = ntohs(address.sin_port);
        acceptor_ = std::thread([this] { accept_loop(); });
    }

    delay_proxy(const delay_proxy&) = delete;
    delay_proxy& operator=(const delay_proxy&) = delete;
    delay_proxy(delay_proxy&&) = delete;
    delay_proxy& operator=(delay_proxy&&) = delete;

    /// Stops accepting, cuts every open connection and waits for its threads.
    ~delay_proxy() {
        stopping_ = true;
        ::shutdown(listener_, SHUT_RDWR); // wakes accept()
        acceptor_.join();
        ::close(listener_);
        std::lock_guard<std::mutex> lock(mutex_);
        for (const auto& c : connections_) {
            c->cut();
        }
        for (const auto& c : connections_) {
            c->join();
        }
    }

    /// The port it listens on.
    [[nodiscard]] int port() const noexcept { return port_; }
    /// Requests delayed so far.
    [[nodiscard]] std::uint64_t requests() const noexcept { return requests_.load(); }
    /// Connections accepted so far.
    [[nodiscard]] std::uint64_t connections() const noexcept { return accepted_.load(); }

private:
    /// One client connection and its connection to the server: a thread per direction.
    class connection {
    public:
        connection(int client, int server) : client_(client), server_(server) {}
        connection(const connection&) = delete;
        connection& operator=(const connection&) = delete;
        connection(connection&&) = delete;
        connection& operator=(connection&&) = delete;
        ~connection() {
            join();
            ::close(client_);
            ::close(server_);
        }

        void start(delay_proxy& proxy) {
            up_ = std::thread([this, &proxy] { pump(client_, server_, &proxy); });
            down_ = std::thread([this] { pump(server_, client_, nullptr); });
        }
        /// Ends both directions (the sockets stay open until destruction).
        void cut() const {
            ::shutdown(client_, SHUT_RDWR);
            ::shutdown(server_, SHUT_RDWR);
        }
        void join() {
            if (up_.joinable()) {
                up_.join();
            }
            if (down_.joinable()) {
                down_.join();
            }
        }
        [[nodiscard]] bool finished() const noexcept { return pumps_done_.load() == 2; }

    private:
        // Copies `from` to `to` until `from` ends; client to server (`proxy` set) waits the
        // delay before the first bytes and before the first after a reply.
        void pump(int from, int to, delay_proxy* proxy) {
            std::vector<char> buffer(64 * 1024);
            for (;;) {
                const ssize_t got = ::recv(from, buffer.data(), buffer.size(), 0);
                if (got < 0 && errno == EINTR) {
                    continue;
                }
                if (got <= 0) {
                    break;
                }
                if (proxy != nullptr) {
                    if (replied_.exchange(false)) {
                        ++proxy->requests_;
                        std::this_thread::sleep_for(proxy->delay_);
                    }
                } else {
                    replied_ = true;
                }
                if (!send_all(to, buffer.data(), static_cast<std::size_t>(got))) {
                    break;
                }
            }
            ::shutdown(to, SHUT_WR); // pass the end on; the other direction goes on
            ++pumps_done_;
        }

        static bool send_all(int to, const char* data, std::size_t size) {
            while (size > 0) {
                const ssize_t sent = ::send(to, data, size, MSG_NOSIGNAL);
                if (sent < 0 && errno == EINTR) {
                    continue;
                }
                if (sent <= 0) {
                    return false;
                }
                data += sent;
                size -= static_cast<std::size_t>(sent);
            }
            return true;
        }

        int client_;
        int server_;
        std::atomic<bool> replied_{true}; // the connection's first bytes are a request
        std::atomic<int> pumps_done_{0};
        std::thread up_;
        std::thread down_;
    };

    static sockaddr_in loopback(int port) {
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_port = htons(static_cast<std::uint16_t>(port));
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        return address;
    }

    void accept_loop() {
        while (!stopping_) {
            const int client = ::accept(listener_, nullptr, nullptr);
            if (client < 0) {
                if (errno == EINTR || errno == ECONNABORTED) {
                    continue;
                }
                return; // shut down
            }
            const int server = ::socket(AF_INET, SOCK_STREAM, 0);
            const sockaddr_in address = loopback(upstream_port_);
            if (server < 0 || ::connect(server, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
                ::close(client); // the client sees the connection refused, as without a proxy
                if (server >= 0) {
                    ::close(server);
                }
                continue;
            }
            const int one = 1;
            ::setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            ::setsockopt(server, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            ++accepted_;
            std::lock_guard<std::mutex> lock(mutex_);
            // Connections closed by both ends go (their threads have ended).
            connections_.erase(std::remove_if(connections_.begin(), connections_.end(),
                                              [](const std::unique_ptr<connection>& c) { return c->finished(); }),
                               connections_.end());
            connections_.push_back(std::make_unique<connection>(client, server));
            connections_.back()->start(*this);
        }
    }

    int upstream_port_;
    std::chrono::milliseconds delay_;
    int listener_ = -1;
    int port_ = 0;
    std::atomic<bool> stopping_{false};
    std::atomic<std::uint64_t> requests_{0};
    std::atomic<std::uint64_t> accepted_{0};
    std::thread acceptor_;
    std::mutex mutex_;
    std::vector<std::unique_ptr<connection>> connections_;
};

} // namespace tdbg::bench
