// libdeflate: whole-buffer gzip decoding of ingest's request bodies (Ingest/GzipMember.swift).
#include <libdeflate.h>
