// Non-variadic front for MHD_start_daemon (see include/faultline_http_shim.h), and the
// header-completion deadline: libmicrohttpd 0.9.75's timeout counts inactivity only, so a client
// sending one header byte every few seconds holds its connection forever (slowloris). Every
// connection is tracked from accept (MHD_OPTION_NOTIFY_CONNECTION); a watchdog thread shuts down
// the socket of any connection whose headers are not complete by the deadline. shutdown() (not
// close()) leaves the descriptor to libmicrohttpd, which sees end-of-stream and closes it; the
// entry is removed under the same lock in the CLOSED notification, before libmicrohttpd closes
// the descriptor, so the watchdog can never touch a reused descriptor.
//
// The same watchdog enforces body progress: once the headers are in, each window of
// body_window_seconds must bring min_body_bytes_per_second × the window until the body is
// complete. libmicrohttpd's inactivity timeout is reset by every byte, so one byte every few
// seconds would otherwise hold a connection (and its thread) for as long as the client likes.
// Windows, not an average since the headers: a client that sends most of a body at once and
// then trickles would otherwise bank credit for hours.
//
// The per-address connection cap is an accept policy here, not MHD_OPTION_PER_IP_CONNECTION_LIMIT:
// behind a load balancer every connection comes from the balancer's address, so the library's
// cap must be off there, and then one client could hold every slot. The policy exempts trusted
// proxies (their clients are capped per forwarded address, in Swift, once the headers name
// them) and counts the tracked list, so a connection that never started leaves no count behind.
#define _GNU_SOURCE
#include "faultline_http_shim.h"
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct tracked {
    struct tracked *prev, *next;
    int fd;
    double started;        // accept, or end of the previous request on this connection
    int headers_complete;  // guarded by the list lock
    int body_pending;      // headers in, body not yet complete
    double window_start;   // start of the current body-progress window
    uint64_t window_bytes; // body bytes received in it
    uint32_t peer;         // IPv4, host byte order; 0 if unknown
    int cut;
    struct faultline_http *owner;
};

struct faultline_http {
    struct MHD_Daemon *daemon;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    pthread_t watchdog;
    int watchdog_running;
    int stopping;
    unsigned int deadline;
    unsigned int per_ip_limit;
    unsigned int min_body_rate;
    unsigned int body_window;
    struct faultline_http_network *proxies;
    unsigned int proxy_count;
    struct tracked head;  // circular list sentinel
    uint64_t cut_count;
    uint64_t body_cut_count;
    uint64_t per_ip_refused;
};

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint32_t ipv4_of(const struct sockaddr *addr) {
    if (!addr || addr->sa_family != AF_INET) return 0;
    return ntohl(((const struct sockaddr_in *)addr)->sin_addr.s_addr);
}

static int is_trusted_proxy(const struct faultline_http *h, uint32_t address) {
    for (unsigned int i = 0; i < h->proxy_count; i++) {
        if ((address & h->proxies[i].mask) == h->proxies[i].network) return 1;
    }
    return 0;
}

// Runs on libmicrohttpd's listening thread before the connection exists (STARTED follows on the
// same thread), so counting the tracked list is exact with a thread per connection.
static enum MHD_Result accept_policy(void *cls, const struct sockaddr *addr, socklen_t addrlen) {
    struct faultline_http *h = cls;
    (void)addrlen;
    if (h->per_ip_limit == 0) return MHD_YES;
    uint32_t peer = ipv4_of(addr);
    if (peer == 0 || is_trusted_proxy(h, peer)) return MHD_YES;
    unsigned int open = 0;
    pthread_mutex_lock(&h->lock);
    for (struct tracked *t = h->head.next; t != &h->head; t = t->next) {
        if (t->peer == peer && !t->cut) open++;
    }
    int refuse = open >= h->per_ip_limit;
    if (refuse) h->per_ip_refused++;
    pthread_mutex_unlock(&h->lock);
    return refuse ? MHD_NO : MHD_YES;
}

