// Every thread of a core walked by elfutils' libdwfl: the core's modules reported at their
// addresses (files found by the paths in its NT_FILE note and by build-id, as eu-stack finds
// them), each thread's registers from its NT_PRSTATUS as the first frame, stack memory read from
// the core (`CoreThreadSource`), CFI (.eh_frame, .debug_frame) from the files found.
import FoundationEssentials
import Glibc
import CDw
import FaultlineProtocol

/// Not thread-safe: one thread opens, walks and closes it.
public final class CoreUnwinder {
    private let fd: Int32
    private let elf: OpaquePointer
    private let dwfl: OpaquePointer
    /// libdwfl keeps pointers to the callbacks and to the search path for its whole life.
    private let callbacks: UnsafeMutablePointer<Dwfl_Callbacks>
    private let searchPath: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>
    private let threadCallbacks: UnsafeMutablePointer<Dwfl_Thread_Callbacks>
    private let threadSource: CoreThreadSource

    /// Opens `path` and reports its modules. `executable`: the program's file when the core's
    /// path for it is wrong (moved, another machine's); `debugDirectories` are searched for
    /// separate debug files (their .debug_frame) after /usr/lib/debug.
    public init(corePath path: String, layout: CoreLayout, notes: CoreNotes, executable: String? = nil, debugDirectories: [String] = []) throws(CoreDumpError) {
        elf_version(UInt32(EV_CURRENT))
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .io("\(path): \(String(cString: strerror(errno)))") }
        var st = stat()
        fstat(fd, &st)
        threadSource = CoreThreadSource(notes: notes, memory: CoreMemory(fd: fd, fileSize: UInt64(max(0, st.st_size)), layout: layout))
        threadCallbacks = .allocate(capacity: 1)
        threadCallbacks.initialize(to: CoreThreadSource.callbacks())
        guard let elf = elf_begin(fd, ELF_C_READ_MMAP, nil) else {
            close(fd)
            threadCallbacks.deallocate()
            throw .notACore("libelf: \(String(cString: elf_errmsg(-1)))")
        }
        searchPath = .allocate(capacity: 1)
        searchPath.initialize(to: strdup((["+", ".debug", "/usr/lib/debug"] + debugDirectories).joined(separator: ":")))
        callbacks = .allocate(capacity: 1)
        callbacks.initialize(
            to: Dwfl_Callbacks(
                find_elf: dwfl_build_id_find_elf, find_debuginfo: dwfl_standard_find_debuginfo, section_address: nil,
                debuginfo_path: searchPath))
        guard let dwfl = dwfl_begin(callbacks) else {
            elf_end(elf); close(fd)
            free(searchPath.pointee); searchPath.deallocate(); callbacks.deallocate(); threadCallbacks.deallocate()
            throw .unwinder(Self.lastError)
        }
        self.fd = fd
        self.elf = elf
        self.dwfl = dwfl
        // A program given with --exe is used only when it is the build the core ran: libdwfl
        // takes the file it is given, and another build's symbols would name every frame wrongly.
        var executable = executable
        if let exe = executable, let mismatch = Self.buildIDMismatch(executable: exe, core: elf, notes: notes, callbacks: callbacks) {
            refusedExecutable = mismatch
            executable = nil
        }
        dwfl_report_begin(dwfl)
        let reported = executable.map { dwfl_core_file_report(dwfl, elf, $0) } ?? dwfl_core_file_report(dwfl, elf, nil)
        dwfl_report_end(dwfl, nil, nil)
        guard reported >= 0 else { throw .unwinder("reporting modules: \(Self.lastError)") }
        // A core whose threads cannot be attached still has modules to list; threads then come
        // from the notes alone, without frames.
        let pid = Int32(truncatingIfNeeded: notes.process?.pid ?? notes.threads.first?.tid ?? 0)
        attachError =
            dwfl_attach_state(dwfl, elf, pid, threadCallbacks, Unmanaged.passUnretained(threadSource).toOpaque()) ? nil : Self.lastError
    }

    /// Why the threads cannot be walked, when they cannot (libdwfl's message).
    public private(set) var attachError: String?
    /// Why the program given as the executable was not used (its build-id is not the core's).
    public private(set) var refusedExecutable: String?

    /// The two build-ids when `executable`'s differs from the one the core's own program carries
    /// (read by libdwfl from the core's memory, in a report of its own without the file); nil when
    /// they match or either is unknown (a core without its first pages: nothing to check against).
    private static func buildIDMismatch(
        executable: String, core: OpaquePointer, notes: CoreNotes, callbacks: UnsafeMutablePointer<Dwfl_Callbacks>
    ) -> String? {
        guard let program = notes.executablePath, let fileID = fileBuildID(executable), let probe = dwfl_begin(callbacks) else { return nil }
        defer { dwfl_end(probe) }
        dwfl_report_begin(probe)
        let reported = dwfl_core_file_report(probe, core, nil)
        dwfl_report_end(probe, nil, nil)
        guard reported >= 0 else { return nil }
        final class Found { let program: String; var id: BuildID?; init(_ p: String) { program = p } }
        let found = Found(program)
        _ = withExtendedLifetime(found) {
            dwfl_getmodules(
                probe,
                { module, _, _, _, arg in
                    let found = Unmanaged<Found>.fromOpaque(arg!).takeUnretainedValue()
                    guard let module, let name = dwfl_module_info(module, nil, nil, nil, nil, nil, nil, nil), String(cString: name) == found.program
                    else { return Int32(DWARF_CB_OK) }
                    var bits: UnsafePointer<UInt8>?
                    var vaddr: GElf_Addr = 0
                    let length = dwfl_module_build_id(module, &bits, &vaddr)
                    if length > 0, let bits { found.id = BuildID(bytes: Array(UnsafeBufferPointer(start: bits, count: Int(length)))) }
                    return Int32(DWARF_CB_ABORT)
                }, Unmanaged.passUnretained(found).toOpaque(), 0)
        }
        guard let coreID = found.id, coreID != fileID else { return nil }
        return "\(executable) is not the program this core ran (its build-id is \(fileID.hex), the core's \(coreID.hex)): not used"
    }

    /// The GNU build-id of the ELF file at `path`, nil when it has none or cannot be read.
    private static func fileBuildID(_ path: String) -> BuildID? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        guard let elf = elf_begin(fd, ELF_C_READ_MMAP, nil) else { return nil }
        defer { elf_end(elf) }
        var bits: UnsafeRawPointer?
        let length = dwelf_elf_gnu_build_id(elf, &bits)
        guard length > 0, let bits else { return nil }
        return BuildID(bytes: Array(UnsafeRawBufferPointer(start: bits, count: Int(length))))
    }

    deinit {
        dwfl_end(dwfl)
        elf_end(elf)
        close(fd)
        free(searchPath.pointee)
        searchPath.deallocate()
        callbacks.deallocate()
        threadCallbacks.deallocate()
    }

    static var lastError: String { String(cString: dwfl_errmsg(-1)) }

    /// Every module libdwfl found in the core, lowest address first.
    public func modules() -> [CoreModule] {
        final class Found { var modules: [CoreModule] = [] }
        let found = Found()
        _ = withExtendedLifetime(found) {
            dwfl_getmodules(
                dwfl,
                { module, _, _, _, arg in
                    let found = Unmanaged<Found>.fromOpaque(arg!).takeUnretainedValue()
                    var start: Dwarf_Addr = 0, end: Dwarf_Addr = 0
                    guard let module, let name = dwfl_module_info(module, nil, &start, &end, nil, nil, nil, nil) else { return Int32(DWARF_CB_OK) }
                    var bits: UnsafePointer<UInt8>?
                    var vaddr: GElf_Addr = 0
                    let length = dwfl_module_build_id(module, &bits, &vaddr)
                    let buildID = length > 0 && bits != nil ? BuildID(bytes: Array(UnsafeBufferPointer(start: bits, count: Int(length)))) : nil
                    found.modules.append(CoreModule(path: String(cString: name), base: Address(start), size: end &- start, buildID: buildID))
                    return Int32(DWARF_CB_OK)
                }, Unmanaged.passUnretained(found).toOpaque(), 0)
        }
        return found.modules.sorted { $0.base < $1.base }
    }

    /// Walks every thread in the core's order (the thread that took the signal first), each
    /// within `budget`, all before `deadline` (a thread begun after it is listed without frames).
    public func threads(budget: FrameBudget = FrameBudget(), deadline: ContinuousClock.Instant? = nil) -> [CoreThreadStack] {
        guard attachError == nil else { return [] }
        let walk = ThreadWalk(budget: budget, deadline: deadline)
        _ = withExtendedLifetime(walk) {
            dwfl_getthreads(
                dwfl,
                { thread, arg in
                    guard let thread else { return Int32(DWARF_CB_OK) }
                    Unmanaged<ThreadWalk>.fromOpaque(arg!).takeUnretainedValue().walk(thread)
                    return Int32(DWARF_CB_OK)
                }, Unmanaged.passUnretained(walk).toOpaque())
        }
        return walk.stacks
    }
}

