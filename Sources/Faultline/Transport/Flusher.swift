// One flush: send what the outbox holds, oldest first, honouring rate limits and back-off.
import FaultlineCrashPickup
import Foundation
import FaultlineProtocol
import Synchronization

final class Flusher: Sendable {
    struct Summary: Equatable, Sendable {
        var sent = 0
        var dropped = 0
        var split = 0
        var remaining = 0
        var stoppedBy: String?  // "rate limit", "backoff", "retries exhausted", "redirect (HTTP 307) not followed"
    }

    static let attemptsPerFlush = 3
    /// At exit everything unsent is already durable in the outbox: one attempt per envelope, no
    /// back-off sleeps, and a short limit per request, so a refused or black-holed server costs
    /// the exiting process one quick try, not the whole flush timeout.
    static let finalAttemptTimeout = 0.5

    let outbox: Outbox
    let transport: any EnvelopeSending
    let clock: any SDKClock
    private struct State { var backoff = Backoff(); var retryAt = 0.0; var limits = RateLimits() }
    private let state = Mutex(State())
    private let flushing = Mutex<Void>(())
    /// Set when the process is exiting: a pass in progress stops retrying (and sleeping) at once,
    /// so the final quick pass can run.
    private let exiting = Atomic<Bool>(false)

    /// The process is exiting (Worker.flush(final:)): stop any back-off in progress now.
    func abandonRetries() { exiting.store(true, ordering: .relaxed) }

    /// A request in progress at exit got no answer in a final attempt's time: the final pass
    /// does not try again (the server is stalled or black-holed).
    func serverUnresponsiveAtExit() { unresponsive.store(true, ordering: .relaxed) }
    private let unresponsive = Atomic<Bool>(false)

    init(outbox: Outbox, transport: any EnvelopeSending, clock: any SDKClock = SystemClock()) {
        self.outbox = outbox
        self.transport = transport
        self.clock = clock
    }

    /// Sends pending envelopes until the outbox is empty, a rate limit applies, or three attempts
    /// at one envelope failed. A failed envelope stays on disk for the next flush.
    func flushOnce(final: Bool = false) -> Summary {
        flushing.withLock { _ in flushLocked(final: final) }
    }

