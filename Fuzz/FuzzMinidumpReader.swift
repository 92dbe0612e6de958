// libFuzzer target: the minidump reader alone — every stream an uploaded dump may carry parsed and
// each value a stackwalk would consult read back (start contexts, module lookups, memory reads
// around each stack pointer, the Linux streams' derived views). The `minidump` target drives the
// stackwalker too, at a small fraction of this target's speed; this one gives the parser, which
// never trusts an offset, the execution count.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMinidumpReader(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let dump = try? Minidump(bytes: bytes) else { return 0 }
    precondition(dump.byteCount == size, "the dump's size is the input's")
    _ = dump.crashingThread
    for thread in dump.threads.prefix(64) {
        let context = dump.startContext(of: thread)
        guard let sp = context.amd64?.rsp else { continue }
        if let pc = context.instructionPointer { _ = dump.module(containing: pc) }
        for offset in stride(from: 0 as UInt64, to: 512, by: 8) {
            if let word = dump.memory.readWord(sp &+ offset) { _ = dump.module(containing: word) }
        }
        if let stack = dump.memory.read(address: sp, count: 256) { precondition(stack.count == 256, "a read returns what it was asked for") }
    }
    _ = dump.linux.lsbFields
    _ = dump.linux.executableRanges
    _ = dump.crashpadInfo?.moduleAnnotations.count
    return 0
}
