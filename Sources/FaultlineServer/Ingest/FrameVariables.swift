// Frames' local variables (`vars`): sentry-python and others send them by default, and they can
// hold what must never be stored (a password argument, a token in a local). A project keeps
// them only when it opted in (`faultline projects frame-variables PROJECT on`); otherwise ingest
// removes them before the event is stored, so no page, API or backup ever holds them.
import FaultlineProtocol
import FoundationEssentials

enum FrameVariables {
    /// The whole event (`bytes`) without any frame's `vars`, or nil when no frame had any. `parsed`
    /// is ingest's parse, which holds only the members ingest reads (frames among them): it says
    /// whether there is anything to remove, and the event is then read again in full, so that the
    /// rewritten event keeps every other member (breadcrumbs, extra, request, …).
    static func stripped(_ bytes: Data, parsed: JSONValue) throws(IngestError) -> JSONValue? {
        guard hasVariables(parsed) else { return nil }
        do { return stripped(try JSONParser.parse(bytes)) } catch { throw .malformed("event: \(error)") }
    }

    /// Whether any frame has `vars`: read only, so the usual event (none) is not copied.
    static func hasVariables(_ event: JSONValue) -> Bool {
        func inStacktrace(_ st: JSONValue?) -> Bool { st?["frames"]?.arrayValue?.contains { $0["vars"] != nil } ?? false }
        for key in ["exception", "threads"] {
            if event[key]?["values"]?.arrayValue?.contains(where: { inStacktrace($0["stacktrace"]) }) == true { return true }
        }
        return inStacktrace(event["stacktrace"])
    }

    /// The event without any frame's `vars`, or nil when no frame had any (nothing to rewrite).
    /// Frames are where Sentry puts them: the exceptions', the threads' and a top-level stacktrace.
    static func stripped(_ event: JSONValue) -> JSONValue? {
        guard case .object(var top) = event else { return nil }
        var removed = false
        for key in ["exception", "threads"] {
            guard case .object(var container)? = top[key], case .array(var values)? = container["values"] else { continue }
            for i in values.indices {
                guard case .object(var value) = values[i], let st = value["stacktrace"], let clean = strippedStacktrace(st) else { continue }
                value["stacktrace"] = clean
                values[i] = .object(value)
                removed = true
            }
            container["values"] = .array(values)
            top[key] = .object(container)
        }
        if let st = top["stacktrace"], let clean = strippedStacktrace(st) {
            top["stacktrace"] = clean
            removed = true
        }
        return removed ? .object(top) : nil
    }

    private static func strippedStacktrace(_ stacktrace: JSONValue) -> JSONValue? {
        guard case .object(var st) = stacktrace, case .array(var frames)? = st["frames"] else { return nil }
        var removed = false
        for i in frames.indices {
            guard case .object(var frame) = frames[i], frame["vars"] != nil else { continue }
            frame["vars"] = nil
            frames[i] = .object(frame)
            removed = true
        }
        guard removed else { return nil }
        st["frames"] = .array(frames)
        return .object(st)
    }
}
