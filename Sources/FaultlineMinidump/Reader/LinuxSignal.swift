// Linux signal numbers and si_code values by name, for a dump's exception (the C crash core
// names its own in report_writer.c; this is the reader's copy for dumps written by others).

/// A Linux signal with its `si_code`, named as the kernel headers name them.
public struct LinuxSignal: Hashable, Sendable {
    public var number: UInt32
    public var code: Int32

    public var name: String {
        let names: [UInt32: String] = [
            1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 5: "SIGTRAP", 6: "SIGABRT", 7: "SIGBUS", 8: "SIGFPE",
            9: "SIGKILL", 10: "SIGUSR1", 11: "SIGSEGV", 12: "SIGUSR2", 13: "SIGPIPE", 14: "SIGALRM", 15: "SIGTERM",
            16: "SIGSTKFLT", 17: "SIGCHLD", 24: "SIGXCPU", 25: "SIGXFSZ", 31: "SIGSYS"
        ]
        return names[number] ?? "signal \(number)"
    }

    /// `SEGV_MAPERR`, `BUS_ADRALN`, `SI_USER`, … (the meaning of si_code depends on the signal).
    public var codeName: String {
        switch code {
        case 0: return "SI_USER"
        case -1: return "SI_QUEUE"
        case -6: return "SI_TKILL"
        case 0x80: return "SI_KERNEL"
        default: break
        }
        let perSignal: [UInt32: [Int32: String]] = [
            11: [1: "SEGV_MAPERR", 2: "SEGV_ACCERR", 3: "SEGV_BNDERR", 4: "SEGV_PKUERR"],
            7: [1: "BUS_ADRALN", 2: "BUS_ADRERR", 3: "BUS_OBJERR", 4: "BUS_MCEERR_AR", 5: "BUS_MCEERR_AO"],
            4: [1: "ILL_ILLOPC", 2: "ILL_ILLOPN", 3: "ILL_ILLADR", 4: "ILL_ILLTRP", 5: "ILL_PRVOPC", 6: "ILL_PRVREG", 7: "ILL_COPROC", 8: "ILL_BADSTK"],
            8: [1: "FPE_INTDIV", 2: "FPE_INTOVF", 3: "FPE_FLTDIV", 4: "FPE_FLTOVF", 5: "FPE_FLTUND", 6: "FPE_FLTRES", 7: "FPE_FLTINV", 8: "FPE_FLTSUB"],
            5: [1: "TRAP_BRKPT", 2: "TRAP_TRACE"]
        ]
        return perSignal[number]?[code] ?? "code \(code)"
    }
}
