// Flush at normal exit and on SIGTERM, so the last logs and the session end are not lost.
import Dispatch
import Foundation

enum ExitHooks {
    nonisolated(unsafe) private static var termSource: DispatchSourceSignal?

    /// Called after libcurl is initialised (see SDKState.startSending), so this hook runs first.
    static func install() {
        atexit { Faultline.close(timeout: 2) }
        // Only when the app left SIGTERM at its default: then we take it, flush, and die by it as
        // the app would have. An app with its own SIGTERM handling keeps it untouched.
        var current = sigaction()
        sigaction(SIGTERM, nil, &current)
        guard current.__sigaction_handler.sa_handler == nil else { return }  // SIG_DFL is nil
        signal(SIGTERM, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGTERM, queue: .global())
        source.setEventHandler {
            Faultline.close(timeout: 2)
            signal(SIGTERM, SIG_DFL)
            kill(getpid(), SIGTERM)
        }
        source.resume()
        termSource = source
    }
}
