// swift-tools-version: 6.0
import PackageDescription

/// DSP code is compiled optimised even in debug builds: unoptimised Swift is too slow for per-sample loops,
/// and the tests run the real signal chain over seconds of audio.
let optimised: [SwiftSetting] = [.unsafeFlags(["-O"])]

let package = Package(
    name: "VoiceIO",
    products: [
        .library(name: "VoiceIO", targets: ["VoiceIO"]),
        .library(name: "VoiceCall", targets: ["VoiceCall"]),
        .executable(name: "voicepeer", targets: ["VoicePeer"]),
        .executable(name: "netimpair", targets: ["NetImpair"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        .systemLibrary(name: "CSpeexDSP", pkgConfig: "speexdsp", providers: [.apt(["libspeexdsp-dev"])]),
        .systemLibrary(name: "COpus", pkgConfig: "opus", providers: [.apt(["libopus-dev"])]),
        .systemLibrary(name: "CALSA", pkgConfig: "alsa", providers: [.apt(["libasound2-dev"])]),
        .systemLibrary(name: "CSndFile", pkgConfig: "sndfile", providers: [.apt(["libsndfile1-dev"])]),
        .systemLibrary(name: "CPipeWire", pkgConfig: "libpipewire-0.3", providers: [.apt(["libpipewire-0.3-dev"])]),
        .target(name: "CVoiceShims", dependencies: ["COpus"]),
        .target(
            name: "VoiceIO",
            dependencies: ["CSpeexDSP", "CALSA", "CSndFile", "CPipeWire"],
            swiftSettings: optimised
        ),
        .target(
            name: "VoiceCall",
            dependencies: ["VoiceIO", "COpus", "CVoiceShims"],
            swiftSettings: optimised
        ),
        .executableTarget(
            name: "VoicePeer",
            dependencies: ["VoiceIO", "VoiceCall", .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
        // Fuzz targets over the untrusted-input entry points: run by scripts/fuzz, replayed by FuzzRegressionTests.
        .target(name: "VoiceFuzzing", dependencies: ["VoiceIO", "VoiceCall"], path: "Fuzz/VoiceFuzzing"),
        // Impairment relay, flooder and tone detector for scripts/soak and scripts/flood.
        .executableTarget(
            name: "NetImpair",
            dependencies: ["VoiceIO", "VoiceCall", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Tools/NetImpair",
            swiftSettings: optimised
        ),
        .target(name: "CAllocCounter", path: "Tests/CAllocCounter"),
        // Writes a WAV until killed; AudioFileTests runs it to check what SIGKILL leaves behind.
        .executableTarget(name: "WriterProbe", dependencies: ["VoiceIO"], path: "Tests/WriterProbe"),
        .testTarget(name: "VoiceIOTests", dependencies: ["VoiceIO", "CAllocCounter", "VoiceFuzzing"]),
        .testTarget(name: "VoiceCallTests", dependencies: ["VoiceCall", "VoiceIO", "COpus", "CVoiceShims", "CAllocCounter"]),
    ]
)
