// swift-tools-version:5.9
// The smallest SwiftPM package a user could ship: ReleaseRecipeTests copy it to a temporary
// directory and run `swift build -c release` there, then upload, split and crash what it built.
import PackageDescription

let package = Package(name: "tiny", targets: [.executableTarget(name: "tinyapp")])
