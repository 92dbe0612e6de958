// Non-variadic front for libmicrohttpd's MHD_start_daemon, which Swift cannot call directly, plus
// the header-completion deadline libmicrohttpd lacks (its timeout counts only inactivity).
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

struct faultline_http_limits {
    unsigned int threads;
    /// Connections open at once (all clients); further ones are accepted and closed at once.
    unsigned int connection_limit;
    /// Connections open at once from one IP address; 0 = no per-IP limit.
    unsigned int per_ip_connection_limit;
    /// Seconds of inactivity after which a connection is closed.
    unsigned int idle_timeout_seconds;
    /// Seconds from a connection's accept (or the end of its previous request) to the end of
    /// the request's headers; a client still sending headers then is disconnected. 0 = none.
    unsigned int header_deadline_seconds;
    /// Per-connection memory for the request line and headers.
    size_t connection_memory_limit;
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

/// Called from the access handler once a request's headers are complete: stops its deadline.
void faultline_http_headers_complete(struct MHD_Connection *connection);

/// Called when a request ends: the next request on a kept-alive connection gets a new deadline.
void faultline_http_request_finished(struct MHD_Connection *connection);

/// Connections the watchdog has cut off for missing the header deadline (since start).
uint64_t faultline_http_deadline_disconnects(struct faultline_http *http);

#endif
