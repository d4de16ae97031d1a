// swift-tools-version: 6.1
import PackageDescription

/// The library's package, one folder up: a path dependency is known by its folder's name, whatever the checkout
/// is called.
let library = String(Context.packageDirectory.split(separator: "/").dropLast().last ?? "VoiceIO")

/// ordo-one/benchmark suites over VoiceIO's hot kernels, run by `scripts/bench` (`swift package benchmark`).
/// A separate package so that the library's own manifest keeps its tools version and dependencies.
let package = Package(
    name: "VoiceIOBenchmarks",
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", exact: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "VoiceKernels",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "VoiceIO", package: library),
                .product(name: "VoiceCall", package: library),
                .product(name: "VoiceIOSimulation", package: library),
            ],
            path: "Benchmarks/VoiceKernels",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
)
