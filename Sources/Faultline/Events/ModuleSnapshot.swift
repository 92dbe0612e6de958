// Loaded modules as Sentry debug images, for events captured in normal context.
import CFaultlineCrash
import FaultlineProtocol

enum ModuleSnapshot {
    struct Module {
        var path: String
        var base: UInt64
        var size: UInt64
        var buildID: BuildID?
        func contains(_ a: UInt64) -> Bool { a >= base && a - base < size }
    }

    static func current() -> [Module] {
        var buffer = [faultline_module_info](repeating: faultline_module_info(), count: 512)
        let n = min(faultline_list_modules(&buffer, buffer.count), buffer.count)
        return buffer.prefix(n).map { m in
            var m = m
            let path = withUnsafeBytes(of: &m.path) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            let id = withUnsafeBytes(of: &m.build_id) { Array($0.prefix(m.build_id_length)) }
            return Module(path: path, base: UInt64(m.base), size: UInt64(m.size), buildID: id.isEmpty ? nil : BuildID(bytes: id))
        }
    }

    static func debugImages(_ modules: [Module]) -> JSONValue {
        .array(modules.map { m in
            var image: [String: JSONValue] = ["type": "elf", "code_file": .string(m.path), "image_addr": .string(Address(m.base).hex),
                                              "image_size": .int(Int64(m.size)), "arch": "x86_64"]
            if let b = m.buildID { image["code_id"] = .string(b.hex); image["debug_id"] = .string(b.debugID.description) }
            return .object(image)
        })
    }
}
