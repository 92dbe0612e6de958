// libcurl for the server's outgoing alerts (webhooks over HTTP(S), email over SMTP) and the SDK's
// envelope and log-archive requests (Sources/Faultline/Transport/CurlClient.swift).
// curl_easy_setopt is variadic, which Swift cannot call: one typed wrapper per argument kind.
#include <curl/curl.h>

static inline CURLcode fl_curl_set_long(CURL *c, CURLoption o, long v) { return curl_easy_setopt(c, o, v); }
static inline CURLcode fl_curl_set_string(CURL *c, CURLoption o, const char *v) { return curl_easy_setopt(c, o, v); }
static inline CURLcode fl_curl_set_pointer(CURL *c, CURLoption o, void *v) { return curl_easy_setopt(c, o, v); }
static inline CURLcode fl_curl_set_list(CURL *c, CURLoption o, struct curl_slist *v) { return curl_easy_setopt(c, o, v); }
typedef size_t (*fl_curl_io_callback)(char *buffer, size_t size, size_t count, void *context);
static inline CURLcode fl_curl_set_callback(CURL *c, CURLoption o, fl_curl_io_callback v) { return curl_easy_setopt(c, o, v); }
static inline CURLcode fl_curl_response_code(CURL *c, long *code) { return curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, code); }
