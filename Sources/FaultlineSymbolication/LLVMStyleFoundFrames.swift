// Address mode's lookup results: the frames of every input line, as the lookup threads left them.

extension LLVMStyleSymbolizer {
    /// The frames both lookup threads found, read as one array (`first` then `second`) without
    /// the copy that joining them would be; `slices[line]` says which are an input line's (an
    /// empty slice when nothing is known). The slices are handed to the printers as they are,
    /// not copied into an array (a copy is its pages faulted in again).
    final class FoundFrames: @unchecked Sendable {
        var first: [IndexedFrame] = []
        var second: [IndexedFrame] = []
        let slices: UnsafeMutableBufferPointer<(start: Int32, count: Int32)>

        init(lines: Int) {
            slices = .allocate(capacity: lines)
            slices.initialize(repeating: (0, 0))
        }

        deinit { slices.deallocate() }
    }
}
