// libdebuginfod from elfutils: the debuginfod client (DEBUGINFOD_URLS, its cache, timeouts).
#include <elfutils/debuginfod.h>
