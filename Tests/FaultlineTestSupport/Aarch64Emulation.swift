// Real aarch64 programs on this x86_64 machine: the cross compilers build them at test time and
// qemu-aarch64 runs them with the aarch64 preload library (docs/AARCH64.md). Shared by the crash,
// symbolication and server tests, so every aarch64 report in the suite is made the same way.
import Foundation

public enum Aarch64Emulation {
    /// Not a skip: CI installs these (tools/setup), so their absence is a broken machine.
    public static let requiredTools = ["qemu-aarch64", "aarch64-linux-gnu-gcc", "aarch64-linux-gnu-g++", "aarch64-linux-gnu-nm", "aarch64-linux-gnu-objcopy"]

    public struct MissingTool: Error, CustomStringConvertible {
        public var name: String
        public var description: String { "\(name) is missing: run tools/setup (it installs qemu-user and the aarch64 cross compilers)" }
    }

    /// Throws MissingTool for the first tool that is not on PATH.
    public static func requireTools() throws {
        for tool in requiredTools where (try? TestSupport.shell("command -v \(tool)")) == nil {
            throw MissingTool(name: tool)
        }
    }

    private static let builtPreload: Result<String, TestSupport.ShellError> = {
        let directory = TestSupport.makeTemporaryDirectory("aarch64-preload")
        do {
            _ = try TestSupport.shell("'\(TestSupport.repositoryRoot().path)/tools/build-preload' --arch aarch64 '\(directory)'")
            return .success(directory)
        } catch let error as TestSupport.ShellError {
            return .failure(error)
        } catch {
            return .failure(TestSupport.ShellError(command: "tools/build-preload --arch aarch64", output: "\(error)"))
        }
    }()

    /// The aarch64 preload build (tools/build-preload --arch aarch64), made once per test process.
    public static func preloadDirectory() throws -> String { try builtPreload.get() }

    /// Tests/CrashProbes/aarch64: the crasher (modes: null, abort, overflow-main, overflow-thread,
    /// library, threads) and the shared library it calls.
    public static var probeSources: String { TestSupport.repositoryRoot().appendingPathComponent("Tests/CrashProbes/aarch64").path }

    /// Builds the crasher into `directory` with debug info, linked against `libcrashlib.so` beside
    /// it; returns the crasher's path.
    public static func buildCrasher(in directory: String) throws -> String {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        _ = try TestSupport.shell(
            "aarch64-linux-gnu-gcc -g -O1 -Wl,--build-id=sha1 -shared -fPIC '\(probeSources)/crash_library.c' -o '\(directory)/libcrashlib.so' && "
                + "aarch64-linux-gnu-gcc -g -O1 -Wl,--build-id=sha1 -pthread '\(probeSources)/crasher.c' -o '\(directory)/crasher' "
                + "-L'\(directory)' -lcrashlib -Wl,-rpath,'$ORIGIN'")
        return directory + "/crasher"
    }

    /// Runs an aarch64 program under qemu-aarch64 with the preload library, its reports going to
    /// `crashDirectory`. The guest's loader and C library are Debian's arm64 multiarch ones (no -L
    /// prefix: the cross toolchain's sysroot holds another build of glibc, and mixing its loader
    /// with the multiarch libc hangs the first pthread_create). No core file: the shell sets the
    /// limit to 0 before exec.
    public static func run(
        _ program: String, _ arguments: [String], crashDirectory: String, environment: [String: String] = [:]
    ) throws -> TestSupport.Outcome {
        let preload = try preloadDirectory() + "/libfaultline-preload.so"
        var env = environment
        env["FAULTLINE_CRASH_DIR"] = crashDirectory
        return try TestSupport.run(
            "/bin/sh", ["-c", "ulimit -c 0; exec \"$@\"", "sh", "qemu-aarch64", "-E", "LD_PRELOAD=\(preload)", program] + arguments,
            environment: env, timeout: 120)
    }

    /// A function's address range in an aarch64 ELF file, from its symbol table.
    public static func symbolRange(_ name: String, in binary: String) throws -> ClosedRange<UInt64> {
        let out = try TestSupport.shell("aarch64-linux-gnu-nm -S --defined-only '\(binary)' | grep -E ' [tT] \(name)$'")
        let f = out.split(separator: " ")
        guard f.count >= 2, let start = UInt64(f[0], radix: 16), let size = UInt64(f[1], radix: 16), size > 0 else {
            throw TestSupport.ShellError(command: "aarch64-linux-gnu-nm \(binary)", output: "no sized symbol \(name): \(out)")
        }
        return start...(start + size - 1)
    }

    /// Every function symbol with a size in an aarch64 ELF file: (start, size, name).
    public static func functionSymbols(in binary: String) throws -> [(start: UInt64, size: UInt64, name: String)] {
        let out = try TestSupport.shell("aarch64-linux-gnu-nm -S --defined-only '\(binary)'")
        return out.split(separator: "\n").compactMap { line in
            let p = line.split(separator: " ", maxSplits: 3)
            guard p.count == 4, p[2] == "t" || p[2] == "T", let a = UInt64(p[0], radix: 16), let s = UInt64(p[1], radix: 16), s > 0 else { return nil }
            return (a, s, String(p[3]))
        }
    }
}
