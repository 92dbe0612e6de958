// Runs a server-side command by replacing this process with `faultline-server` from the same
// directory: same pid (systemd, signals and exit status see no difference), same arguments.
import FoundationEssentials
import FaultlineCommandLine
#if canImport(Glibc)
    import Glibc
#endif

enum ServerExecutable {
    /// `faultline-server` beside the running executable (symlinks to `faultline` resolved, so an
    /// installed `/usr/local/bin/faultline -> /opt/faultline/faultline` finds its sibling). Nil
    /// without /proc: guessing (the working directory, say) could run somebody else's program.
    static var path: String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard n > 0 else { return nil }
        let own = String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard let slash = own.lastIndex(of: "/") else { return nil }
        return String(own[..<slash]) + "/" + ServerSideCommands.executableName
    }

    /// Returns only when exec failed. The command's own arguments go over as the bytes this
    /// process received (`CommandLine.arguments` would have replaced invalid UTF-8 in file names).
    static func replaceProcess(command: String, arguments: [String]) -> Int32 {
        guard let target = path else {
            printError(
                "'\(command)' runs in \(ServerSideCommands.executableName), which could not be located (no /proc/self/exe); run it directly: \(ServerSideCommands.executableName) \(command) …"
            )
            return ExitCode.failure
        }
        var argv: [UnsafeMutablePointer<CChar>?] = [strdup(target)]
        for i in 1..<Int(CommandLine.argc) { argv.append(CommandLine.unsafeArgv[i].flatMap { strdup($0) }) }
        argv.append(nil)
        execv(target, argv)
        let reason = String(cString: strerror(errno))
        argv.forEach { free($0) }
        printError(
            "'\(command)' runs in \(ServerSideCommands.executableName), which could not be started from \(target) (\(reason)); "
                + "install it beside faultline (swift build --product \(ServerSideCommands.executableName))")
        return ExitCode.failure
    }
}
