// Non-variadic front for libmicrohttpd's MHD_start_daemon, which Swift cannot call directly, plus
// what libmicrohttpd lacks: a header-completion deadline and a body-progress rule (its timeout
// counts only inactivity), and a per-address connection cap that exempts trusted proxies.
#ifndef FAULTLINE_HTTP_SHIM_H
#define FAULTLINE_HTTP_SHIM_H
#include <sys/types.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <stdarg.h>
#include <stdint.h>
#include <microhttpd.h>

/// A running daemon and its header-deadline watchdog.
struct faultline_http;

/// An IPv4 network (host byte order): an address matches when (address & mask) == network.
struct faultline_http_network {
    uint32_t network;
    uint32_t mask;
};

struct faultline_http_limits {
    unsigned int threads;
    /// Connections open at once (all clients); further ones are accepted and closed at once.
    unsigned int connection_limit;
    /// Connections open at once from one IP address, checked at accept; connections from a
    /// trusted proxy are not counted (their clients are capped per forwarded address, in Swift).
    /// 0 = no per-IP limit.
    unsigned int per_ip_connection_limit;
    /// Peers whose connections are exempt from `per_ip_connection_limit` (`count` entries).
    const struct faultline_http_network *trusted_proxies;
    unsigned int trusted_proxy_count;
    /// Seconds of inactivity after which a connection is closed.
    unsigned int idle_timeout_seconds;
    /// Seconds from a connection's accept (or the end of its previous request) to the end of
    /// the request's headers; a client still sending headers then is disconnected. 0 = none.
    unsigned int header_deadline_seconds;
    /// Per-connection memory for the request line and headers.
    size_t connection_memory_limit;
    /// After the headers, every window of `body_window_seconds` must bring at least
    /// `min_body_bytes_per_second` × the window of body bytes until the body is complete; a
    /// connection that falls short is disconnected. 0 (either) = no body-progress rule.
    unsigned int min_body_bytes_per_second;
    unsigned int body_window_seconds;
};

/// Starts a daemon with an internal thread pool and epoll on host:port (port 0 = ephemeral).
/// `completed` is called once per request so the per-request state in *con_cls can be freed.
/// Returns NULL on failure (errno may say why).
struct faultline_http *faultline_http_start(const char *host, uint16_t port, struct faultline_http_limits limits,
                                            MHD_AccessHandlerCallback handler, void *handler_cls,
                                            MHD_RequestCompletedCallback completed, void *completed_cls);

/// Stops the daemon (waits for in-flight requests) and the watchdog; frees `http`.
void faultline_http_stop(struct faultline_http *http);

/// The port the daemon actually listens on (useful after binding port 0).
uint16_t faultline_http_port(struct faultline_http *http);

/// Called from the access handler once a request's headers are complete: stops its header
/// deadline and starts its body-progress windows.
void faultline_http_headers_complete(struct MHD_Connection *connection);

/// Called from the access handler for every body chunk received (`bytes` long).
void faultline_http_body_progress(struct MHD_Connection *connection, size_t bytes);

/// Called from the access handler once the body is complete (or will not be read): the handler
/// and the response that follow are not subject to the body-progress rule.
void faultline_http_body_complete(struct MHD_Connection *connection);

/// The connection's peer IPv4 address in host byte order (0 if unknown).
uint32_t faultline_http_peer_address(struct MHD_Connection *connection);

/// Called when a request ends: the next request on a kept-alive connection gets a new deadline.
void faultline_http_request_finished(struct MHD_Connection *connection);

/// Connections the watchdog has cut off for missing the header deadline (since start).
uint64_t faultline_http_deadline_disconnects(struct faultline_http *http);

/// Connections cut off for a body arriving slower than the body-progress rule (since start).
uint64_t faultline_http_body_progress_disconnects(struct faultline_http *http);

/// Connections refused at accept by the per-address cap (since start).
uint64_t faultline_http_per_ip_refusals(struct faultline_http *http);

#endif
