// libFuzzer target: the minidump reader (an uploaded dump is hostile input), then the stackwalker
// over what it read and the event built from the walk. The walk is given this machine's own
// libraries for modules named like them (the seeds are dumps made here, so libc and the loader
// are found), so libdwfl evaluates their CFI over the fuzzed stack memory and registers.
import FaultlineProtocol

#if canImport(Glibc)
    import Glibc
#endif

let systemLibraries = ModuleFileLookup { _, path, kind in
    guard kind == .executable, let name = path.split(separator: "/").last, !name.hasPrefix("."), name.utf8.count < 128 else { return nil }
    let candidate = "/lib/x86_64-linux-gnu/" + name
    return access(candidate, R_OK) == 0 ? candidate : nil
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMinidump(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let dump = try? Minidump(bytes: bytes) else { return 0 }
    var limits = MinidumpStackwalker.Limits()
    limits.maxThreads = 64
    limits.maxFramesPerThread = 64
    let walk = MinidumpStackwalker(lookup: systemLibraries, limits: limits).walk(dump)
    for t in walk.threads { precondition(t.frames.count <= limits.maxFramesPerThread, "frame limit broken") }
    _ = MinidumpEvent.make(dump: dump, walk: walk, eventID: "0", timestamp: 0).serialized()
    return 0
}