static void notify_connection(void *cls, struct MHD_Connection *connection, void **socket_context,
                              enum MHD_ConnectionNotificationCode code) {
    struct faultline_http *h = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        struct tracked *t = calloc(1, sizeof *t);
        if (!t) return;
        const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
        t->fd = info ? info->connect_fd : -1;
        const union MHD_ConnectionInfo *client = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        t->peer = client ? ipv4_of(client->client_addr) : 0;
        t->started = now_seconds();
        t->owner = h;
        pthread_mutex_lock(&h->lock);
        t->next = h->head.next; t->prev = &h->head;
        h->head.next->prev = t; h->head.next = t;
        pthread_mutex_unlock(&h->lock);
        *socket_context = t;
    } else if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
        struct tracked *t = *socket_context;
        if (!t) return;
        pthread_mutex_lock(&h->lock);
        t->prev->next = t->next; t->next->prev = t->prev;
        pthread_mutex_unlock(&h->lock);
        free(t);
        *socket_context = NULL;
    }
}

static struct faultline_http *owner_of(struct MHD_Connection *connection, struct tracked **out) {
    const union MHD_ConnectionInfo *s = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    if (!s || !s->socket_context) return NULL;
    *out = s->socket_context;
    return (*out)->owner;
}

void faultline_http_headers_complete(struct MHD_Connection *connection) {
    struct tracked *t;
    struct faultline_http *h = owner_of(connection, &t);
    if (!h) return;
    pthread_mutex_lock(&h->lock);
    t->headers_complete = 1;
    t->body_pending = 1;
    t->window_start = now_seconds();
    t->window_bytes = 0;
    pthread_mutex_unlock(&h->lock);
}

void faultline_http_body_progress(struct MHD_Connection *connection, size_t bytes) {
    struct tracked *t;
    struct faultline_http *h = owner_of(connection, &t);
    if (!h) return;
    pthread_mutex_lock(&h->lock);
    t->window_bytes += bytes;
    pthread_mutex_unlock(&h->lock);
}

void faultline_http_body_complete(struct MHD_Connection *connection) {
    struct tracked *t;
    struct faultline_http *h = owner_of(connection, &t);
    if (!h) return;
    pthread_mutex_lock(&h->lock);
    t->body_pending = 0;
    pthread_mutex_unlock(&h->lock);
}

uint32_t faultline_http_peer_address(struct MHD_Connection *connection) {
    struct tracked *t;
    if (!owner_of(connection, &t)) return 0;
    return t->peer;  // set once, before any request on the connection
}

void faultline_http_request_finished(struct MHD_Connection *connection) {
    struct tracked *t;
    struct faultline_http *h = owner_of(connection, &t);
    if (!h) return;
    pthread_mutex_lock(&h->lock);
    t->headers_complete = 0;
    t->body_pending = 0;
    t->started = now_seconds();
    pthread_mutex_unlock(&h->lock);
}

static void cut(struct tracked *t, uint64_t *counter) {
    shutdown(t->fd, SHUT_RDWR);
    t->cut = 1;
    (*counter)++;
}

// Runs on the watchdog thread with the list lock held.
static void check_body_progress(struct faultline_http *h, struct tracked *t, double now) {
    if (!t->body_pending || h->min_body_rate == 0 || h->body_window == 0) return;
    if (now - t->window_start < h->body_window) return;
    if (t->window_bytes < (uint64_t)h->min_body_rate * h->body_window) {
        cut(t, &h->body_cut_count);
    } else {
        t->window_start = now;
        t->window_bytes = 0;
    }
}

static void *watchdog_main(void *arg) {
    struct faultline_http *h = arg;
    pthread_mutex_lock(&h->lock);
    while (!h->stopping) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 250 * 1000 * 1000;
        if (until.tv_nsec >= 1000000000) { until.tv_sec += 1; until.tv_nsec -= 1000000000; }
        pthread_cond_timedwait(&h->wake, &h->lock, &until);
        double now = now_seconds();
        for (struct tracked *t = h->head.next; t != &h->head; t = t->next) {
            if (t->cut || t->fd < 0) continue;
            if (!t->headers_complete) {
                if (h->deadline > 0 && now - t->started > h->deadline) cut(t, &h->cut_count);
            } else {
                check_body_progress(h, t, now);
            }
        }
    }
    pthread_mutex_unlock(&h->lock);
    return NULL;
}

