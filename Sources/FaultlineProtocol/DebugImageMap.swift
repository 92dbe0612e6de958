// Which debug image holds an address (the image_size 0 rule).
import FoundationEssentials

/// An event's images, for finding the one an address lies in (O(log n), so hostile events with
/// thousands of images and frames stay cheap).
///
/// The `image_size` 0 rule, decided once: a size of 0 means the client did not know the size, so
/// the image covers every address from its base up to the next image's base (the last image:
/// every address above its base). An image with a size covers `base ..< base + size`.
public struct DebugImageMap: Sendable {
    /// Sorted by base; for equal bases the first listed wins (the others are left out).
    public let images: [DebugImage]
    /// The event's architecture, for frames whose image does not name one (or that lie in no
    /// image): `contexts.device.arch`, else the first image's that names a known one.
    public let architecture: CPUArchitecture

    /// - Parameter architecture: the event's, when it says; else the images' (CPUArchitecture.ofEventsWithoutArch without either).
    public init(_ images: [DebugImage], architecture: CPUArchitecture? = nil) {
        self.architecture = architecture ?? images.lazy.compactMap(\.architecture).first ?? .ofEventsWithoutArch
        // Sorted by (base, position in the list), then one per base: the first listed. No hash
        // table: every ingested event builds this map once.
        let order = images.indices.sorted { (images[$0].base, $0) < (images[$1].base, $1) }
        var sorted: [DebugImage] = []
        sorted.reserveCapacity(images.count)
        for i in order where sorted.last?.base != images[i].base { sorted.append(images[i]) }
        self.images = sorted
    }

    /// The images of an event's `debug_meta.images`.
    public init(event: JSONValue) {
        self.init(
            (event["debug_meta"]?["images"]?.arrayValue ?? []).compactMap(DebugImage.init(json:)),
            architecture: event["contexts"]?["device"]?["arch"]?.stringValue.flatMap(CPUArchitecture.init(name:)))
    }

    /// The image a frame names by its own `image_addr` if one starts there; else the image the
    /// address lies in.
    public func image(for address: UInt64, imageAddress: UInt64?) -> DebugImage? {
        if let imageAddress, let named = image(startingAt: imageAddress) { return named }
        return image(containing: address)
    }

    /// The image whose base is `base`, if any.
    public func image(startingAt base: UInt64) -> DebugImage? {
        let i = countWithBase(atMost: base)
        return i > 0 && images[i - 1].base.value == base ? images[i - 1] : nil
    }

    /// How many images have a base ≤ `address`.
    private func countWithBase(atMost address: UInt64) -> Int {
        var lo = 0, hi = images.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if images[mid].base.value <= address { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    /// The image with the greatest base ≤ `address`, if `address` lies inside it.
    public func image(containing address: UInt64) -> DebugImage? {
        let lo = countWithBase(atMost: address)
        guard lo > 0 else { return nil }
        let i = images[lo - 1]
        if i.size > 0 { return address - i.base.value < i.size ? i : nil }
        return lo < images.count ? (address < images[lo].base.value ? i : nil) : i
    }
}
