// The test process's standard output is line-buffered from its first instruction.
//
// Under `swift test | tee log` (tools/test, CI) stdout is a pipe, so C stdio (which Swift's
// print and XCTest's progress lines go through) buffers it in 4 KiB blocks. When a test hangs
// and the run is killed, the last block never reaches the log and it names a test that had
// passed long before; tools/test-watchdog also needs each "started" line when it is printed.
#include <stdio.h>

__attribute__((constructor)) static void faultline_tests_line_buffer_stdout(void) { setvbuf(stdout, NULL, _IOLBF, 0); }
