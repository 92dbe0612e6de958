// The SDK's own thread: turns buffered logs into envelopes and flushes the outbox every 2 s,
// on demand, and at exit. It never runs on the app's threads and never holds a lock the crash
// handler needs (the handler takes none).
import Foundation
import FaultlineProtocol
import FaultlineThreads
import Synchronization

final class Worker: @unchecked Sendable {
    nonisolated(unsafe) static var shared: Worker?  // set once in start, read afterwards
    static let interval = 2.0

    let flusher: Flusher
    let dsn: DSN
    /// What the flushes, the exit and the thread agree on (under the worker thread's lock).
    private struct Passes {
        var wakeRequested = false
        var completed = 0
        /// Set by the flush at exit: passes from then on make one quick attempt (Flusher.flushOnce(final:)).
        var final = false
        /// A pass (packing logs, sending) is running on the worker thread.
        var inProgress = false
        /// The pass that saw the stop request ran: the thread ends.
        var lastRan = false
        var setUpDone = false
        /// When the next periodic pass is due.
        var due = Date().addingTimeInterval(Worker.interval)
    }
    private let thread = WorkerThread(name: "faultline.sdk", state: Passes())

    private let setUp: @Sendable () -> Void
    /// Uploads rolled log archives after each pass's envelopes (Logging/Archives); set before start.
    var archiveUploader: ArchiveUploader?

    init(flusher: Flusher, dsn: DSN, setUp: @escaping @Sendable () -> Void = {}) {
        self.flusher = flusher
        self.dsn = dsn
        self.setUp = setUp
    }

    func start() {
        thread.start(
            prepare: { [self] in
                Self.blockAppSignals()
                setUp()
                thread.update { $0.setUpDone = true }
            },
            next: { [self] p, stopping in
                if p.lastRan { return .exit }
                // Every 2 s, on demand, and once more when asked to stop (then it ends).
                if !p.wakeRequested && !stopping && Date() < p.due { return .wait(until: p.due) }
                p.wakeRequested = false
                p.inProgress = true
                p.lastRan = stopping
                return .run { [self] in
                    pass()
                    thread.update { p in
                        p.inProgress = false
                        p.completed += 1
                        p.due = Date().addingTimeInterval(Self.interval)
                    }
                }
            })
    }

    /// Signals the app handles itself go to the app's threads, not ours.
    static func blockAppSignals() {
        var set = sigset_t()
        sigemptyset(&set)
        for s in [SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGCHLD, SIGPIPE, SIGWINCH] { sigaddset(&set, s) }
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    /// Waits (bounded) until the worker's set-up (session start) has run.
    func waitUntilSetUp(timeout: Double) {
        _ = thread.wait(until: Date().addingTimeInterval(timeout)) { $0.setUpDone }
    }

    func wake() {
        thread.update { $0.wakeRequested = true }
    }

    /// Runs a pass now and waits for it (at most `timeout` seconds). True if it completed.
    /// `final` (at exit): one quick attempt per envelope, no back-off (see Flusher.finalAttemptTimeout).
    @discardableResult
    func flush(timeout: Double, final: Bool = false) -> Bool {
        if final {
            // A pass in progress may be sleeping out a back-off (it stops now) or waiting on a
            // server that does not answer: it gets as long as a final attempt would, then its
            // request is cancelled (the envelope stays in the outbox) and the quick pass runs.
            flusher.abandonRetries()
            let running = thread.read { $0.completed }
            let grace = Date().addingTimeInterval(Flusher.finalAttemptTimeout)
            let finished = thread.wait(until: grace) { !($0.inProgress && $0.completed == running) }
            if !finished {
                // The server did not answer within a final attempt's time: it will not answer the
                // final pass either; everything stays in the outbox for the next launch.
                flusher.serverUnresponsiveAtExit()
                flusher.transport.cancelInFlight()
            }
        }
        let target = thread.update { p -> Int in
            if final { p.final = true }
            p.wakeRequested = true
            // A pass already running may have missed recent items: then it and one more.
            return p.completed + (p.inProgress ? 2 : 1)
        }
        return thread.wait(until: Date().addingTimeInterval(timeout)) { $0.completed >= target }
    }

    /// At exit: no new pass starts, a request in flight is cancelled, and we wait (bounded) until
    /// the thread has left libcurl, so exit's clean-up (OpenSSL's atexit) never runs under it.
    func stopAndWait(timeout: Double) {
        thread.requestStop()
        flusher.transport.cancelInFlight()
        thread.join(timeout: timeout)
    }

    private func pass() {
        packLogs()
        let stop = thread.isStopping
        let final = thread.read { $0.final }
        if !stop { _ = flusher.flushOnce(final: final) }
        // Log archives only between normal passes: at exit they stay on disk for the next launch.
        if !stop && !final, let uploader = archiveUploader {
            uploader.pass(shouldStop: { [thread] in thread.isStopping })
        }
    }

    /// Buffered log lines become `log` envelopes of at most LogBuffer.batchSize lines.
    func packLogs() {
        let (records, dropped) = LogBuffer.shared.drain()
        if dropped > 0 { flusher.outbox.countDrop(.queueOverflow, dropped, category: "log_item") }
        guard !records.isEmpty else { return }
        let context = SDKState.shared.context
        var start = 0
        while start < records.count {
            let end = min(start + LogBuffer.batchSize, records.count)
            let payload = LogBuffer.itemPayload(records[start..<end], traceID: context?.traceID ?? newEventID(), context: context)
            let item = Envelope.Item(
                type: "log", payload: payload,
                extra: [
                    "item_count": .int(Int64(end - start)), "content_type": "application/vnd.sentry.items.log+json"
                ])
            flusher.outbox.enqueue(Envelope(header: Faultline.envelopeHeader(eventID: nil, dsn: dsn), items: [item]), sync: false)
            start = end
        }
    }
}
