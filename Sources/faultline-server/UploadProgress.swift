// A progress bar on a terminal, plain lines otherwise (CI logs); on stderr when stdout carries JSON.
import Foundation
import FaultlineCommandLine

final class UploadProgress {
    let total: Int
    var done = 0
    let fd: Int32
    let tty: Bool

    init(total: Int, toStderr: Bool = false) {
        self.total = total
        fd = toStderr ? STDERR_FILENO : STDOUT_FILENO
        tty = isatty(fd) != 0
    }

    func write(_ s: String) {
        FileHandle(fileDescriptor: fd, closeOnDealloc: false).write(Data(s.utf8))
    }
    func line(_ s: String) {
        fflush(nil)
        write((tty ? "\r\u{1B}[K" : "") + s + "\n")
    }
    func advance() {
        done += 1
        guard tty else { return }
        let width = 30
        let filled = total == 0 ? width : width * done / total
        write("\r[" + String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled) + "] \(done)/\(total)")
    }
    func finish(_ summary: String?) {
        if tty { write("\r\u{1B}[K") }
        if let summary { write(summary + "\n") }
    }
}
