// Walks every thread of a minidump out of process: libdwfl with call-frame information from the
// module files the caller finds, then frame pointers, then stack scanning, as Breakpad and
// Sentry's symbolicator do.

/// Walks a dump's threads. Each frame says how it was found (`FrameTrust`).
///
/// Per thread: the first frame is the saved program counter (`context`); libdwfl unwinds with the
/// modules' CFI (`cfi`) for as long as it can; where it stops, one frame is recovered from the
/// frame-pointer chain (`fp`) or, failing that, by scanning the stack for a return address
/// (`scan`), and libdwfl resumes from there. Bounded by `Limits` (per thread and for the whole
/// dump); a frame whose stack pointer does not move up the stack ends the walk, so cyclic stacks
/// terminate.
public struct MinidumpStackwalker: Sendable {
    public struct Limits: Sendable {
        /// Frames kept per thread (Sentry and Breakpad stop at a few hundred too).
        public var maxFramesPerThread = 256
        /// Threads walked (the crashing one always among them); the rest are counted in
        /// `threadsOmitted`. The event lists each walked thread, so this bounds what a page shows.
        public var maxThreads = 256
        /// Stack words a scan looks at for one return address.
        public var scanWords = 64
        /// Distinct builds whose files are asked of the lookup and opened (the rest walk without CFI).
        public var maxModuleFiles = 1024
        /// Frames of all threads together, so a dump of many deep threads stays an event of a few
        /// megabytes. The crashing thread is walked first; each thread keeps at least its context frame.
        public var maxTotalFrames = 16_384
        public init() {}
    }

    public var lookup: ModuleFileLookup
    public var limits: Limits

    public init(lookup: ModuleFileLookup = .none, limits: Limits = Limits()) {
        self.lookup = lookup; self.limits = limits
    }

    /// Walks every thread (the crashing one from the exception's registers). Past `maxThreads`,
    /// the crashing thread still is walked, in the last place's stead.
    public func walk(_ dump: Minidump) -> MinidumpStackwalk {
        let session = UnwindSession(dump: dump, lookup: lookup, limits: limits)
        defer { session.close() }
        var selected = Array(dump.threads.indices.prefix(max(1, limits.maxThreads)))
        let crashed = dump.exception.flatMap { e in dump.threads.firstIndex { $0.id == e.threadID } }
        if let crashed, let last = selected.last, crashed > last { selected[selected.count - 1] = crashed }
        let order = crashed.map { c in selected.contains(c) ? [c] + selected.filter { $0 != c } : selected } ?? selected
        var walked: [Int: WalkedThread] = [:]
        var budget = limits.maxTotalFrames
        for i in order {
            let t = session.walk(dump.threads[i], maxFrames: max(1, min(limits.maxFramesPerThread, budget)))
            budget -= t.frames.count
            walked[i] = t
        }
        var threads = selected.compactMap { walked[$0] }
        // An exception naming a thread the list lacks still carries the crash's registers: that
        // thread is walked from them, first, rather than the crash losing its stack.
        if crashed == nil, let e = dump.exception, let context = e.context {
            let unlisted = MinidumpThread(id: e.threadID, name: nil, stackStart: 0, stackSize: 0, context: context)
            threads.insert(session.walk(unlisted, maxFrames: max(1, min(limits.maxFramesPerThread, budget))), at: 0)
        }
        return MinidumpStackwalk(threads: threads, threadsOmitted: dump.threads.count - selected.count)
    }
}
