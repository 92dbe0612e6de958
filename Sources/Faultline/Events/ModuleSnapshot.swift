// Loaded modules as Sentry debug images, for events captured in normal context.
import CFaultlineCrash
import FaultlineProtocol

enum ModuleSnapshot {
    static func current() -> [DebugImage] {
        var buffer = [faultline_module_info](repeating: faultline_module_info(), count: 512)
        let n = min(faultline_list_modules(&buffer, buffer.count), buffer.count)
        return buffer.prefix(n).map { m in
            var m = m
            let path = withUnsafeBytes(of: &m.path) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            let id = withUnsafeBytes(of: &m.build_id) { Array($0.prefix(m.build_id_length)) }
            return DebugImage(
                codeFile: path, base: Address(UInt64(m.base)), size: UInt64(m.size), buildID: id.isEmpty ? nil : BuildID(bytes: id),
                arch: DebugImage.hostArchitecture)
        }
    }
}