struct faultline_http *faultline_http_start(const char *host, uint16_t port, struct faultline_http_limits limits,
                                            MHD_AccessHandlerCallback handler, void *handler_cls,
                                            MHD_RequestCompletedCallback completed, void *completed_cls) {
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    if (inet_pton(AF_INET, host, &addr.sin_addr) != 1) { errno = EINVAL; return NULL; }
    struct faultline_http *h = calloc(1, sizeof *h);
    if (!h) return NULL;
    pthread_mutex_init(&h->lock, NULL);
    pthread_cond_init(&h->wake, NULL);
    h->head.next = h->head.prev = &h->head;
    h->deadline = limits.header_deadline_seconds;
    h->per_ip_limit = limits.per_ip_connection_limit;
    h->min_body_rate = limits.min_body_bytes_per_second;
    h->body_window = limits.body_window_seconds;
    if (limits.trusted_proxy_count > 0) {
        h->proxies = calloc(limits.trusted_proxy_count, sizeof *h->proxies);
        if (!h->proxies) { free(h); errno = ENOMEM; return NULL; }
        memcpy(h->proxies, limits.trusted_proxies, limits.trusted_proxy_count * sizeof *h->proxies);
        h->proxy_count = limits.trusted_proxy_count;
    }
    // No MHD_USE_ERROR_LOG: it writes a line per dropped connection, which lets hostile clients
    // fill the log; refusals are counted and logged at most once a minute per limit instead.
    // threads == 0: a thread per connection. Handlers block until their event is committed, and a
    // pool thread serves its connections one after another: libmicrohttpd's pool hands a burst of
    // new keep-alive connections to whichever thread wakes first (16 connections landed on 5 of 16
    // threads in the ingest benchmark), which serialised their commits. With a thread each, every
    // connection's request joins the next group commit. poll(), not select(): no FD_SETSIZE cap.
    unsigned int flags = limits.threads == 0
        ? MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL
        : MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL;
    h->daemon = MHD_start_daemon(flags, port, accept_policy, h, handler, handler_cls,
                                 MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
                                 MHD_OPTION_THREAD_POOL_SIZE, limits.threads,
                                 MHD_OPTION_CONNECTION_LIMIT, limits.connection_limit,
                                 MHD_OPTION_CONNECTION_TIMEOUT, limits.idle_timeout_seconds,
                                 MHD_OPTION_CONNECTION_MEMORY_LIMIT, limits.connection_memory_limit,
                                 MHD_OPTION_NOTIFY_COMPLETED, completed, completed_cls,
                                 MHD_OPTION_NOTIFY_CONNECTION, notify_connection, h,
                                 MHD_OPTION_END);
    if (!h->daemon) {
        int e = errno;
        free(h->proxies);
        free(h);
        errno = e;
        return NULL;
    }
    int watched = h->deadline > 0 || (h->min_body_rate > 0 && h->body_window > 0);
    if (watched && pthread_create(&h->watchdog, NULL, watchdog_main, h) == 0) h->watchdog_running = 1;
    return h;
}

void faultline_http_stop(struct faultline_http *h) {
    if (!h) return;
    if (h->watchdog_running) {
        pthread_mutex_lock(&h->lock);
        h->stopping = 1;
        pthread_cond_signal(&h->wake);
        pthread_mutex_unlock(&h->lock);
        pthread_join(h->watchdog, NULL);
    }
    MHD_stop_daemon(h->daemon);
    pthread_mutex_destroy(&h->lock);
    pthread_cond_destroy(&h->wake);
    free(h->proxies);
    free(h);
}

uint16_t faultline_http_port(struct faultline_http *h) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(h->daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info ? info->port : 0;
}

uint64_t faultline_http_deadline_disconnects(struct faultline_http *h) {
    pthread_mutex_lock(&h->lock);
    uint64_t n = h->cut_count;
    pthread_mutex_unlock(&h->lock);
    return n;
}

static uint64_t read_counter(struct faultline_http *h, const uint64_t *counter) {
    pthread_mutex_lock(&h->lock);
    uint64_t n = *counter;
    pthread_mutex_unlock(&h->lock);
    return n;
}

uint64_t faultline_http_body_progress_disconnects(struct faultline_http *h) { return read_counter(h, &h->body_cut_count); }

uint64_t faultline_http_per_ip_refusals(struct faultline_http *h) { return read_counter(h, &h->per_ip_refused); }
