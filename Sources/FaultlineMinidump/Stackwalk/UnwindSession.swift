// One libdwfl session over one dump: the modules reported at their bases with the files the
// lookup found, the dump's memory behind memory_read, and a walk loop per thread that falls back
// to frame pointers and stack scanning where CFI ends.
import CDw
import FaultlineProtocol

#if canImport(Glibc)
    import Glibc
#endif

final class UnwindSession {
    let dump: Minidump
    let limits: MinidumpStackwalker.Limits
    private var dwfl: OpaquePointer?
    private let callbacks: UnsafeMutablePointer<Dwfl_Callbacks>
    private let threadCallbacks: UnsafeMutablePointer<Dwfl_Thread_Callbacks>
    /// A bare x86_64 ELF header: tells libdwfl the architecture even when no module file was found.
    private let architectureImage: UnsafeMutableRawPointer
    private var architectureELF: OpaquePointer?
    /// Debug file per dump module index, served to libdwfl's find_debuginfo.
    fileprivate var debugFiles: [Int: String] = [:]
    private(set) var code: ModuleCode
    /// Why libdwfl could not be used at all (no frames but the context and the fallbacks then).
    private var unavailable: String?

    // The step in progress: where libdwfl starts, and what its frame callback collected.
    fileprivate var start = UnwindRegisters(returnAddress: 0, sp: 0, fp: nil)
    fileprivate var collected: [DwflFrame] = []
    fileprivate var collectLimit = 0

    struct DwflFrame {
        var pc: UInt64
        var isActivation: Bool
        var sp: UInt64?
        var fp: UInt64?
    }

    init(dump: Minidump, lookup: ModuleFileLookup, limits: MinidumpStackwalker.Limits) {
        self.dump = dump
        self.limits = limits
        callbacks = .allocate(capacity: 1)
        threadCallbacks = .allocate(capacity: 1)
        architectureImage = .allocate(byteCount: 64, alignment: 8)
        code = ModuleCode(dump: dump, files: [:])
        callbacks.initialize(to: Dwfl_Callbacks(find_elf: nil, find_debuginfo: nil, section_address: nil, debuginfo_path: nil))
        threadCallbacks.initialize(to: Dwfl_Thread_Callbacks())
        Self.writeArchitectureHeader(architectureImage)
        let walked = AMD64Context.architecture
        guard dump.systemInfo?.architecture.map({ CPUArchitecture(name: $0) == walked }) ?? true else {
            unavailable = "a \(dump.systemInfo?.architecture ?? "unknown") dump: only \(walked.rawValue) is walked with CFI"
            return
        }
        open(lookup: lookup)
    }

    func close() {
        if let dwfl { dwfl_end(dwfl) }
        dwfl = nil
        if let architectureELF { elf_end(architectureELF) }
        architectureELF = nil
        callbacks.deallocate()
        threadCallbacks.deallocate()
        architectureImage.deallocate()
    }

    private func open(lookup: ModuleFileLookup) {
        callbacks.pointee.find_elf = { _, _, _, _, _, _ in -1 }
        callbacks.pointee.find_debuginfo = { _, userdata, name, _, _, _, _, debugFileName in
            guard let userdata, let context = userdata.pointee, let name, let index = Int(String(cString: name).dropFirst()) else { return -1 }
            let session = Unmanaged<UnwindSession>.fromOpaque(context).takeUnretainedValue()
            guard let path = session.debugFiles[index] else { return -1 }
            let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
            if fd >= 0 { debugFileName?.pointee = strdup(path) }
            return fd
        }
        guard let dwfl = dwfl_begin(callbacks) else {
            unavailable = "libdwfl: " + Self.lastError()
            return
        }
        self.dwfl = dwfl
        let me = Unmanaged.passUnretained(self).toOpaque()
        var images: [Int: ModuleCode.FileImage] = [:]
        // Each build's files are opened once, and at most `maxModuleFiles` modules get files: a
        // hostile module list naming one library thousands of times must not open it thousands of times.
        var asked = Set<String>()
        dwfl_report_begin(dwfl)
        for (i, m) in dump.modules.enumerated() where m.size > 0 {
            let name = "m\(i)"
            var executable: String?, debug: String?
            if asked.count < limits.maxModuleFiles, asked.insert(m.buildID?.hex ?? "path " + m.path).inserted {
                executable = lookup(m.buildID, m.path, .executable)
                debug = lookup(m.buildID, m.path, .debug)
            }
            if let debug { debugFiles[i] = debug }
            var module: OpaquePointer?
            if let file = executable ?? debug {
                module = dwfl_report_elf(dwfl, name, file, -1, m.base, true)
            }
            if module == nil { module = dwfl_report_module(dwfl, name, m.base, m.base &+ m.size) }
            guard let module else { continue }  // overlaps another module: its addresses stay unknown
            var userdata: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
            _ = dwfl_module_info(module, &userdata, nil, nil, nil, nil, nil, nil)
            userdata?.pointee = me
            if executable ?? debug != nil, let image = ModuleCode.image(of: module) { images[i] = image }
        }
        dwfl_report_end(dwfl, nil, nil)
        code = ModuleCode(dump: dump, files: images)

        elf_version(UInt32(EV_CURRENT))
        architectureELF = elf_memory(architectureImage.assumingMemoryBound(to: CChar.self), 64)
        // libdwfl sees one thread, tid 1, whose initial registers are wherever the walk starts
        // next: a dump thread's context, or the registers a fallback step recovered, so CFI can
        // resume after frame pointers or scanning. So next_thread lists none, get_thread answers it.
        threadCallbacks.pointee.next_thread = { _, _, _ in 0 }
        threadCallbacks.pointee.get_thread = { _, tid, arg, threadArg in
            threadArg?.pointee = arg
            return tid == 1
        }
        threadCallbacks.pointee.memory_read = { _, address, result, arg in
            guard let arg else { return false }
            let session = Unmanaged<UnwindSession>.fromOpaque(arg).takeUnretainedValue()
            guard let word = session.dump.memory.readWord(address) else { return false }
            result?.pointee = word
            return true
        }
        threadCallbacks.pointee.set_initial_registers = { thread, arg in
            guard let thread, let arg else { return false }
            let start = Unmanaged<UnwindSession>.fromOpaque(arg).takeUnretainedValue().start
            if let all = start.all {
                guard all.withUnsafeBufferPointer({ dwfl_thread_state_registers(thread, 0, UInt32($0.count), $0.baseAddress!) }) else { return false }
            } else {
                if let sp = start.sp, !withUnsafePointer(to: sp, { dwfl_thread_state_registers(thread, 7, 1, $0) }) { return false }
                if let fp = start.fp, !withUnsafePointer(to: fp, { dwfl_thread_state_registers(thread, 6, 1, $0) }) { return false }
            }
            // A return address is looked up inside its call instruction (the next instruction may
            // belong to another function when the call does not return).
            dwfl_thread_state_register_pc(thread, start.pcIsReturnAddress ? start.pc &- 1 : start.pc)
            return true
        }
        guard dwfl_attach_state(dwfl, architectureELF, 1, threadCallbacks, me) else {
            unavailable = "libdwfl: " + Self.lastError()
            return
        }
    }

