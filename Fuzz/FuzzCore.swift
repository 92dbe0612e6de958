// libFuzzer target: a Linux core file as `faultline coredump` reads it from the kernel's pipe and
// `faultline symbolicate` from disk — the ELF and program headers, the notes (threads and their
// registers, siginfo, psinfo, the file list, auxv), the reduced copy the pipe handler spools, and
// the crash report made of the notes, which must always read back as a crash report.
import Foundation
import FaultlineProtocol

// In memory when /dev/shm is there: two files per input otherwise cost most of the run.
nonisolated(unsafe) let fuzzDirectory = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : NSTemporaryDirectory()
nonisolated(unsafe) let fuzzInput = fuzzDirectory + "/faultline-fuzz-core-in-\(getpid())"
nonisolated(unsafe) let fuzzSpool = fuzzDirectory + "/faultline-fuzz-core-spool-\(getpid())"

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCore(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    _ = CoreLayout.isCore(prefix: bytes)
    if let layout = try? CoreLayout.parse(prefix: bytes) {
        var notes = CoreNotes()
        for s in layout.segments where s.isNote && s.offset < UInt64(size) {
            let end = min(UInt64(size), s.offset &+ min(s.fileSize, UInt64(size)))
            if end > s.offset { notes.add(segment: Array(bytes[Int(s.offset)..<Int(end)])) }
        }
        checkReport(notes)
    }
    spool(bytes)
    return 0
}

/// The report of whatever the notes hold must be a readable crash report.
func checkReport(_ notes: CoreNotes) {
    let stacks = notes.threads.map { t in
        CoreThreadStack(
            tid: t.tid, frames: [.programCounter(Address(t.programCounter)), .returnAddress(Address(t.stackPointer))], framesWalked: 2, stoppedBy: "end")
    }
    let modules = notes.mappings.prefix(64).map { CoreModule(path: $0.path, base: Address($0.start), size: $0.end &- $0.start, buildID: nil) }
    let hints = CoreReportHints(tid: notes.threads.last?.tid, threadName: notes.process?.name)
    guard
        let json = try? CoreCrashReport.json(
            notes: notes, stacks: stacks, modules: modules, hints: hints, eventID: CoreCrashReport.newEventID(), timestamp: 1,
            provenance: CoreCrashReport.Provenance(source: "fuzz"))
    else {
        precondition(notes.threads.isEmpty, "a core with threads made no report")
        return
    }
    do {
        let report = try CrashReport.parse(json.serialized())
        precondition(report.threadID == (hints.tid ?? 0) || notes.threads.first?.tid == report.threadID, "the crashing thread changed")
    } catch {
        preconditionFailure("the report of a core does not read back: \(error)")
    }
}

/// The pipe handler's streaming copy, from a file standing in for the pipe.
func spool(_ bytes: [UInt8]) {
    let fd = open(fuzzInput, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    guard fd >= 0 else { return }
    defer { close(fd) }
    var off = 0
    while off < bytes.count {
        let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + off, bytes.count - off) }
        if n <= 0 { return }
        off += n
    }
    lseek(fd, 0, SEEK_SET)
    unlink(fuzzSpool)
    var limits = ReducedCoreLimits()
    limits.maximumKeptBytes = 1 << 20
    let stream = CoreStream(fd: fd, deadline: .now + .seconds(5), chunkSize: 4096)
    if let reduced = try? ReducedCoreSpool.spool(from: stream, to: fuzzSpool, limits: limits) {
        precondition(reduced.bytesRead <= UInt64(bytes.count), "read more than the input")
        precondition(reduced.notes.threads.count <= bytes.count / CoreNotes.prstatusSize, "more threads than the input holds")
    }
    unlink(fuzzSpool)
}
