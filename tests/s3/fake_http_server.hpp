#pragma once
// A scripted HTTP/1.1 server on loopback for the S3 unit tests: it records
// each request (method, target, headers, body) and answers with the next
// reply of its script, or with what a function makes of the request, so
// retries, encodings and headers can be checked exactly, without the real
// server, and so can a misbehaving server (endless listings, a body sent a
// byte at a time). It does not check signatures.

#include <algorithm>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace tdbg::test {

/// One scripted reply; `drop` closes the connection without answering. With
/// `drip_interval` above zero the body is sent one byte per interval (its
/// Content-Length says the whole size), until it ends or the server stops.
struct fake_reply {
    int status = 200;
    std::string body;
    std::vector<std::string> headers; ///< "Name: value"
    bool drop = false;
    std::chrono::milliseconds drip_interval{0};
};

/// A request the server received.
struct recorded_request {
    std::string method;
    std::string target; ///< path and query, as sent
    std::map<std::string, std::string> headers; ///< lower-case names
    std::string body;
};

/// Makes the reply to a request (called on the server's threads).
using fake_responder = std::function<fake_reply(const recorded_request&)>;

/// Answers requests from a script; once the script is used up, with 500.
class fake_http_server {
public:
    explicit fake_http_server(std::vector<fake_reply> script) : script_(script.begin(), script.end()) { start(); }
    /// Answers every request with what `respond` makes of it.
    explicit fake_http_server(fake_responder respond) : respond_(std::move(respond)) { start(); }
    fake_http_server(const fake_http_server&) = delete;
    fake_http_server& operator=(const fake_http_server&) = delete;
    ~fake_http_server() {
        {
            const std::lock_guard<std::mutex> lock(mutex_);
            stop_ = true;
        }
        changed_.notify_all();
        acceptor_.join();
        {
            const std::lock_guard<std::mutex> lock(mutex_);
            for (const int fd : connections_) {
                ::shutdown(fd, SHUT_RDWR);
            }
        }
        for (auto& t : workers_) {
            t.join();
        }
        for (const int fd : connections_) {
            ::close(fd);
        }
        ::close(listen_fd_);
    }

    /// "http://127.0.0.1:<port>".
    [[nodiscard]] std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }

    /// The requests received so far.
    [[nodiscard]] std::vector<recorded_request> requests() const {
        const std::lock_guard<std::mutex> lock(mutex_);
        return requests_;
    }

    /// Waits until a request for which `match` is true has arrived, for at most `limit`
    /// (a bound for a failing test, not a pace); false when none came.
    template <class Match>
    bool wait_for_request(Match match, std::chrono::milliseconds limit) const {
        std::unique_lock<std::mutex> lock(mutex_);
        return changed_.wait_for(lock, limit,
                                 [&] { return std::any_of(requests_.begin(), requests_.end(), match); });
    }

