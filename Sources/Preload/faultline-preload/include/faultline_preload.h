// LD_PRELOAD entry point: an unmodified program gets Faultline's crash handler.
#pragma once
/// Starts the handler from the environment; called by the library constructor. Returns 0 if started.
int faultline_preload_start_from_environment(void);
