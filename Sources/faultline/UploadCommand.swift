// `faultline upload` (being built).
enum UploadCommand {
    static func run(_ args: [String]) -> Int32 {
        printError("'upload' is not built yet")
        return ExitCode.failure
    }
}
