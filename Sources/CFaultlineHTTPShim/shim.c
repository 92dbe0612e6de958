// Non-variadic front for MHD_start_daemon (see include/faultline_http_shim.h), and the
// header-completion deadline: libmicrohttpd 0.9.75's timeout counts inactivity only, so a client
// sending one header byte every few seconds holds its connection forever (slowloris). Every
// connection is tracked from accept (MHD_OPTION_NOTIFY_CONNECTION); a watchdog thread shuts down
// the socket of any connection whose headers are not complete by the deadline. shutdown() (not
// close()) leaves the descriptor to libmicrohttpd, which sees end-of-stream and closes it; the
// entry is removed under the same lock in the CLOSED notification, before libmicrohttpd closes
// the descriptor, so the watchdog can never touch a reused descriptor.
#define _GNU_SOURCE
#include "faultline_http_shim.h"
#include <arpa/inet.h>
#include <errno.h>
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
    struct tracked head;  // circular list sentinel
    uint64_t cut_count;
};

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void notify_connection(void *cls, struct MHD_Connection *connection, void **socket_context,
                              enum MHD_ConnectionNotificationCode code) {
    struct faultline_http *h = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        struct tracked *t = calloc(1, sizeof *t);
        if (!t) return;
        const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
        t->fd = info ? info->connect_fd : -1;
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
    pthread_mutex_unlock(&h->lock);
}

void faultline_http_request_finished(struct MHD_Connection *connection) {
    struct tracked *t;
    struct faultline_http *h = owner_of(connection, &t);
    if (!h) return;
    pthread_mutex_lock(&h->lock);
    t->headers_complete = 0;
    t->started = now_seconds();
    pthread_mutex_unlock(&h->lock);
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
            if (!t->headers_complete && !t->cut && t->fd >= 0 && now - t->started > h->deadline) {
                shutdown(t->fd, SHUT_RDWR);
                t->cut = 1;
                h->cut_count++;
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
    h->daemon = MHD_start_daemon(flags, port, NULL, NULL, handler, handler_cls,
                                 MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
                                 MHD_OPTION_THREAD_POOL_SIZE, limits.threads,
                                 MHD_OPTION_CONNECTION_LIMIT, limits.connection_limit,
                                 MHD_OPTION_PER_IP_CONNECTION_LIMIT, limits.per_ip_connection_limit,
                                 MHD_OPTION_CONNECTION_TIMEOUT, limits.idle_timeout_seconds,
                                 MHD_OPTION_CONNECTION_MEMORY_LIMIT, limits.connection_memory_limit,
                                 MHD_OPTION_NOTIFY_COMPLETED, completed, completed_cls,
                                 MHD_OPTION_NOTIFY_CONNECTION, notify_connection, h,
                                 MHD_OPTION_END);
    if (!h->daemon) {
        int e = errno;
        free(h);
        errno = e;
        return NULL;
    }
    if (h->deadline > 0 && pthread_create(&h->watchdog, NULL, watchdog_main, h) == 0) h->watchdog_running = 1;
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
