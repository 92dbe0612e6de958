// Finds the crashing stack in a Sentry event and maps each frame to (build-id, module offset).
import Foundation
import FaultlineProtocol

public enum StackExtractor {
    /// How many innermost frames grouping keeps (in-app ones, or all when none is in-app).
    public static let groupingDepth = 16

    struct Image { let base: UInt64; let size: UInt64; let buildID: BuildID?; let path: String? }

    /// The crashing stacktrace's frames, innermost first, with their modules resolved.
    public static func frames(of event: JSONValue) -> (exceptionType: String, frames: [StackFrame]) {
        // Sorted by base with an index by base: lookups stay O(log n) even for hostile events with
        // thousands of images and frames.
        let images = (event["debug_meta"]?["images"]?.arrayValue ?? []).compactMap(image).sorted { $0.base < $1.base }
        let byBase = Dictionary(images.map { ($0.base, $0) }, uniquingKeysWith: { a, _ in a })
        var excType = ""
        var stacktrace: JSONValue?
        if let values = event["exception"]?["values"]?.arrayValue, let last = values.last {
            excType = last["type"]?.stringValue ?? ""
            stacktrace = last["stacktrace"]
        }
        if stacktrace?["frames"] == nil, let threads = event["threads"]?["values"]?.arrayValue {
            stacktrace = threads.first(where: { $0["crashed"]?.boolValue == true && $0["stacktrace"] != nil })?["stacktrace"]
        }
        if stacktrace?["frames"] == nil { stacktrace = event["stacktrace"] }
        guard let raw = stacktrace?["frames"]?.arrayValue else { return (excType, []) }
        let adjustment = stacktrace?["instruction_addr_adjustment"]?.stringValue ?? "auto"
        var out: [StackFrame] = []
        for (i, f) in raw.reversed().enumerated() {
            // One entry per raw frame (index i here is raw index count-1-i), so renderers can map back.
            guard let addr = address(f["instruction_addr"]), addr != 0 else {
                out.append(StackFrame(buildID: nil, offset: 0, isReturnAddress: false, inApp: f["in_app"]?.boolValue ?? false,
                                      module: f["package"]?.stringValue, clientFunction: f["function"]?.stringValue))
                continue
            }
            var isReturn: Bool
            switch adjustment {
            case "all": isReturn = true
            case "none": isReturn = false
            default: isReturn = i > 0
            }
            let isAsync = f["data"]?["faultline_async"]?.boolValue == true
            if isAsync { isReturn = false }  // a resume function's entry, not a return address
            var img: Image?
            if let base = address(f["image_addr"]) { img = byBase[base] }
            if img == nil { img = containing(addr, in: images) }
            let module = img?.path ?? f["package"]?.stringValue
            let inApp = f["in_app"]?.boolValue ?? module.map(isInApp) ?? false
            let base = img?.base ?? address(f["image_addr"]) ?? 0
            out.append(StackFrame(buildID: img?.buildID, offset: addr >= base ? addr - base : addr, isReturnAddress: isReturn,
                                  inApp: inApp, module: module, clientFunction: f["function"]?.stringValue, isAsync: isAsync))
        }
        return (excType, out)
    }

    /// The frames grouping keeps: innermost in-app frames, or innermost frames when none is in-app.
    public static func signature(of event: JSONValue) -> StackSignature {
        let (type, raw) = frames(of: event)
        let all = raw.filter { $0.buildID != nil || $0.offset != 0 || $0.clientFunction != nil }
        let inApp = all.filter(\.inApp)
        let chosen = Array((inApp.isEmpty ? all : inApp).prefix(groupingDepth))
        return StackSignature(exceptionType: type, frames: chosen, headline: headline(of: event))
    }

    /// The exception's value when it says why (a crash message, or an error's description) —
    /// not a bare signal's "SIGSEGV / SEGV_MAPERR at 0x10". First line, at most 120 characters.
    static func headline(of event: JSONValue) -> String {
        guard let exception = event["exception"]?["values"]?.arrayValue?.last,
              let value = exception["value"]?.stringValue, !value.isEmpty else { return "" }
        let mechanism = exception["mechanism"]
        if mechanism?["type"]?.stringValue == "signalhandler" && mechanism?["data"]?["message_source"] == nil { return "" }
        let line = value.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        return line.count > 120 ? String(line.prefix(119)) + "…" : line
    }

    /// The image with the greatest base ≤ addr, if addr lies inside it (binary search).
    static func containing(_ addr: UInt64, in images: [Image]) -> Image? {
        var lo = 0, hi = images.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if images[mid].base <= addr { lo = mid + 1 } else { hi = mid }
        }
        guard lo > 0 else { return nil }
        let i = images[lo - 1]
        return addr < i.base &+ max(i.size, 1) ? i : nil
    }

    static func image(_ v: JSONValue) -> Image? {
        guard let base = address(v["image_addr"]) else { return nil }
        let size = v["image_size"]?.int64Value.map { UInt64(max(0, $0)) } ?? 0
        let buildID = v["code_id"]?.stringValue.flatMap(BuildID.init(hex:))
        return Image(base: base, size: size, buildID: buildID, path: v["code_file"]?.stringValue)
    }

    static func address(_ v: JSONValue?) -> UInt64? {
        guard let v else { return nil }
        if let s = v.stringValue { return Address(string: s)?.value }
        if let i = v.int64Value { return UInt64(bitPattern: i) }
        return nil
    }

    /// Same rule as the SDK (CrashEvent.isInApp) when the client did not say.
    static func isInApp(_ path: String) -> Bool {
        CrashEvent.isInApp(modulePath: path, executable: "")
    }
}
