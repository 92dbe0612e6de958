// Runs a server-side command by replacing this process with `faultline-server` from the same
// directory: same pid (systemd, signals and exit status see no difference), same arguments.
import Foundation
import FaultlineCommandLine
#if canImport(Glibc)
import Glibc
#endif

enum ServerExecutable {
    /// `faultline-server` beside the running executable (symlinks to `faultline` resolved, so an
    /// installed `/usr/local/bin/faultline -> /opt/faultline/faultline` finds its sibling).
    static var path: String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        let own = n > 0 ? String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) : CommandLine.arguments[0]
        let directory = own.lastIndex(of: "/").map { String(own[..<$0]) } ?? "."
        return directory + "/" + ServerSideCommands.executableName
    }

    /// Returns only when exec failed.
    static func replaceProcess(command: String, arguments: [String]) -> Int32 {
        let target = path
        let argv = ([target, command] + arguments).map { strdup($0) } + [nil]
        execv(target, argv)
        let reason = String(cString: strerror(errno))
        argv.forEach { free($0) }
        printError("'\(command)' runs in \(ServerSideCommands.executableName), which could not be started from \(target) (\(reason)); "
                   + "install it beside faultline (swift build --product \(ServerSideCommands.executableName))")
        return ExitCode.failure
    }
}
