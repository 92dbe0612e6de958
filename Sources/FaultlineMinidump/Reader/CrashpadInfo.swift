// Crashpad's own stream (0x43500001): report and client ids, and the annotations the process and
// its modules set (simple dictionaries, lists, typed annotation objects of type string).

/// What Crashpad adds beyond the standard streams.
public struct CrashpadInfo: Hashable, Sendable {
    public var reportID: [UInt8]
    public var clientID: [UInt8]
    /// Process-wide simple annotations (`--annotation=KEY=VALUE`, `CrashpadClient` annotations).
    public var simpleAnnotations: [String: String]
    /// Per module (by index into the module list): its annotations.
    public var moduleAnnotations: [ModuleAnnotations]

    public struct ModuleAnnotations: Hashable, Sendable {
        public var moduleIndex: Int
        public var simpleAnnotations: [String: String]
        public var listAnnotations: [String]
        /// Annotation objects whose type is string (`crashpad::Annotation::Type::kString`).
        public var annotationObjects: [String: String]
    }

    static let minimumSize: UInt32 = 52
    /// More annotations than this in one dictionary are not something a program sets; a hostile count stops here.
    static let maxEntries: UInt64 = 4096

    init(_ b: MinidumpBytes, _ s: MinidumpStreamEntry) throws(MinidumpError) {
        guard s.size >= Self.minimumSize else { throw .streamTooSmall(what: "Crashpad info", size: s.size, needed: Int(Self.minimumSize)) }
        let e = UInt64(s.rva)
        reportID = Array(try b.slice(e + 4, 16, "Crashpad info"))
        clientID = Array(try b.slice(e + 20, 16, "Crashpad info"))
        simpleAnnotations = try Self.dictionary(b, size: try b.u32(e + 36, "Crashpad info"), rva: try b.u32(e + 40, "Crashpad info"))
        moduleAnnotations = try Self.modules(b, size: try b.u32(e + 44, "Crashpad info"), rva: try b.u32(e + 48, "Crashpad info"))
    }

    /// `MinidumpSimpleStringDictionary`: a count, then (key RVA, value RVA) pairs of UTF-8 strings.
    static func dictionary(_ b: MinidumpBytes, size: UInt32, rva: UInt32) throws(MinidumpError) -> [String: String] {
        guard size >= 4 else { return [:] }
        let base = UInt64(rva)
        try b.check("annotation dictionary", offset: base, size: UInt64(size))
        let n = try b.checkedCount(
            "annotation dictionary", count: UInt64(try b.u32(base, "annotation dictionary")), entrySize: 8, offset: base + 4,
            available: min(UInt64(size) - 4, maxEntries * 8))
        var d: [String: String] = [:]
        for i in 0..<UInt64(n) {
            let entry = base + 4 + i * 8
            d[try b.utf8String(at: try b.u32(entry, "annotation"), "annotation key")] = try b.utf8String(
                at: try b.u32(entry + 4, "annotation"), "annotation value")
        }
        return d
    }

    /// `MinidumpModuleCrashpadInfoList`: (module index, location) links to each module's info.
    static func modules(_ b: MinidumpBytes, size: UInt32, rva: UInt32) throws(MinidumpError) -> [ModuleAnnotations] {
        guard size >= 4 else { return [] }
        let base = UInt64(rva)
        try b.check("module annotations", offset: base, size: UInt64(size))
        let n = try b.checkedCount(
            "module annotations", count: UInt64(try b.u32(base, "module annotations")), entrySize: 12, offset: base + 4,
            available: min(UInt64(size) - 4, maxEntries * 12))
        var list: [ModuleAnnotations] = []
        for i in 0..<UInt64(n) {
            let link = base + 4 + i * 12
            let index = Int(try b.u32(link, "module annotation link"))
            let infoSize = try b.u32(link + 4, "module annotation link")
            let info = UInt64(try b.u32(link + 8, "module annotation link"))
            guard infoSize >= 28 else { continue }
            try b.check("module Crashpad info", offset: info, size: UInt64(infoSize))
            let listRVA = try b.u32(info + 8, "module Crashpad info")
            let listSize = try b.u32(info + 4, "module Crashpad info")
            let simple = try dictionary(b, size: try b.u32(info + 12, "module Crashpad info"), rva: try b.u32(info + 16, "module Crashpad info"))
            let objects = try annotationObjects(
                b, size: try b.u32(info + 20, "module Crashpad info"), rva: try b.u32(info + 24, "module Crashpad info"))
            list.append(
                ModuleAnnotations(
                    moduleIndex: index, simpleAnnotations: simple, listAnnotations: try stringList(b, size: listSize, rva: listRVA),
                    annotationObjects: objects))
        }
        return list
    }

    /// `MinidumpRVAList` of UTF-8 strings.
    static func stringList(_ b: MinidumpBytes, size: UInt32, rva: UInt32) throws(MinidumpError) -> [String] {
        guard size >= 4 else { return [] }
        let base = UInt64(rva)
        try b.check("annotation list", offset: base, size: UInt64(size))
        let n = try b.checkedCount(
            "annotation list", count: UInt64(try b.u32(base, "annotation list")), entrySize: 4, offset: base + 4,
            available: min(UInt64(size) - 4, maxEntries * 4))
        var list: [String] = []
        for i in 0..<UInt64(n) { list.append(try b.utf8String(at: try b.u32(base + 4 + i * 4, "annotation list"), "annotation")) }
        return list
    }

    /// `MinidumpAnnotationList`: (name RVA, type, reserved, value RVA); values are byte arrays.
    static func annotationObjects(_ b: MinidumpBytes, size: UInt32, rva: UInt32) throws(MinidumpError) -> [String: String] {
        guard size >= 4 else { return [:] }
        let base = UInt64(rva)
        try b.check("annotation objects", offset: base, size: UInt64(size))
        let n = try b.checkedCount(
            "annotation objects", count: UInt64(try b.u32(base, "annotation objects")), entrySize: 12, offset: base + 4,
            available: min(UInt64(size) - 4, maxEntries * 12))
        var d: [String: String] = [:]
        for i in 0..<UInt64(n) {
            let entry = base + 4 + i * 12
            guard try b.u16(entry + 4, "annotation object") == 1 else { continue }  // kString
            d[try b.utf8String(at: try b.u32(entry, "annotation object"), "annotation name")] = try b.utf8String(
                at: try b.u32(entry + 8, "annotation object"), "annotation value")
        }
        return d
    }
}