    /// Walks one thread, keeping at most `maxFrames` frames.
    func walk(_ thread: MinidumpThread, maxFrames: Int) -> WalkedThread {
        let crashed = dump.exception?.threadID == thread.id
        guard let context = dump.startContext(of: thread).amd64 else {
            return WalkedThread(id: thread.id, name: thread.name, crashed: crashed, frames: [], registers: nil, stoppedBy: "registers of an unsupported CPU")
        }
        var frames = [WalkedFrame(address: .programCounter(Address(context.rip)), trust: .context)]
        var registers = UnwindRegisters(context: context)
        var stoppedBy = ""
        while true {
            let remaining = maxFrames - frames.count
            if remaining <= 0 { stoppedBy = "frame limit"; break }
            let run = unwindWithCFI(from: registers, maxFrames: remaining)
            frames += run.frames
            if let last = run.last { registers = last }
            if run.reachedEnd { stoppedBy = "end of stack"; break }
            if frames.count >= maxFrames { stoppedBy = "frame limit"; break }
            let evidence = FallbackUnwind.Evidence(code: code, memory: dump.memory) { [unowned self] in hasCFI(at: $0) }
            if frames.count == 1, let step = FallbackUnwind.leafReturn(from: registers, evidence: evidence) {
                frames.append(WalkedFrame(address: .returnAddress(Address(step.pc)), trust: .scan))
                registers = step
            } else if let step = FallbackUnwind.framePointer(from: registers, evidence: evidence) {
                frames.append(WalkedFrame(address: .returnAddress(Address(step.pc)), trust: .fp))
                registers = step
            } else if let step = FallbackUnwind.scan(from: registers, evidence: evidence, words: limits.scanWords) {
                frames.append(WalkedFrame(address: .returnAddress(Address(step.pc)), trust: .scan))
                registers = step
            } else {
                stoppedBy = run.stoppedBy + "; no frame pointer or return address found on the stack"
                break
            }
        }
        return WalkedThread(id: thread.id, name: thread.name, crashed: crashed, frames: frames, registers: context, stoppedBy: stoppedBy)
    }

    /// What one libdwfl run from `registers` found: frames beyond the starting one, the registers of
    /// the last, and whether it ended at the outermost frame or why it stopped.
    struct CFIRun {
        var frames: [WalkedFrame] = []
        var last: UnwindRegisters?
        var reachedEnd = false
        var stoppedBy = ""
    }

