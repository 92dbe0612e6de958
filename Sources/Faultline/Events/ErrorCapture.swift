// Captured errors: a Swift Error the app survived, with the current thread's stack, as a
// non-fatal event. Frames are symbolicated later (server or `faultline symbolicate`), never here.
import FaultlineCrashPickup
import CFaultlineCrash
import Foundation
import FaultlineProtocol

extension Faultline {
    /// Records `error` as a non-fatal event with the calling thread's stack and recent breadcrumbs.
    /// Returns the event id once the event is on disk in the outbox (it is sent from there, now
    /// or at a later launch); nil when the SDK is not started or the event could not be written
    /// (a full disk: the loss is counted in `droppedCounts`).
    @discardableResult
    public static func capture(
        _ error: any Error, attributes: [String: AttributeValue] = [:],
        file: StaticString = #fileID, line: UInt = #line
    ) -> String? {
        // Taken on the calling thread before anything else, so the stack is the caller's.
        let returnAddresses = Thread.callStackReturnAddresses.map { $0.uint64Value }
        let state = SDKState.shared
        guard let outbox = state.currentOutbox, let context = state.context else { return nil }
        let modules = ModuleSnapshot.current()
        let eventID = newEventID()

        // Drop our own frames (capture and callStackReturnAddresses) so the top is the caller.
        let ownFrames = 2
        let imageMap = DebugImageMap(modules)
        let executable = modules.first?.codeFile ?? ""
        let frames: [JSONValue] = returnAddresses.dropFirst(min(ownFrames, max(0, returnAddresses.count - 1))).map { addr in
            var f: JSONObject = ["instruction_addr": .string(Address(addr).hex)]
            if let m = imageMap.image(containing: addr), let path = m.codeFile {
                f["package"] = .string(path)
                f["image_addr"] = .string(m.base.hex)
                f["in_app"] = .bool(CrashEvent.isInApp(modulePath: path, executable: executable))
                if FaultlineOwnFrames.isOwn(modulePath: path) { FaultlineOwnFrames.mark(&f) }
            }
            return .object(f)
        }.reversed()

        var extra: [String: JSONValue] = [:]
        for (k, v) in attributes { extra[k] = v.json }
        extra["code.filepath"] = .string(file.description)
        extra["code.lineno"] = .int(Int64(line))
        var event = context.eventBase(eventID: eventID, level: "error")
        let stacktrace: JSONValue = ["frames": .array(frames), "instruction_addr_adjustment": "all"]
        event["exception"] = ["values": .array(CapturedErrorChain.exceptionValues(of: error, stacktrace: stacktrace))]
        event["threads"] = [
            "values": [
                [
                    "id": .int(Int64(faultline_current_thread_id())), "current": true, "crashed": false,
                    "name": .string(Thread.current.name ?? "")
                ]
            ]
        ]
        event["debug_meta"] = ["images": .array(modules.map(\.json))]
        event["breadcrumbs"] = ["values": .array(BreadcrumbStore.shared.snapshot)]
        event["extra"] = .object(extra)
        if let c = Trace.current, var contexts = event["contexts"]?.objectValue {
            // The span the error happened in, so the server links the occurrence to its trace.
            var trace: [String: JSONValue] = ["type": "trace", "trace_id": .string(c.traceID.hex), "span_id": .string(c.spanID.hex)]
            if let p = c.span?.parentSpanID { trace["parent_span_id"] = .string(p.hex) }
            if let s = c.span { trace["op"] = .string(s.operation); trace["description"] = .string(s.name) }
            contexts["trace"] = .object(trace)
            event["contexts"] = .object(contexts)
        }
        let envelope = Envelope(
            header: Faultline.envelopeHeader(eventID: eventID, dsn: state.dsn),
            items: [Envelope.Item(type: "event", payload: JSONValue.object(event).serialized())])
        guard outbox.enqueue(envelope) else { return nil }
        if !SDKState.shared.isForkedChild { SessionTracker.shared.recordError() }
        Worker.shared?.wake()
        return eventID
    }
}

extension ScopeContext {
    /// Fields every event of this process carries.
    func eventBase(eventID: String, level: String) -> [String: JSONValue] {
        var skeleton = EventSkeleton(eventID: eventID, timestamp: Date().timeIntervalSince1970, level: level, sdkName: Faultline.sdkName)
        skeleton.serverName = serverName
        skeleton.release = release
        skeleton.environment = environment
        skeleton.installID = installID
        if !SDKState.shared.isForkedChild { skeleton.tags["session_id"] = .string(sessionID) }
        if let s = service { skeleton.tags["service"] = .string(s) }
        var app: [String: JSONValue] = ["type": "app"]
        if let a = appID { app["app_identifier"] = .string(a) }
        skeleton.contexts = [
            "os": CrashContext.osContext(kernelVersion: Self.kernelVersion), "app": .object(app),
            "trace": CrashContext.Trace(traceID: traceID, spanID: String(newEventID().prefix(16))).json
        ]
        return skeleton.fields
    }
}
