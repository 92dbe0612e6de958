// libFuzzer target: what the server reads from an uploaded file — the ELF summary (ELFInfo.read:
// magic, class, sections, build-id note, compressed DWARF) and, for a readable file, the DWARF
// index the backfill builds (DWARFIndexBuilder over libdw), its in-memory form and its stored form,
// the lazy path's pread unit scan (UnitTableFileScan.swift) and a partial build of one unit.
import Foundation
import FaultlineProtocol

nonisolated(unsafe) let fuzzPath = NSTemporaryDirectory() + "/faultline-fuzz-elf-\(getpid())"

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzELF(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let fd = open(fuzzPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    guard fd >= 0 else { return 0 }
    var off = 0
    while off < size { let n = write(fd, data + off, size - off); if n <= 0 { break }; off += n }
    close(fd)
    guard let info = try? ELFInfo.read(path: fuzzPath) else { return 0 }
    _ = info.buildID?.debugID
    guard let handle = try? ELFHandle(path: fuzzPath) else { return 0 }
    // The lazy path's unit scan reads root DIEs and range lists with its own parser (pread).
    let units = UnitTable.scanWithoutMapping(handle) ?? UnitTable.scan(handle.elf)
    // A partial build of the last unit reads it through a view of .debug_info that starts there,
    // after its abbreviations are read by hand (DebugInfoView.swift), or is sent back to the file.
    if let last = units?.offsets.last, last > 0 {
        _ = DWARFIndexBuilder.build(debugFile: handle, symbolSources: [handle], units: [last], symbolsForUnitsOnly: true)
    }
    let tables = DWARFIndexBuilder.build(debugFile: handle, symbolSources: [handle])
    if let index = DWARFIndex.inMemory(consume tables, buildID: info.buildID) {
        // The stored form: the tables streamed in the file layout, checksum summed on the way.
        let sink = open("/dev/null", O_WRONLY | O_CLOEXEC)
        if sink >= 0 { _ = index.write(to: sink); close(sink) }
    }
    return 0
}