    private func unwindWithCFI(from registers: UnwindRegisters, maxFrames: Int) -> CFIRun {
        var run = CFIRun()
        guard let dwfl, unavailable == nil else {
            run.stoppedBy = unavailable ?? "libdwfl unavailable"
            return run
        }
        let startPC = registers.pcIsReturnAddress ? registers.pc &- 1 : registers.pc
        // Without CFI here libdwfl would follow rbp itself; the walker's own fallbacks decide
        // instead, so that leaf frames and scanning get their turn and every frame's trust is known.
        guard hasCFI(at: startPC) else {
            run.stoppedBy = "no CFI for \(Address(registers.pc).hex)"
            return run
        }
        start = registers
        collected = []
        // The starting frame comes back first; it is already in the walk.
        collectLimit = maxFrames + 1
        let me = Unmanaged.passUnretained(self).toOpaque()
        let result = dwfl_getthread_frames(
            dwfl, 1,
            { state, arg in
                guard let state, let arg else { return Int32(DWARF_CB_ABORT) }
                let session = Unmanaged<UnwindSession>.fromOpaque(arg).takeUnretainedValue()
                var pc: Dwarf_Addr = 0
                var activation = false
                guard dwfl_frame_pc(state, &pc, &activation) else { return Int32(DWARF_CB_ABORT) }
                var sp: Dwarf_Word = 0, fp: Dwarf_Word = 0
                let frame = DwflFrame(
                    pc: pc, isActivation: activation, sp: dwfl_frame_reg(state, 7, &sp) == 0 ? sp : nil,
                    fp: dwfl_frame_reg(state, 6, &fp) == 0 ? fp : nil)
                return Int32(session.accept(frame) ? DWARF_CB_OK : DWARF_CB_ABORT)
            }, me)
        let error = result == -1 ? Self.lastError() : nil

        var previous = registers
        for f in collected.dropFirst() {
            run.frames.append(WalkedFrame(address: .returnAddress(Address(f.pc)), trust: .cfi))
            previous = UnwindRegisters(returnAddress: f.pc, sp: f.sp ?? 0, fp: f.fp)
            if f.sp == nil { previous.sp = nil }
        }
        run.last = run.frames.isEmpty ? nil : previous
        if result == 0 {
            run.reachedEnd = true
        } else {
            run.stoppedBy = error.map { "libdwfl: \($0)" } ?? rejected ?? "libdwfl stopped"
        }
        return run
    }

    /// Why the frame callback refused a frame, if it did.
    private var rejected: String?

    /// Keeps a frame from libdwfl unless it ends the run: a zero pc, a stack pointer that did not
    /// move up the stack (a cycle or garbage CFI), the frame limit, or a frame with no CFI (from
    /// there the walker's own fallbacks take over, rather than libdwfl's frame-pointer guess).
    fileprivate func accept(_ frame: DwflFrame) -> Bool {
        rejected = nil
        if collected.count >= collectLimit { rejected = "frame limit"; return false }
        if let last = collected.last {
            if frame.pc == 0 { rejected = "return address 0"; return false }
            if let sp = frame.sp, let lastSP = last.sp, sp <= lastSP { rejected = "stack pointer did not move up the stack"; return false }
        }
        let lookupPC = frame.isActivation ? frame.pc : frame.pc &- 1
        if !collected.isEmpty, !hasCFI(at: lookupPC) {
            collected.append(frame)
            rejected = "no CFI for \(Address(frame.pc).hex)"
            return false
        }
        collected.append(frame)
        return true
    }

    /// Whether the module holding `pc` has CFI for it (else libdwfl's own fallback found the caller).
    private func hasCFI(at pc: UInt64) -> Bool {
        guard let dwfl, let module = dwfl_addrmodule(dwfl, pc) else { return false }
        for cfiOf in [dwfl_module_eh_cfi, dwfl_module_dwarf_cfi] {
            var bias: Dwarf_Addr = 0
            guard let cfi = cfiOf(module, &bias) else { continue }
            var frame: OpaquePointer?
            if dwarf_cfi_addrframe(cfi, pc &- bias, &frame) == 0 {
                free(UnsafeMutableRawPointer(frame))
                return true
            }
        }
        return false
    }

    private static func lastError() -> String {
        guard let m = dwfl_errmsg(-1) else { return "unknown error" }
        return String(cString: m)
    }

    /// ELF64, little-endian, ET_EXEC for the walked architecture's machine: all libdwfl needs to
    /// pick its backend.
    private static func writeArchitectureHeader(_ p: UnsafeMutableRawPointer) {
        p.initializeMemory(as: UInt8.self, repeating: 0, count: 64)
        let ident: [UInt8] = [0x7F, 0x45, 0x4C, 0x46, 2, 1, 1]
        for (i, b) in ident.enumerated() { p.storeBytes(of: b, toByteOffset: i, as: UInt8.self) }
        p.storeBytes(of: UInt16(2).littleEndian, toByteOffset: 16, as: UInt16.self)  // e_type ET_EXEC
        p.storeBytes(of: AMD64Context.architecture.elfMachine.littleEndian, toByteOffset: 18, as: UInt16.self)  // e_machine
        p.storeBytes(of: UInt32(1).littleEndian, toByteOffset: 20, as: UInt32.self)  // e_version
        p.storeBytes(of: UInt16(64).littleEndian, toByteOffset: 52, as: UInt16.self)  // e_ehsize
        p.storeBytes(of: UInt16(56).littleEndian, toByteOffset: 54, as: UInt16.self)  // e_phentsize
        p.storeBytes(of: UInt16(64).littleEndian, toByteOffset: 58, as: UInt16.self)  // e_shentsize
    }
}
