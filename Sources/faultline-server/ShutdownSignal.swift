// Waiting for SIGTERM or SIGINT without work in a signal handler.
import Foundation
import FaultlineCommandLine
import FaultlineServer
import FaultlineProtocol

/// Blocks until SIGTERM or SIGINT (dispatch sources, so no work happens in a signal handler).
enum ShutdownSignal {
    static func wait() {
        let sem = DispatchSemaphore(value: 0)
        var sources: [DispatchSourceSignal] = []
        for sig in [SIGTERM, SIGINT] {
            signal(sig, SIG_IGN)
            let s = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            s.setEventHandler { sem.signal() }
            s.resume()
            sources.append(s)
        }
        sem.wait()
        for s in sources { s.cancel() }
    }
}
