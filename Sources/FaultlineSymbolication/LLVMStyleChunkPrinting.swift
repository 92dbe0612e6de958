// Address mode's printing of a large input on two threads: in turns of a chunk of lines each,
// every chunk written as soon as the one before it, each thread reusing one chunk's memory.
import Dispatch

extension LLVMStyleSymbolizer {
    /// Address mode's text printed by two threads in turns: chunk k (lines k·n ..< (k+1)·n) by
    /// thread k % 2, written after chunk k - 1. Each thread waits for its turn only to write;
    /// its turn comes when the other thread has written the chunk before.
    final class ChunkPrinting: @unchecked Sendable {
        static let linesPerChunk = 4096
        let write: (UnsafeRawBufferPointer) -> Void
        let index: DWARFIndex?
        let isAddress: [Bool]
        let found: FoundFrames
        let demangle: Bool, demangleSwift: Bool
        let functionNames: FunctionNameKind
        let lines: Int
        /// Signalled by thread 1 - t when a chunk before thread t's next one was written.
        let turn = [DispatchSemaphore(value: 0), DispatchSemaphore(value: 0)]
        var first = Summary(), second = Summary()  // one per thread

        init(
            _ s: LLVMStyleSymbolizer, _ write: @escaping (UnsafeRawBufferPointer) -> Void, _ index: DWARFIndex?, _ isAddress: [Bool],
            _ found: FoundFrames, lines: Int
        ) {
            self.write = write; self.index = index; self.isAddress = isAddress
            self.found = found
            demangle = s.demangle; demangleSwift = s.demangleSwift; functionNames = s.functionNames
            self.lines = lines
        }

        /// Prints and writes thread `t`'s chunks (t is 0 or 1; both must run at once).
        func printChunks(of t: Int) {
            let n = ChunkPrinting.linesPerChunk
            var output = OutputBuffer(holding: 1 << 20)
            var printer = LLVMStyleFramePrinter(index: index, demangle: demangle, demangleSwift: demangleSwift, functionNames: functionNames)
            var summary = Summary()
            var k = t
            while k * n < lines {
                summary.add(printer.print((k * n)..<min(lines, (k + 1) * n), isAddress, found, into: &output))
                if k > 0 { turn[t].wait() }
                output.handOver(write)
                turn[1 - t].signal()
                k += 2
            }
            if t == 0 { first = summary } else { second = summary }
        }
    }
}
