// `faultline projects` (being built).
enum ProjectsCommand {
    static func run(_ args: [String]) -> Int32 {
        printError("'projects' is not built yet")
        return ExitCode.failure
    }
}
