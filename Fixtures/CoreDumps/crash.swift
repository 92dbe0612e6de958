// Crashes the way the first argument says, for the core-file tests: null, abort, overflow, thread.
import Glibc

@inline(never) func readThrough(_ p: UnsafeMutablePointer<Int>) -> Int { p.pointee + 1 }

@inline(never) func nullDereference() -> Int {
    // Address 16: as near null as a non-optional pointer can be built.
    readThrough(UnsafeMutablePointer<Int>(bitPattern: 16)!) * 2
}

@inline(never) func giveUp() -> Never { abort() }

@inline(never) func recurse(_ depth: Int) -> Int {
    var frame = [UInt8](repeating: UInt8(truncatingIfNeeded: depth), count: 1)
    return withUnsafeMutableBytes(of: &frame) { _ in recurse(depth + 1) } + Int(frame[0])
}

@inline(never) func crashOnSecondThread() {
    var thread = pthread_t()
    pthread_create(&thread, nil, { _ in
        _ = nullDereference()
        return nil
    }, nil)
    pthread_join(thread, nil)
}

switch CommandLine.arguments.dropFirst().first ?? "" {
case "null": print(nullDereference())
case "abort": giveUp()
case "overflow": print(recurse(0))
case "thread": crashOnSecondThread()
default:
    fputs("usage: crash null|abort|overflow|thread\n", stderr)
    exit(2)
}
