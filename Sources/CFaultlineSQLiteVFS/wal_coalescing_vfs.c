// The WAL-coalescing VFS. SQLite appends each frame of a commit to the WAL with two write calls
// (its 24-byte header, then the page), so a commit of 70 frames is 140 system calls before its
// fsync. Here the writes to a WAL file that continue where the previous one ended are gathered in
// memory and handed to the file (in pieces of 124 KiB, about the most the default VFS takes in one
// call) when SQLite syncs the WAL (each commit, under `PRAGMA synchronous=FULL`), and before
// anything that must see the file as written: a read of the WAL, its size, a truncate, a file
// control, a write elsewhere in it, its close.
//
// Why this is safe only with synchronous=FULL: a commit makes its frames visible to other
// connections by updating the wal-index (shared memory) after writing them, and under FULL it
// syncs the WAL in between, which is where the gathered frames reach the file. Under NORMAL no
// sync comes between, so other connections could read frames still in this buffer: the store
// uses this VFS only for its writer connection and only under FULL (SQLiteStore).
//
// Every other file (the database, its shared memory, journals) is the default VFS's own file,
// opened in place, with no layer in between.
#include "faultline_sqlite_vfs.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <string.h>

const char *const faultline_wal_coalescing_vfs_name = "faultline-wal-coalescing";

/// A gathered run of bytes never grows past this; a longer run is written out and starts again.
#define GATHER_CAP (4 * 1024 * 1024)
/// The default (unix) VFS takes at most 128 KiB - 1 per write call (it masks the length to 17
/// bits), so a run is handed over in pieces of this size: still one call per 30 frames.
#define PIECE (124 * 1024)

static sqlite3_vfs vfs;
static sqlite3_vfs *real_vfs;
static atomic_llong writes_asked, writes_made;

typedef struct {
    sqlite3_file base;
    sqlite3_file *real;  // the default VFS's file, right after this struct
    unsigned char *buf;  // pending bytes for offsets [start, start + len)
    sqlite3_int64 start;
    int len, cap;
} WALFile;

/// Writes `n` bytes at `offset` through the default VFS, in pieces it accepts.
static int write_through(WALFile *f, const unsigned char *data, int n, sqlite3_int64 offset) {
    for (int done = 0; done < n;) {
        int piece = n - done < PIECE ? n - done : PIECE;
        int rc = f->real->pMethods->xWrite(f->real, data + done, piece, offset + done);
        atomic_fetch_add_explicit(&writes_made, 1, memory_order_relaxed);
        if (rc != SQLITE_OK) return rc;
        done += piece;
    }
    return SQLITE_OK;
}

static int flush(WALFile *f) {
    if (f->len == 0) return SQLITE_OK;
    int rc = write_through(f, f->buf, f->len, f->start);
    // On failure the frames are dropped with the error: SQLite fails the commit (its sync
    // returns the error) and never counts frames past the last good commit.
    f->len = 0;
    return rc;
}

static int wal_close(sqlite3_file *file) {
    WALFile *f = (WALFile *)file;
    int rc = flush(f);
    int rc2 = f->real->pMethods->xClose(f->real);
    sqlite3_free(f->buf);
    f->buf = NULL;
    return rc != SQLITE_OK ? rc : rc2;
}

static int wal_read(sqlite3_file *file, void *out, int amount, sqlite3_int64 offset) {
    WALFile *f = (WALFile *)file;
    int rc = flush(f);
    if (rc != SQLITE_OK) return rc;
    return f->real->pMethods->xRead(f->real, out, amount, offset);
}

