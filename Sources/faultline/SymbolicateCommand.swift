// `faultline symbolicate` (being built).
enum SymbolicateCommand {
    static func run(_ args: [String]) -> Int32 {
        printError("'symbolicate' is not built yet")
        return ExitCode.failure
    }
}
