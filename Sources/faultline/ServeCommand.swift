// `faultline serve` (being built).
enum ServeCommand {
    static func run(_ args: [String]) -> Int32 {
        printError("'serve' is not built yet")
        return ExitCode.failure
    }
}
