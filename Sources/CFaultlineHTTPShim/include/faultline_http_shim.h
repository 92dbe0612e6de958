// Non-variadic front for libmicrohttpd's MHD_start_daemon, which Swift cannot call directly.
#ifndef FAULTLINE_HTTP_SHIM_H
#define FAULTLINE_HTTP_SHIM_H
#include <sys/types.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <stdarg.h>
#include <stdint.h>
#include <microhttpd.h>

/// Starts a daemon with an internal thread pool and epoll on host:port (port 0 = ephemeral).
/// `completed` is called once per request so the per-request state in *con_cls can be freed.
/// Returns NULL on failure (errno may say why).
struct MHD_Daemon *faultline_http_start(const char *host, uint16_t port, unsigned int threads,
                                        unsigned int connection_limit, unsigned int timeout_seconds,
                                        size_t connection_memory_limit,
                                        MHD_AccessHandlerCallback handler, void *handler_cls,
                                        MHD_RequestCompletedCallback completed, void *completed_cls);

/// The port the daemon actually listens on (useful after binding port 0).
uint16_t faultline_http_port(struct MHD_Daemon *daemon);

#endif
