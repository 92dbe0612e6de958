// zlib: gzip for envelopes, log archives and chunk uploads.
#include <zlib.h>
