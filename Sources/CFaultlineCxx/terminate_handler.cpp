// The C++ half of "say why it crashed": an uncaught exception's type and what().
//
// std::terminate runs on the throwing thread, in normal context, before the abort() that raises
// SIGABRT: allocation and demangling are fine here. The crash handler later only copies the
// bytes we hand to faultline_crash_set_message. libstdc++ marks the exception as being handled
// before it calls terminate, so `throw;` rethrows it for a typed catch (as its own verbose
// handler does).
#include "faultline_cxx.h"

#include <cstdlib>
#include <cxxabi.h>
#include <exception>
#include <string>
#include <typeinfo>

extern "C" int faultline_crash_set_message(const char *source, const char *type, const char *text);

namespace faultline {

std::terminate_handler previous_handler = nullptr;

// In the crash core's own-code section (crash_internal.h, FL_OWN_CODE_SECTION): this frame sits
// between the app's throw and abort() in every uncaught-exception report, and the report marks it
// as Faultline's, so it is never taken for the culprit.
[[noreturn]] __attribute__((section("faultline_own_code"), noinline)) void record_and_terminate() {
    std::string type = "std::terminate";  // called without an exception (noexcept violation, …)
    std::string what;
    if (const std::type_info *thrown = abi::__cxa_current_exception_type()) {
        int status = 0;
        char *demangled = abi::__cxa_demangle(thrown->name(), nullptr, nullptr, &status);
        type = status == 0 && demangled ? demangled : thrown->name();
        std::free(demangled);
        try {
            throw;
        } catch (const std::exception &e) {
            what = e.what();
        } catch (...) {
            // Not a std::exception: the type is all there is.
        }
    }
    faultline_crash_set_message("c++", type.c_str(), what.c_str());
    if (previous_handler) previous_handler();
    std::abort();
}

}  // namespace faultline

extern "C" void faultline_install_terminate_handler(void) {
    using faultline::previous_handler;
    using faultline::record_and_terminate;
    std::terminate_handler current = std::get_terminate();
    if (current == record_and_terminate) return;
    previous_handler = current;
    std::set_terminate(record_and_terminate);
}