    private func flushLocked(final: Bool) -> Summary {
        var summary = Summary()
        if final && unresponsive.load(ordering: .relaxed) {
            summary.stoppedBy = "server unresponsive at exit"
            summary.remaining = outbox.pending().count
            return summary
        }
        let now = clock.now()
        let retryAt = state.withLock { $0.retryAt }
        // At exit one attempt is made even during a back-off: it costs one quick try, and a server
        // that came back gets the session's end now rather than at the next launch.
        if retryAt > now && !final { summary.stoppedBy = "backoff"; summary.remaining = outbox.pending().count; return summary }
        enqueueClientReportIfNeeded()

        var queue = outbox.pending()
        while !queue.isEmpty {
            let entry = queue.removeFirst()
            // Another instance of the program sharing this outbox may be sending it (Outbox+SendingClaim).
            guard let claim = outbox.claim(entry) else {
                if !FileManager.default.fileExists(atPath: entry.path) { outbox.forget(entry) }
                continue
            }
            defer { claim.release() }
            guard let envelope = outbox.read(entry) else { continue }  // gone or corrupt (counted by the outbox)
            let types = envelope.items.map(\.type)
            if !state.withLock({ $0.limits.allows(itemTypes: types, now: clock.now()) }) {
                // Limited category: this envelope waits on disk; envelopes of other categories
                // behind it (a crash behind limited logs) still go out.
                summary.stoppedBy = "rate limit"
                summary.remaining += 1
                continue
            }
            var body = envelope
            body.header["sent_at"] = .string(SessionTracker.iso(Date(timeIntervalSince1970: clock.now())))
            var attempt = 0
            attempts: while true {
                attempt += 1
                let (outcome, rateLimits) =
                    final
                    ? transport.send(body.serialized(), timeout: Self.finalAttemptTimeout)
                    : transport.send(body.serialized())
                if !rateLimits.isEmpty { state.withLock { $0.limits.apply(rateLimits, now: clock.now()) } }
                switch outcome {
                case .sent:
                    outbox.remove(entry)
                    state.withLock { $0.backoff.succeeded() }
                    summary.sent += 1
                    break attempts
                case .rateLimited(let seconds, let categories):
                    // Sentry's rule: X-Sentry-Rate-Limits, when present, says exactly what is
                    // limited (already applied above); only without it does Retry-After limit all.
                    if rateLimits.isEmpty {
                        state.withLock { $0.limits.apply([.init(seconds: seconds, categories: categories)], now: clock.now()) }
                    }
                    summary.stoppedBy = "rate limit"
                    summary.remaining += 1
                    break attempts
                case .tooLarge:
                    if let halves = split(envelope) {
                        for h in halves { outbox.enqueue(h) }
                        outbox.remove(entry)
                        summary.split += 1
                        queue = outbox.pending()  // the halves are now the newest entries
                    } else {
                        outbox.remove(entry)
                        outbox.countDrop(.rejectedByServer, envelope: envelope)
                        summary.dropped += 1
                    }
                    break attempts
                case .rejected:
                    outbox.remove(entry)
                    outbox.countDrop(.rejectedByServer, envelope: envelope)
                    summary.dropped += 1
                    break attempts
                case .redirected(let status, _):
                    // An answer, not a failure to retry now: every envelope would get the same one.
                    // Nothing is deleted; the pass stops and the next one waits out the back-off.
                    state.withLock { s in
                        s.backoff.failed(); s.retryAt = clock.now() + s.backoff.currentDelay
                    }
                    summary.stoppedBy = "redirect (HTTP \(status)) not followed"
                    summary.remaining += queue.count + 1
                    return summary
                case .retryable:
                    let delay = state.withLock { s -> Double in
                        s.backoff.failed(); return s.backoff.currentDelay
                    }
                    if final || exiting.load(ordering: .relaxed) || attempt >= Self.attemptsPerFlush {
                        state.withLock { $0.retryAt = clock.now() + delay }
                        summary.stoppedBy = "retries exhausted"
                        summary.remaining += queue.count + 1
                        return summary
                    }
                    // An exit that begins meanwhile does not wait out the back-off.
                    clock.sleep(seconds: delay) { exiting.load(ordering: .relaxed) }
                }
            }
        }
        return summary
    }

    /// Halves the log items of an envelope (a 413 answer). Nil if it cannot be split further.
    func split(_ envelope: Envelope) -> [Envelope]? {
        guard envelope.items.count == 1, let item = envelope.items.first, item.type == "log",
            let payload = try? JSONValue.parse(item.payload), let logs = payload["items"]?.arrayValue, logs.count > 1
        else { return nil }
        let mid = logs.count / 2
        return [Array(logs[..<mid]), Array(logs[mid...])].map { part in
            let p: JSONValue = ["items": .array(part)]
            return Envelope(
                header: envelope.header,
                items: [
                    Envelope.Item(
                        type: "log", payload: p.serialized(),
                        extra: [
                            "item_count": .int(Int64(part.count)), "content_type": "application/vnd.sentry.items.log+json"
                        ])
                ])
        }
    }

    /// Losses since the last report go to the server as a `client_report`, so drops are visible there.
    private func enqueueClientReportIfNeeded() {
        let losses = outbox.takeUnreportedLosses()
        guard !losses.isEmpty else { return }
        let report: JSONValue = ["timestamp": .double(clock.now()), "discarded_events": .array(Outbox.discardedEvents(losses))]
        outbox.enqueue(Envelope(header: [:], items: [Envelope.Item(type: "client_report", payload: report.serialized())]))
    }
}