static int wal_write(sqlite3_file *file, const void *data, int amount, sqlite3_int64 offset) {
    WALFile *f = (WALFile *)file;
    atomic_fetch_add_explicit(&writes_asked, 1, memory_order_relaxed);
    if (f->len > 0 && (offset != f->start + f->len || (sqlite3_int64)f->len + amount > GATHER_CAP)) {
        int rc = flush(f);
        if (rc != SQLITE_OK) return rc;
    }
    if (amount > GATHER_CAP) return write_through(f, data, amount, offset);
    if (f->len + amount > f->cap) {
        int cap = f->cap ? f->cap : 256 * 1024;
        while (cap < f->len + amount) cap *= 2;
        if (cap > GATHER_CAP) cap = GATHER_CAP;
        unsigned char *grown = sqlite3_realloc(f->buf, cap);
        if (!grown) {
            // No memory to gather in: write through.
            int rc = flush(f);
            if (rc != SQLITE_OK) return rc;
            return write_through(f, data, amount, offset);
        }
        f->buf = grown;
        f->cap = cap;
    }
    if (f->len == 0) f->start = offset;
    memcpy(f->buf + f->len, data, amount);
    f->len += amount;
    return SQLITE_OK;
}

static int wal_truncate(sqlite3_file *file, sqlite3_int64 size) {
    WALFile *f = (WALFile *)file;
    int rc = flush(f);
    if (rc != SQLITE_OK) return rc;
    return f->real->pMethods->xTruncate(f->real, size);
}

static int wal_sync(sqlite3_file *file, int flags) {
    WALFile *f = (WALFile *)file;
    int rc = flush(f);
    if (rc != SQLITE_OK) return rc;
    return f->real->pMethods->xSync(f->real, flags);
}

static int wal_file_size(sqlite3_file *file, sqlite3_int64 *size) {
    WALFile *f = (WALFile *)file;
    int rc = flush(f);
    if (rc != SQLITE_OK) return rc;
    return f->real->pMethods->xFileSize(f->real, size);
}

static int wal_lock(sqlite3_file *file, int lock) { return ((WALFile *)file)->real->pMethods->xLock(((WALFile *)file)->real, lock); }
static int wal_unlock(sqlite3_file *file, int lock) { return ((WALFile *)file)->real->pMethods->xUnlock(((WALFile *)file)->real, lock); }
static int wal_check_reserved(sqlite3_file *file, int *out) {
    return ((WALFile *)file)->real->pMethods->xCheckReservedLock(((WALFile *)file)->real, out);
}
static int wal_file_control(sqlite3_file *file, int op, void *arg) {
    WALFile *f = (WALFile *)file;
    // Whatever the control does to the file (a size hint, a persistence setting) sees it as written.
    int rc = flush(f);
    if (rc != SQLITE_OK) return rc;
    return f->real->pMethods->xFileControl(f->real, op, arg);
}
static int wal_sector_size(sqlite3_file *file) { return ((WALFile *)file)->real->pMethods->xSectorSize(((WALFile *)file)->real); }
static int wal_device_characteristics(sqlite3_file *file) {
    return ((WALFile *)file)->real->pMethods->xDeviceCharacteristics(((WALFile *)file)->real);
}

// A WAL file is never memory-mapped or given shared memory by SQLite: version 1 methods.
static const sqlite3_io_methods wal_methods = {
    1, wal_close, wal_read, wal_write, wal_truncate, wal_sync, wal_file_size, wal_lock, wal_unlock,
    wal_check_reserved, wal_file_control, wal_sector_size, wal_device_characteristics,
};

static int vfs_open(sqlite3_vfs *v, const char *name, sqlite3_file *file, int flags, int *out_flags) {
    (void)v;
    if (!(flags & SQLITE_OPEN_WAL)) {
        // Not a WAL: the default VFS's file in place, so its methods are called directly.
        return real_vfs->xOpen(real_vfs, name, file, flags, out_flags);
    }
    WALFile *f = (WALFile *)file;
    memset(f, 0, sizeof(*f));
    f->real = (sqlite3_file *)(f + 1);
    int rc = real_vfs->xOpen(real_vfs, name, f->real, flags, out_flags);
    // On failure pMethods stays NULL, so SQLite does not call xClose on this file.
    f->base.pMethods = rc == SQLITE_OK ? &wal_methods : NULL;
    return rc;
}

