// Writes to stderr through C stdio, for the stderr-capture tests (C and Swift writes alike).
#include "crash_probes.h"
#include <stdio.h>

void probe_stderr_printf(const char *text) { fprintf(stderr, "%s", text); }
