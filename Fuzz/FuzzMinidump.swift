// libFuzzer target: the minidump reader (an uploaded dump is hostile input), then the stackwalker
// over what it read (libdwfl with the dump's memory, frame pointers, stack scanning) and the event
// built from the walk.
import FaultlineProtocol

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMinidump(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let dump = try? Minidump(bytes: bytes) else { return 0 }
    var limits = MinidumpStackwalker.Limits()
    limits.maxThreads = 64
    limits.maxFramesPerThread = 64
    let walk = MinidumpStackwalker(limits: limits).walk(dump)
    for t in walk.threads { precondition(t.frames.count <= limits.maxFramesPerThread, "frame limit broken") }
    _ = MinidumpEvent.make(dump: dump, walk: walk, eventID: "0", timestamp: 0).serialized()
    return 0
}
