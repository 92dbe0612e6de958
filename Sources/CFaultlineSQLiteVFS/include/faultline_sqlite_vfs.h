// A SQLite VFS over the default one that gathers a transaction's WAL frame writes into one write
// call (see wal_coalescing_vfs.c for the rules that keep it correct).
#ifndef FAULTLINE_SQLITE_VFS_H
#define FAULTLINE_SQLITE_VFS_H

/// The VFS's name, for sqlite3_open_v2.
extern const char *const faultline_wal_coalescing_vfs_name;

/// Registers the VFS (once; later calls return the first call's result). SQLITE_OK (0) or
/// SQLite's error code.
int faultline_register_wal_coalescing_vfs(void);

/// Write calls the VFS has made to WAL files since the process started, and the writes SQLite
/// asked of it: how many calls the gathering saved (tests and benchmarks).
void faultline_wal_coalescing_counts(long long *writes_asked, long long *writes_made);

#endif