private:
    void start() {
        listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        addr.sin_port = 0;
        if (listen_fd_ < 0 || ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
            ::listen(listen_fd_, 16) != 0) {
            throw std::runtime_error("fake_http_server: cannot listen");
        }
        socklen_t len = sizeof addr;
        ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
        port_ = ntohs(addr.sin_port);
        acceptor_ = std::thread([this] { accept_loop(); });
    }

    [[nodiscard]] bool stopping() const {
        const std::lock_guard<std::mutex> lock(mutex_);
        return stop_;
    }

    // Sends `body` a byte per `interval`; false when the client went away or the server stops.
    bool drip(int fd, const std::string& body, std::chrono::milliseconds interval) const {
        for (const char byte : body) {
            {
                std::unique_lock<std::mutex> lock(mutex_);
                if (changed_.wait_for(lock, interval, [&] { return stop_; })) {
                    return false;
                }
            }
            if (!send_all(fd, std::string(1, byte))) {
                return false;
            }
        }
        return true;
    }

    void accept_loop() {
        while (!stopping()) {
            pollfd p{listen_fd_, POLLIN, 0};
            if (::poll(&p, 1, 50) <= 0) {
                continue;
            }
            const int fd = ::accept(listen_fd_, nullptr, nullptr);
            if (fd < 0) {
                continue;
            }
            const std::lock_guard<std::mutex> lock(mutex_);
            connections_.push_back(fd);
            workers_.emplace_back([this, fd] { serve(fd); });
        }
    }

    static bool send_all(int fd, const std::string& data) {
        std::size_t done = 0;
        while (done < data.size()) {
            const ssize_t n = ::send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL);
            if (n <= 0) {
                return false;
            }
            done += static_cast<std::size_t>(n);
        }
        return true;
    }

    // Never closes `fd`: the destructor does, after joining, so no descriptor is reused under a worker.
    void serve(int fd) {
        std::string in;
        char buffer[65536];
        auto fill = [&]() {
            const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
            if (n <= 0) {
                return false;
            }
            in.append(buffer, static_cast<std::size_t>(n));
            return true;
        };
        for (;;) {
            std::size_t end = 0;
            while ((end = in.find("\r\n\r\n")) == std::string::npos) {
                if (!fill()) {
                    return;
                }
            }
            recorded_request request;
            const std::string head = in.substr(0, end);
            in.erase(0, end + 4);
            std::size_t line_end = head.find("\r\n");
            const std::string request_line = head.substr(0, line_end);
            const std::size_t sp1 = request_line.find(' ');
            const std::size_t sp2 = request_line.rfind(' ');
            request.method = request_line.substr(0, sp1);
            request.target = request_line.substr(sp1 + 1, sp2 - sp1 - 1);
            while (line_end != std::string::npos && line_end < head.size()) {
                const std::size_t next = head.find("\r\n", line_end + 2);
                const std::string line = head.substr(line_end + 2, next == std::string::npos ? std::string::npos : next - line_end - 2);
                const std::size_t colon = line.find(':');
                if (colon != std::string::npos) {
                    std::string name = line.substr(0, colon);
                    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
                    std::size_t start = colon + 1;
                    while (start < line.size() && line[start] == ' ') {
                        ++start;
                    }
                    request.headers[name] = line.substr(start);
                }
                line_end = next;
            }
            if (request.headers.count("expect") != 0) {
                send_all(fd, "HTTP/1.1 100 Continue\r\n\r\n");
            }
            const std::size_t length =
                request.headers.count("content-length") != 0 ? std::stoul(request.headers["content-length"]) : 0;
            while (in.size() < length) {
                if (!fill()) {
                    return;
                }
            }
            request.body = in.substr(0, length);
            in.erase(0, length);

            fake_reply reply{500, "<Error><Code>InternalError</Code><Message>script exhausted</Message></Error>", {}, false};
            if (respond_) {
                reply = respond_(request);
            }
            {
                const std::lock_guard<std::mutex> lock(mutex_);
                requests_.push_back(request);
                if (!respond_ && !script_.empty()) {
                    reply = script_.front();
                    script_.pop_front();
                }
            }
            changed_.notify_all();
            if (reply.drop) {
                ::shutdown(fd, SHUT_RDWR);
                return;
            }
            std::string out = "HTTP/1.1 " + std::to_string(reply.status) + " X\r\n";
            for (const auto& h : reply.headers) {
                out += h + "\r\n";
            }
            out += "Content-Length: " + std::to_string(reply.body.size()) + "\r\n\r\n";
            const bool dripping = reply.drip_interval.count() > 0;
            if (request.method != "HEAD" && !dripping) {
                out += reply.body;
            }
            if (!send_all(fd, out)) {
                return;
            }
            if (request.method != "HEAD" && dripping && !drip(fd, reply.body, reply.drip_interval)) {
                return;
            }
        }
    }

    int listen_fd_ = -1;
    int port_ = 0;
    bool stop_ = false; // under mutex_
    std::thread acceptor_;
    mutable std::mutex mutex_;
    mutable std::condition_variable changed_; // a request arrived, or the server stops
    std::deque<fake_reply> script_;
    fake_responder respond_;
    std::vector<recorded_request> requests_;
    std::vector<int> connections_;
    std::vector<std::thread> workers_;
};

} // namespace tdbg::test
