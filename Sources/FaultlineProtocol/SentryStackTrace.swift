// Reading stack traces out of Sentry events, once for the CLI's symbolicator and the server's
// grouping: which stack crashed, each frame's address (program counter or return address) and the
// image it lies in.
import FoundationEssentials

public enum SentryStackTrace {
    /// One frame of a `stacktrace.frames` array.
    public struct Frame: Sendable {
        /// Position in the frames array (caller-first, Sentry's order).
        public var index: Int
        /// nil when the frame has no address, or address 0 (e.g. an "N frames omitted" marker).
        public var address: FrameAddress?
        /// The image the address lies in (`DebugImageMap`'s rules), if any.
        public var image: DebugImage?
        /// The frame's own `image_addr`, even when no image starts there.
        public var imageAddress: UInt64?
        /// The frame as the event has it.
        public var json: JSONValue
        /// The architecture its code ran on: its image's `arch`, else the event's. It says how
        /// far back from a return address the call lies (`FrameAddress.lookupAddress(on:)`).
        public var architecture: CPUArchitecture
        /// A Swift async frame (`data.faultline_async`): its address is a resume function's entry,
        /// exact like a program counter, whatever `instruction_addr_adjustment` says.
        public var isAsync: Bool { json["data"]?["faultline_async"]?.boolValue == true }

        /// Address relative to its image's base: what debug files are indexed by.
        public var moduleOffset: UInt64? {
            guard let address, let image else { return nil }
            return address.address.value &- image.base.value
        }
    }

    /// Marks a frame other than the innermost whose address is an instruction the signal
    /// interrupted (above a signal frame), not a return address: `data.faultline_pc`, read as a
    /// program counter whatever `instruction_addr_adjustment` says, as an async frame is.
    public static let programCounterMarker = "faultline_pc"

    public static func markProgramCounter(_ frame: inout JSONObject) {
        var data = frame["data"]?.objectValue ?? [:]
        data[programCounterMarker] = true
        frame["data"] = .object(data)
    }

    /// The frames of one `stacktrace` object, caller-first, minus frames a symbolicator added for
    /// inlined calls (`data.faultline_inlined`), so reading a symbolicated event again gives the
    /// client's frames.
    ///
    /// `instruction_addr_adjustment`: `all` makes every frame a return address, `none` none;
    /// otherwise (`auto`, `all_but_first`, absent) the innermost frame — the last one — is the
    /// program counter and every other frame a return address.
    public static func frames(of stacktrace: JSONValue, images: DebugImageMap) -> [Frame] {
        let all = stacktrace["frames"]?.arrayValue ?? []
        // Read in place (no filtered copy of the array): every ingested event comes here.
        let clients = all.indices.filter { all[$0]["data"]?["faultline_inlined"]?.boolValue != true }
        // Decided once per stack, not once per frame.
        let everyFrame: Bool? =
            switch stacktrace["instruction_addr_adjustment"]?.stringValue {
            case "all"?: true
            case "none"?: false
            default: nil
            }
        var out: [Frame] = []
        out.reserveCapacity(clients.count)
        for (i, position) in clients.enumerated() {
            let f = all[position]
            let imageAddress = address(f["image_addr"])
            guard let addr = address(f["instruction_addr"]), addr != 0 else {
                out.append(Frame(index: i, address: nil, image: nil, imageAddress: imageAddress, json: f, architecture: images.architecture))
                continue
            }
            var isReturn = everyFrame ?? (i != clients.count - 1)
            if f["data"]?["faultline_async"]?.boolValue == true || f["data"]?[programCounterMarker]?.boolValue == true { isReturn = false }
            let a = Address(addr)
            let image = images.image(for: addr, imageAddress: imageAddress)
            out.append(
                Frame(
                    index: i, address: isReturn ? .returnAddress(a) : .programCounter(a),
                    image: image, imageAddress: imageAddress, json: f, architecture: image?.architecture ?? images.architecture))
        }
        return out
    }

    /// The crashing stack: the last exception value's, else the crashed thread's, else the
    /// event's top-level `stacktrace`; with the exception type (empty when there is none).
    public static func crashing(in event: JSONValue) -> (exceptionType: String, stacktrace: JSONValue?) {
        var type = ""
        var stacktrace: JSONValue?
        if let values = event["exception"]?["values"]?.arrayValue, let last = values.last {
            type = last["type"]?.stringValue ?? ""
            stacktrace = last["stacktrace"]
        }
        if stacktrace?["frames"] == nil, let threads = event["threads"]?["values"]?.arrayValue {
            stacktrace = threads.first(where: { $0["crashed"]?.boolValue == true && $0["stacktrace"] != nil })?["stacktrace"]
        }
        if stacktrace?["frames"] == nil { stacktrace = event["stacktrace"] }
        return (type, stacktrace?["frames"] == nil ? nil : stacktrace)
    }

    /// Sentry writes addresses as "0x…" strings; non-negative integers (also whole-number
    /// doubles) are accepted too. Anything else is no address.
    public static func address(_ v: JSONValue?) -> UInt64? {
        guard let v else { return nil }
        if let s = v.stringValue { return Address(string: s)?.value }
        if let i = v.int64Value, i >= 0 { return UInt64(i) }
        return nil
    }
}
