// LD_PRELOAD entry: starts the crash handler from FAULTLINE_CRASH_DIR.
#pragma once