/// The state of one `threads` call, reached from libdwfl's callbacks through their argument.
private final class ThreadWalk {
    let budget: FrameBudget
    let deadline: ContinuousClock.Instant?
    var stacks: [CoreThreadStack] = []
    var keeper: FrameKeeper
    var pastDeadline = false

    init(budget: FrameBudget, deadline: ContinuousClock.Instant?) {
        self.budget = budget
        self.deadline = deadline
        keeper = FrameKeeper(budget: budget)
    }

    func walk(_ thread: OpaquePointer) {
        let tid = Int(dwfl_thread_tid(thread))
        if let d = deadline, ContinuousClock.now >= d { pastDeadline = true }
        if pastDeadline {
            stacks.append(CoreThreadStack(tid: tid, frames: [], framesWalked: 0, stoppedBy: "deadline"))
            return
        }
        keeper = FrameKeeper(budget: budget)
        let rc = dwfl_thread_getframes(
            thread,
            { state, arg in
                guard let state else { return Int32(DWARF_CB_ABORT) }
                return Unmanaged<ThreadWalk>.fromOpaque(arg!).takeUnretainedValue().take(state)
            }, Unmanaged.passUnretained(self).toOpaque())
        let (frames, omitted) = keeper.result
        var stopped = "end"
        var error: String?
        if keeper.isFull {
            stopped = "limit"
        } else if pastDeadline {
            stopped = "deadline"
        } else if rc != 0 {
            // libdwfl may end a complete walk with an error too (its header says callers should
            // take it as the end); only a thread with no frame at all failed.
            if frames.isEmpty {
                stopped = "error"
                error = CoreUnwinder.lastError
            }
        }
        stacks.append(CoreThreadStack(tid: tid, frames: frames, omitted: omitted, framesWalked: keeper.walked, stoppedBy: stopped, error: error))
    }

    /// One frame: its pc, exact for an activation (the interrupted instruction: the first frame,
    /// a signal frame), a return address otherwise. Stops at the step cap or the deadline.
    func take(_ state: OpaquePointer) -> Int32 {
        var pc: Dwarf_Addr = 0
        var isActivation = false
        guard dwfl_frame_pc(state, &pc, &isActivation) else { return Int32(DWARF_CB_ABORT) }
        keeper.append(isActivation ? .programCounter(Address(pc)) : .returnAddress(Address(pc)))
        if keeper.isFull { return Int32(DWARF_CB_ABORT) }
        // The clock is read every 1,024 frames: a deep stack is where the time goes.
        if keeper.walked % 1024 == 0, let d = deadline, ContinuousClock.now >= d {
            pastDeadline = true
            return Int32(DWARF_CB_ABORT)
        }
        return Int32(DWARF_CB_OK)
    }
}
