// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "VoiceIO",
    products: [
        .library(name: "VoiceIO", targets: ["VoiceIO"]),
        /// The simulated room and synthetic signals: the command line's embedded device and the tests' (as
        /// NIOEmbedded is to SwiftNIO). Not part of the engine.
        .library(name: "VoiceIOSimulation", targets: ["VoiceIOSimulation"]),
        .library(name: "VoiceCall", targets: ["VoiceCall"]),
        .executable(name: "voicepeer", targets: ["VoicePeer"]),
        .executable(name: "netimpair", targets: ["NetImpair"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
        // `swift package generate-documentation` (scripts/docs) for the DocC catalogs.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        .systemLibrary(name: "CSpeexDSP", pkgConfig: "speexdsp", providers: [.apt(["libspeexdsp-dev"])]),
        .systemLibrary(name: "COpus", pkgConfig: "opus", providers: [.apt(["libopus-dev"])]),
        .systemLibrary(name: "CALSA", pkgConfig: "alsa", providers: [.apt(["libasound2-dev"])]),
        .systemLibrary(name: "CSndFile", pkgConfig: "sndfile", providers: [.apt(["libsndfile1-dev"])]),
        .systemLibrary(name: "CSRTP", pkgConfig: "libsrtp2", providers: [.apt(["libsrtp2-dev"])]),
        .systemLibrary(name: "CPipeWire", pkgConfig: "libpipewire-0.3", providers: [.apt(["libpipewire-0.3-dev"])]),
        .target(name: "CVoiceShims", dependencies: ["COpus"]),
        .target(
            name: "VoiceIO",
            dependencies: ["CSpeexDSP", "CALSA", "CSndFile", "CPipeWire", .product(name: "Logging", package: "swift-log")]
        ),
        .target(name: "VoiceIOSimulation", dependencies: ["VoiceIO"]),
        .target(
            name: "VoiceCall",
            dependencies: ["VoiceIO", "COpus", "CVoiceShims", "CSRTP", .product(name: "Logging", package: "swift-log")]
        ),
        .executableTarget(
            name: "VoicePeer",
            dependencies: [
                "VoiceIO", "VoiceIOSimulation", "VoiceCall",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Fuzz targets over the untrusted-input entry points: run by scripts/fuzz, replayed by FuzzRegressionTests.
        .target(name: "VoiceFuzzing", dependencies: ["VoiceIO", "VoiceCall"], path: "Fuzz/VoiceFuzzing"),
        // Impairment relay, flooder and tone detector for scripts/soak and scripts/flood.
        .executableTarget(
            name: "NetImpair",
            dependencies: [
                "VoiceIO", "VoiceIOSimulation", "VoiceCall",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Tools/NetImpair"
        ),
        .target(name: "CAllocCounter", path: "Tests/CAllocCounter"),
        .target(name: "LogCapture", dependencies: [.product(name: "Logging", package: "swift-log")], path: "Tests/LogCapture"),
        // Runs the loopback scripts (private audio servers) with a clean signal mask for both test targets.
        .target(name: "SpawnSupport", path: "Tests/SpawnSupport"),
        // Writes a WAV until killed; AudioFileTests runs it to check what SIGKILL leaves behind.
        .executableTarget(name: "WriterProbe", dependencies: ["VoiceIO"], path: "Tests/WriterProbe"),
        .testTarget(
            name: "VoiceIOTests",
            dependencies: [
                "VoiceIO", "VoiceIOSimulation", "CAllocCounter", "CSpeexDSP", "VoiceFuzzing", "LogCapture", "SpawnSupport",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "VoiceCallTests",
            dependencies: [
                "VoiceCall", "VoiceIO", "VoiceIOSimulation", "COpus", "CVoiceShims", "CSRTP", "CAllocCounter",
                "LogCapture", "SpawnSupport", .product(name: "Logging", package: "swift-log"),
            ]
        ),
    ]
)
