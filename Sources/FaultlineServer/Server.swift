// The server: ingest, storage, grouping, debug files, backfill.
import CMicroHTTPD
import CSQLite
