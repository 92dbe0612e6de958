// The SDK's own thread: turns buffered logs into envelopes and flushes the outbox every 2 s,
// on demand, and at exit. It never runs on the app's threads and never holds a lock the crash
// handler needs (the handler takes none).
import Foundation
import FaultlineProtocol
import Synchronization

final class Worker: @unchecked Sendable {
    nonisolated(unsafe) static var shared: Worker?  // set once in start, read afterwards
    static let interval = 2.0

    let flusher: Flusher
    let dsn: DSN
    private let condition = NSCondition()
    private var wakeRequested = false
    private var completedPasses = 0
    /// Set by the flush at exit: passes from then on make one quick attempt (Flusher.flushOnce(final:)).
    private var finalPasses = false
    /// A pass (packing logs, sending) is running on the worker thread.
    private var passInProgress = false
    private var stopping = false
    private var setUpDone = false
    private var exited = false
    private var thread: Thread?

    private let setUp: @Sendable () -> Void
    /// Uploads rolled log archives after each pass's envelopes (Logging/Archives); set before start.
    var archiveUploader: ArchiveUploader?

    init(flusher: Flusher, dsn: DSN, setUp: @escaping @Sendable () -> Void = {}) {
        self.flusher = flusher
        self.dsn = dsn
        self.setUp = setUp
    }

    func start() {
        let t = Thread { [self] in
            Self.blockAppSignals()
            setUp()
            condition.lock()
            setUpDone = true
            condition.broadcast()
            condition.unlock()
            run()
        }
        t.name = "faultline.sdk"
        thread = t
        t.start()
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
        condition.lock()
        let deadline = Date().addingTimeInterval(timeout)
        while !setUpDone { if !condition.wait(until: deadline) { break } }
        condition.unlock()
    }

    func wake() {
        condition.lock()
        wakeRequested = true
        condition.signal()
        condition.unlock()
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
            condition.lock()
            let running = completedPasses
            let grace = Date().addingTimeInterval(Flusher.finalAttemptTimeout)
            while passInProgress && completedPasses == running { if !condition.wait(until: grace) { break } }
            let stillRunning = passInProgress && completedPasses == running
            condition.unlock()
            if stillRunning {
                // The server did not answer within a final attempt's time: it will not answer the
                // final pass either; everything stays in the outbox for the next launch.
                flusher.serverUnresponsiveAtExit()
                flusher.transport.cancelInFlight()
            }
        }
        condition.lock()
        if final { finalPasses = true }
        // A pass already running may have missed recent items: then it and one more.
        let target = completedPasses + (passInProgress ? 2 : 1)
        wakeRequested = true
        condition.broadcast()
        let deadline = Date().addingTimeInterval(timeout)
        while completedPasses < target {
            if !condition.wait(until: deadline) { break }
        }
        let ok = completedPasses >= target
        condition.unlock()
        return ok
    }

    /// At exit: no new pass starts, a request in flight is cancelled, and we wait (bounded) until
    /// the thread has left libcurl, so exit's clean-up (OpenSSL's atexit) never runs under it.
    func stopAndWait(timeout: Double) {
        condition.lock()
        stopping = true
        condition.broadcast()
        condition.unlock()
        flusher.transport.cancelInFlight()
        condition.lock()
        let deadline = Date().addingTimeInterval(timeout)
        while !exited { if !condition.wait(until: deadline) { break } }
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            if !wakeRequested && !stopping { _ = condition.wait(until: Date().addingTimeInterval(Self.interval)) }
            wakeRequested = false
            let stop = stopping
            passInProgress = true
            condition.unlock()
            pass()
            condition.lock()
            passInProgress = false
            completedPasses += 1
            condition.broadcast()
            condition.unlock()
            if stop {
                condition.lock()
                exited = true
                condition.broadcast()
                condition.unlock()
                return
            }
        }
    }

    private func pass() {
        packLogs()
        condition.lock()
        let stop = stopping
        condition.unlock()
        condition.lock()
        let final = finalPasses
        condition.unlock()
        if !stop { _ = flusher.flushOnce(final: final) }
        // Log archives only between normal passes: at exit they stay on disk for the next launch.
        if !stop && !final, let uploader = archiveUploader {
            uploader.pass(shouldStop: { [condition] in condition.lock(); defer { condition.unlock() }; return stopping })
        }
    }

    /// Buffered log lines become `log` envelopes of at most LogBuffer.batchSize lines.
    func packLogs() {
        let (records, dropped) = LogBuffer.shared.drain()
        if dropped > 0 { flusher.outbox.countDrop(.queueOverflow, dropped) }
        guard !records.isEmpty else { return }
        let context = SDKState.shared.context
        var start = 0
        while start < records.count {
            let end = min(start + LogBuffer.batchSize, records.count)
            let payload = LogBuffer.itemPayload(records[start..<end], traceID: context?.traceID ?? newEventID(), context: context)
            let item = Envelope.Item(type: "log", payload: payload, extra: [
                "item_count": .int(Int64(end - start)), "content_type": "application/vnd.sentry.items.log+json"])
            flusher.outbox.enqueue(Envelope(header: Faultline.envelopeHeader(eventID: nil, dsn: dsn), items: [item]), sync: false)
            start = end
        }
    }
}
