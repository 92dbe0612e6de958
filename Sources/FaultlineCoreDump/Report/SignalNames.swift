// Linux signal and si_code names, for a report written outside the crashed process (the crash
// core has its own table in C, for the crash path).
import FoundationEssentials

enum SignalNames {
    static func name(_ number: Int) -> String {
        let names = [
            1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 5: "SIGTRAP", 6: "SIGABRT", 7: "SIGBUS", 8: "SIGFPE", 9: "SIGKILL",
            10: "SIGUSR1", 11: "SIGSEGV", 12: "SIGUSR2", 13: "SIGPIPE", 14: "SIGALRM", 15: "SIGTERM", 16: "SIGSTKFLT", 17: "SIGCHLD",
            18: "SIGCONT", 19: "SIGSTOP", 20: "SIGTSTP", 21: "SIGTTIN", 22: "SIGTTOU", 23: "SIGURG", 24: "SIGXCPU", 25: "SIGXFSZ",
            26: "SIGVTALRM", 27: "SIGPROF", 28: "SIGWINCH", 29: "SIGIO", 30: "SIGPWR", 31: "SIGSYS"
        ]
        return names[number] ?? "SIG\(number)"
    }

    /// si_code's name: the sender kinds for every signal (codes <= 0), the fault kinds per signal.
    static func codeName(signal: Int, code: Int) -> String {
        let senders = [0: "SI_USER", -1: "SI_QUEUE", -2: "SI_TIMER", -3: "SI_MESGQ", -4: "SI_ASYNCIO", -5: "SI_SIGIO", -6: "SI_TKILL", 0x80: "SI_KERNEL"]
        if let s = senders[code] { return s }
        let faults: [Int: [Int: String]] = [
            11: [1: "SEGV_MAPERR", 2: "SEGV_ACCERR", 3: "SEGV_BNDERR", 4: "SEGV_PKUERR"],
            7: [1: "BUS_ADRALN", 2: "BUS_ADRERR", 3: "BUS_OBJERR", 4: "BUS_MCEERR_AR", 5: "BUS_MCEERR_AO"],
            4: [1: "ILL_ILLOPC", 2: "ILL_ILLOPN", 3: "ILL_ILLADR", 4: "ILL_ILLTRP", 5: "ILL_PRVOPC", 6: "ILL_PRVREG", 7: "ILL_COPROC", 8: "ILL_BADSTK"],
            8: [1: "FPE_INTDIV", 2: "FPE_INTOVF", 3: "FPE_FLTDIV", 4: "FPE_FLTOVF", 5: "FPE_FLTUND", 6: "FPE_FLTRES", 7: "FPE_FLTINV", 8: "FPE_FLTSUB"],
            5: [1: "TRAP_BRKPT", 2: "TRAP_TRACE", 3: "TRAP_BRANCH", 4: "TRAP_HWBKPT"]
        ]
        return faults[signal]?[code] ?? "code \(code)"
    }
}
