// `faultline crashes` (being built).
enum CrashesCommand {
    static func run(_ args: [String]) -> Int32 {
        printError("'crashes' is not built yet")
        return ExitCode.failure
    }
}
