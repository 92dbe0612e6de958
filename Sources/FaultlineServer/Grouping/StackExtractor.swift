// Finds the crashing stack in a Sentry event and maps each frame to (build-id, module offset).
import Foundation
import FaultlineProtocol

public enum StackExtractor {
    /// How many innermost frames grouping keeps (in-app ones, or all when none is in-app).
    public static let groupingDepth = 16

    /// The crashing stacktrace's frames, innermost first, with their modules resolved — read by
    /// FaultlineProtocol's `SentryStackTrace`, as the CLI's symbolicator reads them. One entry per
    /// frame, so renderers can map back.
    public static func frames(of event: JSONValue, grouping: GroupingConfig = .v1) -> (exceptionType: String, frames: [StackFrame]) {
        let (excType, crashing) = SentryStackTrace.crashing(in: event)
        // Rules 4: no crashing stack, but the current thread's (a message sent with a stack).
        let current =
            grouping.rawValue >= GroupingConfig.v4.rawValue
            ? event["threads"]?["values"]?.arrayValue?.first { $0["current"]?.boolValue == true && $0["stacktrace"]?["frames"] != nil }?["stacktrace"]
            : nil
        guard let stacktrace = crashing ?? current else { return (excType, []) }
        let read = SentryStackTrace.frames(of: stacktrace, images: DebugImageMap(event: event))
        // By index: each frame is read where it lies, not copied first (a copy retains its strings).
        var out: [StackFrame] = []
        out.reserveCapacity(read.count)
        for i in read.indices.reversed() { out.append(frame(read[i], grouping: grouping)) }
        return (excType, out)
    }

    /// The same frames, each with its JSON as the client sent it (what a page shows beyond what
    /// grouping reads: a non-native frame's file, line and source context).
    public static func framesWithJSON(of event: JSONValue) -> [(frame: StackFrame, json: JSONValue)] {
        let (_, stacktrace) = SentryStackTrace.crashing(in: event)
        guard let stacktrace else { return [] }
        return framesWithJSON(of: stacktrace, images: DebugImageMap(event: event))
    }

    /// Any stacktrace of the event (another thread's), innermost first.
    public static func framesWithJSON(of stacktrace: JSONValue, images: DebugImageMap) -> [(frame: StackFrame, json: JSONValue)] {
        SentryStackTrace.frames(of: stacktrace, images: images).reversed().map { (frame($0), $0.json) }
    }

    static func frame(_ f: SentryStackTrace.Frame, grouping: GroupingConfig = .v1) -> StackFrame {
        let clientFunction = f.json["function"]?.stringValue
        let module = f.image?.codeFile ?? f.json["package"]?.stringValue
        let own = FaultlineOwnFrames.isMarked(f.json) || module.map(FaultlineOwnFrames.isOwn(modulePath:)) ?? false
        guard let address = f.address else {
            var frame = StackFrame(
                buildID: nil, offset: 0, isReturnAddress: false, inApp: !own && (f.json["in_app"]?.boolValue ?? false),
                module: f.json["package"]?.stringValue, clientFunction: clientFunction)
            frame.isFaultline = own
            if grouping != .v1 { frame.sourceModule = sourceModule(of: f.json, scriptsByName: grouping.rawValue >= GroupingConfig.v3.rawValue) }
            if grouping.rawValue >= GroupingConfig.v4.rawValue, clientFunction?.isEmpty ?? true, frame.sourceModule != nil {
                frame.sourceLine = sourceLine(of: f.json)
            }
            return frame
        }
        let inApp = !own && (f.json["in_app"]?.boolValue ?? module.map(isInApp) ?? false)
        // Without a known image, the frame's own image_addr (if below the address) still gives an offset.
        let addr = address.address.value
        let base = f.image?.base.value ?? f.imageAddress ?? 0
        var frame = StackFrame(
            buildID: f.image?.buildID, offset: addr >= base ? addr - base : addr, isReturnAddress: address.isReturnAddress,
            inApp: inApp, module: module, clientFunction: clientFunction, isAsync: f.isAsync)
        frame.architecture = f.architecture
        frame.isFaultline = own
        return frame
    }

    /// The frames grouping keeps: innermost in-app frames, or innermost frames when none is in-app,
    /// under the project's grouping rules.
    public static func signature(of event: JSONValue, grouping: GroupingConfig) -> StackSignature {
        var signature = defaultSignature(of: event, grouping: grouping)
        signature.clientFingerprint = clientFingerprint(of: event)
        signature.dropsRustHashes = grouping.rawValue >= GroupingConfig.v3.rawValue
        if grouping.rawValue >= GroupingConfig.v4.rawValue, let chain = event["exception"]?["values"]?.arrayValue, chain.count > 1 {
            // Rules 4: the exceptions that caused the crashing one (the last) group too, as Sentry
            // hashes the whole chain: one wrapper raised from two causes is two problems.
            signature.causes = chain.dropLast().suffix(8).map { String(($0["type"]?.stringValue ?? "").prefix(200)) }
        }
        return signature
    }

    /// The SDK's `fingerprint`: at most 16 strings of at most 200 bytes (numbers are read as
    /// their text, as Sentry does); anything else is ignored and the default grouping applies.
    static func clientFingerprint(of event: JSONValue) -> [String] {
        guard let list = event["fingerprint"]?.arrayValue, !list.isEmpty, list.count <= 16 else { return [] }
        let parts = list.compactMap { v -> String? in v.stringValue ?? v.int64Value.map(String.init) }
        guard parts.count == list.count, parts.allSatisfy({ !$0.isEmpty && $0.utf8.count <= 200 }) else { return [] }
        return parts
    }

