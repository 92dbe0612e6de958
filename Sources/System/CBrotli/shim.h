// libbrotlidec: `Content-Encoding: br` bodies (sentry-python sends them when `brotli` is installed).
#include <brotli/decode.h>
