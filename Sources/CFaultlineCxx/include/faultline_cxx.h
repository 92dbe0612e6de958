// Faultline's C++ terminate handler: records why an uncaught exception is about to end the process.
#ifndef FAULTLINE_CXX_H
#define FAULTLINE_CXX_H
#ifdef __cplusplus
extern "C" {
#endif

/// Installs a std::terminate handler (normal context) that records the current exception's
/// demangled type and, for std::exception subclasses, what(), through faultline_crash_set_message,
/// then calls the handler that was installed before it (by default libstdc++'s verbose handler,
/// which prints the same to stderr and aborts). Idempotent. A handler the application installs
/// later replaces ours (std::set_terminate has one slot); call this again after it to chain.
void faultline_install_terminate_handler(void);

#ifdef __cplusplus
}
#endif
#endif