    /// A non-native frame's module as the SDK names it (`app.billing`), else its file (never its
    /// absolute path: the same code deployed in two places is one issue), at most 200 bytes; with
    /// `scriptsByName` (rules 3) a file that is a URL by the script's stable name (`ScriptURLName`).
    static func sourceModule(of json: JSONValue, scriptsByName: Bool = false) -> String? {
        if let m = json["module"]?.stringValue, !m.isEmpty { return String(m.prefix(200)) }
        if let f = json["filename"]?.stringValue, !f.isEmpty {
            if scriptsByName, let name = ScriptURLName.of(f) { return String(name.prefix(200)) }
            return String(f.prefix(200))
        }
        return nil
    }

    /// A frame's `context_line`, trimmed, when it is short enough to be code rather than a
    /// minified bundle's whole line; nil otherwise (the frame then groups by its file alone).
    static func sourceLine(of json: JSONValue) -> String {
        let line = (json["context_line"]?.stringValue ?? "").trimmingCharacters(in: .whitespaces)
        return line.utf8.count <= 120 ? line : ""
    }

    static func defaultSignature(of event: JSONValue, grouping: GroupingConfig) -> StackSignature {
        let (type, raw) = frames(of: event, grouping: grouping)
        // Faultline's own frames never group an issue nor name its culprit. Under rules 4 a frame
        // with only its file and source line counts too.
        func isKept(_ i: Int) -> Bool {
            !raw[i].isFaultline && (raw[i].buildID != nil || raw[i].offset != 0 || raw[i].clientFunction != nil || raw[i].sourceLine != nil)
        }
        // By index, and one copy of the frames chosen (each copy retains every frame's strings).
        let anyInApp = raw.indices.contains { isKept($0) && raw[$0].inApp }
        var chosen: [StackFrame] = []
        for i in raw.indices where isKept(i) && (!anyInApp || raw[i].inApp) {
            chosen.append(raw[i])
            if chosen.count == groupingDepth { break }
        }
        if chosen.isEmpty && type.isEmpty, let message = messageGroup(of: event) {
            return StackSignature(exceptionType: "", frames: [], headline: firstLine(message.text, isMessage: true), messageGroup: message.group)
        }
        // Rules 4: an exception without a stack by its type and its value's pattern (a typeless
        // one, as older browser SDKs send, by its value alone).
        if chosen.isEmpty, grouping.rawValue >= GroupingConfig.v4.rawValue,
            let value = event["exception"]?["values"]?.arrayValue?.last?["value"]?.stringValue, !value.isEmpty
        {
            return StackSignature(
                exceptionType: type, frames: [], headline: firstLine(value),
                messageGroup: "exception:" + LogLineNormaliser.pattern(String(value.prefix(1000))))
        }
        return StackSignature(exceptionType: type, frames: chosen, headline: headline(of: event))
    }

    /// What groups a message event (no stack, no exception): its template when the SDK sent one
    /// (`logentry.message`, before formatting: `payment failed for order %s`), else its text with
    /// numbers, ids, hex and quoted values normalised (LogLineNormaliser, the log patterns' rule).
    /// Two templates are two issues; one template with different values is one.
    static func messageGroup(of event: JSONValue) -> (group: String, text: String)? {
        let entry = event["logentry"] ?? event["message"]
        let template = entry?["message"]?.stringValue
        let formatted =
            entry?["formatted"]?.stringValue ?? event["message"]?.stringValue
            ?? template.flatMap { t in entry?["params"]?.arrayValue.map { LogEntryText.formatted(t, params: $0) } }
        if let t = template, !t.isEmpty { return ("template:" + String(t.prefix(1000)), formatted ?? t) }
        if let f = formatted, !f.isEmpty { return ("pattern:" + LogLineNormaliser.pattern(String(f.prefix(1000))), f) }
        return nil
    }

    /// What a message event (or an event's message beside its exception) said: the SDK's
    /// formatted text, else its template; nil when it sent none.
    public static func messageText(of event: JSONValue) -> String? {
        messageGroup(of: event)?.text
    }

    /// A title's line: the first, at most 120 characters, its credentials filtered (SensitiveData:
    /// `https://svc:pw@api/…` in an error message would otherwise be the title everywhere);
    /// a message's also with its card numbers, IBANs, SSNs and email addresses named, as its event
    /// shows them (an exception's value keeps them, as Relay leaves it).
    static func firstLine(_ text: String, isMessage: Bool = false) -> String {
        var line = text.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        line = isMessage ? SensitiveData.scrubbedMessage(line) : (SensitiveData.scrubbedString(line) ?? line)
        return line.count > 120 ? String(line.prefix(119)) + "…" : line
    }

    /// The exception's value when it says why (a crash message, or an error's description) —
    /// not a bare signal's "SIGSEGV / SEGV_MAPERR at 0x10". First line, at most 120 characters.
    static func headline(of event: JSONValue) -> String {
        guard let exception = event["exception"]?["values"]?.arrayValue?.last else {
            // No exception: a message sent with a stack (sentry-php's captureMessage with
            // attach_stacktrace, any SDK's attach_stacktrace) is titled by what it said.
            return messageText(of: event).map { firstLine($0, isMessage: true) } ?? ""
        }
        guard let value = exception["value"]?.stringValue, !value.isEmpty else { return "" }
        let mechanism = exception["mechanism"]
        // A signal's value (ours, or a minidump's exception stream) only restates the type.
        let signal = ["signalhandler", "minidump"].contains(mechanism?["type"]?.stringValue ?? "")
        if signal && mechanism?["data"]?["message_source"] == nil { return "" }
        return firstLine(value)
    }

    /// Same rule as the SDK (CrashEvent.isInApp) when the client did not say.
    static func isInApp(_ path: String) -> Bool {
        CrashEvent.isInApp(modulePath: path, executable: "")
    }
}
