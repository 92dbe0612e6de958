// Grouping: which issue an occurrence belongs to. The algorithm is documented in docs/SERVER.md.
import Foundation
import FaultlineProtocol
import FaultlineSymbolication
import FaultlineHashing

public enum Fingerprinter {
    /// One component per grouping frame (inlined frames expand to several, innermost first):
    /// 1. the function name the server resolved from a debug file, else
    /// 2. the function name the client sent, else
    /// 3. `<build-id>+0x<offset>` (module path when there is no build-id).
    /// Addresses never enter the hash once a name is known, so rebuilds of the same code group together.
    public static func fingerprint(_ stack: StackSignature, symbolicator: FrameSymbolicating) -> Fingerprint {
        var computed = defaultFingerprint(stack, symbolicator: symbolicator)
        guard !stack.clientFingerprint.isEmpty else { return computed }
        // The SDK's fingerprint wins; `{{ default }}` in it stands for the grouping above.
        let parts = stack.clientFingerprint.map { isDefaultMarker($0) ? "default:" + computed.hash : "client:" + $0 }
        computed.hash = SHA1Hash.hex("v1\nfingerprint\n" + parts.joined(separator: "\n"))
        return computed
    }

    /// Functions of Rust's and C++'s standard libraries (`core::ptr::write_volatile`,
    /// `std::vector<…>::operator[]`): inlined into the app's code, they share its module, but what
    /// crashed is the app's code that called them.
    static func isStandardLibrary(_ function: String) -> Bool {
        let prefixes = ["core::", "alloc::", "std::", "__gnu_cxx::"]
        if prefixes.contains(where: { function.hasPrefix($0) }) { return true }
        // A template function's return type comes first ("void std::vector<int>::push_back(…)").
        guard let space = function.firstIndex(of: " "), !function[..<space].contains("(") else { return false }
        let name = function[function.index(after: space)...]
        return prefixes.contains { name.hasPrefix($0) }
    }

    static func isDefaultMarker(_ s: String) -> Bool {
        s.filter { !$0.isWhitespace } == "{{default}}"
    }

    static func defaultFingerprint(_ stack: StackSignature, symbolicator: FrameSymbolicating) -> Fingerprint {
        var components: [String] = []
        var resolvedAny = false
        var culprit: String?
        var libraryCulprit: String?
        for frame in stack.frames {
            if let b = frame.buildID,
                let resolved = symbolicator.resolve(
                    buildID: b, modulePath: frame.module, offset: frame.offset, isReturnAddress: frame.isReturnAddress, architecture: frame.architecture
                ).frames,
                resolved.contains(where: { $0.function != nil })
            {
                // Faultline's own frames (thread-start wrapper, handler) never group an issue.
                if resolved.allSatisfy({ FaultlineOwnFrames.isOwn(function: $0.function, rawFunction: $0.mangledFunction) }) { continue }
                resolvedAny = true
                for r in resolved {
                    guard let raw = r.function else { continue }
                    let readable = CrashEvent.readableFunctionName(raw)
                    let fn = stack.dropsRustHashes ? Demangler.withoutRustHash(readable, mangled: r.mangledFunction ?? "") : readable
                    components.append(fn)
                    // A Faultline function inlined into the app's still counts for grouping (the
                    // hash is unchanged) but never names the issue: the app's call does.
                    let own =
                        SymbolicatedStack.Role.of(
                            markedOwn: false, module: nil, function: r.function, mangledFunction: r.mangledFunction, inApp: false) == .faultline
                    if culprit == nil && !own {
                        // A C++ function by its name without its signature (`ns::Cache<int>::get`):
                        // signatures made titles of hundreds of characters. The hash keeps the full
                        // name. (Swift's short form cuts a closure's context: its full name stays.)
                        let isItanium = r.mangledFunction?.hasPrefix("_Z") == true
                        var c = isItanium ? r.shortFunction.map(CrashEvent.readableFunctionName) ?? fn : fn
                        if stack.dropsRustHashes, let m = r.mangledFunction { c = Demangler.withoutRustHash(c, mangled: m) }
                        if let file = r.file { c += " (\((file as NSString).lastPathComponent)\(r.line.map { ":\($0)" } ?? ""))" }
                        // A standard-library function inlined into the app's code names the issue
                        // only when no app function follows.
                        if isStandardLibrary(fn) { libraryCulprit = libraryCulprit ?? c } else { culprit = c }
                    }
                }
            } else if let fn = frame.clientFunction, !fn.isEmpty {
                if FaultlineOwnFrames.isOwn(function: fn, rawFunction: nil) { continue }
                components.append(frame.sourceModule.map { "\($0):\(fn)" } ?? fn)
                if culprit == nil { culprit = frame.sourceModule.map { "\(fn) (\($0))" } ?? fn }
            } else if let line = frame.sourceLine, let file = frame.sourceModule {
                // Rules 4: an anonymous frame by its file and its line of code.
                components.append("\(file):\(line)")
                if culprit == nil { culprit = file }
            } else {
                let module = frame.buildID?.hex ?? frame.module.map { ($0 as NSString).lastPathComponent } ?? "?"
                let c = "\(module)+0x\(String(frame.offset, radix: 16))"
                components.append(c)
                if culprit == nil {
                    culprit = "\(frame.module.map { ($0 as NSString).lastPathComponent } ?? module)+0x\(String(frame.offset, radix: 16))"
                }
            }
        }
        if culprit == nil { culprit = libraryCulprit }
        if components.isEmpty && stack.messageGroup.hasPrefix("exception:") {
            // Rules 4: an exception without a stack, by its type and its value's pattern.
            let hash = SHA1Hash.hex("v1\nexception-value\n" + stack.exceptionType + "\n" + stack.messageGroup)
            let title = stack.exceptionType.isEmpty ? stack.headline : "\(stack.exceptionType): \(stack.headline)"
            return Fingerprint(hash: hash, title: title, culprit: "unknown location", symbolicated: false)
        }
        if components.isEmpty && !stack.messageGroup.isEmpty {
            // A message: grouped by its template (or pattern), titled by what it said.
            let hash = SHA1Hash.hex("v1\nmessage\n" + stack.messageGroup)
            let title = stack.headline.isEmpty ? "(empty message)" : stack.headline
            return Fingerprint(hash: hash, title: title, culprit: "message", symbolicated: false)
        }
        if components.isEmpty { components = ["no-frames", stack.exceptionType] }
        // Rules 4: the chain's causes (not encoded, so not hashed, under earlier rules).
        let causes = stack.causes.isEmpty ? "" : "\ncaused-by\n" + stack.causes.joined(separator: "\n")
        let hash = SHA1Hash.hex("v1\n" + stack.exceptionType + "\n" + components.joined(separator: "\n") + causes)
        let where_ = culprit ?? "unknown location"
        // "std::out_of_range: cache miss: zz in lookup()"; the message is shown, never hashed.
        let what =
            stack.headline.isEmpty
            ? stack.exceptionType
            : stack.exceptionType.isEmpty ? stack.headline : "\(stack.exceptionType): \(stack.headline)"
        let title = what.isEmpty ? where_ : "\(what) in \(where_)"
        return Fingerprint(hash: hash, title: title, culprit: where_, symbolicated: resolvedAny)
    }
}