static int vfs_delete(sqlite3_vfs *v, const char *name, int sync_dir) { (void)v; return real_vfs->xDelete(real_vfs, name, sync_dir); }
static int vfs_access(sqlite3_vfs *v, const char *name, int flags, int *out) { (void)v; return real_vfs->xAccess(real_vfs, name, flags, out); }
static int vfs_full_pathname(sqlite3_vfs *v, const char *name, int n, char *out) {
    (void)v;
    return real_vfs->xFullPathname(real_vfs, name, n, out);
}
static void *vfs_dl_open(sqlite3_vfs *v, const char *name) { (void)v; return real_vfs->xDlOpen(real_vfs, name); }
static void vfs_dl_error(sqlite3_vfs *v, int n, char *out) { (void)v; real_vfs->xDlError(real_vfs, n, out); }
static void (*vfs_dl_sym(sqlite3_vfs *v, void *handle, const char *sym))(void) { (void)v; return real_vfs->xDlSym(real_vfs, handle, sym); }
static void vfs_dl_close(sqlite3_vfs *v, void *handle) { (void)v; real_vfs->xDlClose(real_vfs, handle); }
static int vfs_randomness(sqlite3_vfs *v, int n, char *out) { (void)v; return real_vfs->xRandomness(real_vfs, n, out); }
static int vfs_sleep(sqlite3_vfs *v, int us) { (void)v; return real_vfs->xSleep(real_vfs, us); }
static int vfs_current_time(sqlite3_vfs *v, double *out) { (void)v; return real_vfs->xCurrentTime(real_vfs, out); }
static int vfs_get_last_error(sqlite3_vfs *v, int n, char *out) {
    (void)v;
    return real_vfs->xGetLastError ? real_vfs->xGetLastError(real_vfs, n, out) : 0;
}
static int vfs_current_time_int64(sqlite3_vfs *v, sqlite3_int64 *out) { (void)v; return real_vfs->xCurrentTimeInt64(real_vfs, out); }

static int register_once(void) {
    real_vfs = sqlite3_vfs_find(NULL);
    if (!real_vfs || real_vfs->iVersion < 2) return SQLITE_ERROR;
    memset(&vfs, 0, sizeof(vfs));
    vfs.iVersion = 2;
    // Room for a WAL file's own fields before the default VFS's file (vfs_open).
    vfs.szOsFile = (int)sizeof(WALFile) + real_vfs->szOsFile;
    vfs.mxPathname = real_vfs->mxPathname;
    vfs.zName = faultline_wal_coalescing_vfs_name;
    vfs.xOpen = vfs_open;
    vfs.xDelete = vfs_delete;
    vfs.xAccess = vfs_access;
    vfs.xFullPathname = vfs_full_pathname;
    vfs.xDlOpen = vfs_dl_open;
    vfs.xDlError = vfs_dl_error;
    vfs.xDlSym = vfs_dl_sym;
    vfs.xDlClose = vfs_dl_close;
    vfs.xRandomness = vfs_randomness;
    vfs.xSleep = vfs_sleep;
    vfs.xCurrentTime = vfs_current_time;
    vfs.xGetLastError = vfs_get_last_error;
    vfs.xCurrentTimeInt64 = vfs_current_time_int64;
    return sqlite3_vfs_register(&vfs, 0);
}

static pthread_once_t registered = PTHREAD_ONCE_INIT;
static int register_result;
static void register_vfs(void) { register_result = register_once(); }

int faultline_register_wal_coalescing_vfs(void) {
    pthread_once(&registered, register_vfs);
    return register_result;
}

void faultline_wal_coalescing_counts(long long *writes_asked_out, long long *writes_made_out) {
    *writes_asked_out = atomic_load_explicit(&writes_asked, memory_order_relaxed);
    *writes_made_out = atomic_load_explicit(&writes_made, memory_order_relaxed);
}
