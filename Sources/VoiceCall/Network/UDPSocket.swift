import CVoiceShims
#if canImport(Glibc)
import Glibc
#endif

/// A bound UDP socket (POSIX) that owns its file descriptor: sends datagrams to an address and receives them
/// with a timeout, reporting where each came from and how many the kernel dropped for want of room
/// (`kernelDropCount`).
///
/// For the network thread, never the audio thread: `send` and `receive` make system calls and `receive`
/// blocks up to its timeout. They do not allocate. One thread may send while another receives.
public final class UDPSocket: @unchecked Sendable {
    /// One datagram received: its length in the caller's buffer and its sender.
    public struct Datagram: Sendable {
        /// Bytes stored in the caller's buffer.
        public var byteCount: Int
        /// True when the datagram was longer than the buffer and its tail was lost.
        public var wasTruncated: Bool
        public var source: SocketAddress
    }

    private let descriptor: Int32
    private var kernelDrops: UInt32 = 0
    /// The address actually bound (with the system's port when 0 was asked for).
    public let localAddress: SocketAddress

    /// The receive buffer a call asks for: 2 MiB, which the kernel doubles for its bookkeeping and caps at
    /// twice `net.core.rmem_max`. A call's own packets fill a few kilobytes a second, but a flood of strangers'
    /// datagrams (25 000 a second in `scripts/flood`) fills the system's default of about 200 kB in 10 ms: a
    /// network thread that a busy machine leaves unscheduled that long loses the call's packets with the
    /// strangers'. The kernel holds the memory only while datagrams wait.
    public static let callReceiveBufferBytes = 2 << 20

    /// Datagrams the kernel dropped on this socket since it was opened, its receive buffer full (SO_RXQ_OVFL), as of
    /// the last datagram received: drops after it show with the next. Whose datagrams they were is unknown. Read it on
    /// the thread that receives.
    public var kernelDropCount: Int { Int(kernelDrops) }

    /// Bytes the kernel lets wait on this socket before it drops datagrams (`SO_RCVBUF`, as the kernel
    /// reports it: twice what was granted).
    public var receiveBufferBytes: Int {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &value, &length) == 0 else { return 0 }
        return Int(value)
    }

    /// Opens a UDP socket on `address`'s family and binds it there. Port 0 picks a free port. A port another
    /// socket holds is `SocketError.addressInUse`.
    ///
    /// - Parameter receiveBufferBytes: the receive buffer to ask for (the kernel caps it at
    ///   `net.core.rmem_max`); nil keeps the system's default.
    public init(bindingTo address: SocketAddress, receiveBufferBytes: Int? = UDPSocket.callReceiveBufferBytes) throws(SocketError) {
        let descriptor = socket(address.family, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw .system(call: "socket", errno: errno) }
        do {
            localAddress = try UDPSocket.configure(descriptor, bindingTo: address,
                                                   receiveBufferBytes: receiveBufferBytes)
        } catch {
            close(descriptor)
            throw error
        }
        self.descriptor = descriptor
    }

    /// Sets `descriptor`'s options, binds it to `address` and returns the address bound. Leaves the descriptor to
    /// the caller, open, whether it succeeds or throws.
    private static func configure(_ descriptor: Int32, bindingTo address: SocketAddress,
                                  receiveBufferBytes: Int?) throws(SocketError) -> SocketAddress {
        try setOption(SO_RXQ_OVFL, to: 1, on: descriptor, call: "setsockopt(SO_RXQ_OVFL)")
        if let receiveBufferBytes {
            try setOption(SO_RCVBUF, to: Int32(clamping: receiveBufferBytes), on: descriptor,
                          call: "setsockopt(SO_RCVBUF)")
        }
        guard address.withSockAddr({ bind(descriptor, $0, $1) }) == 0 else {
            let code = errno
            throw code == EADDRINUSE ? .addressInUse(address) : .system(call: "bind", errno: code)
        }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let local = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> SocketAddress? in
                guard getsockname(descriptor, pointer, &length) == 0 else { return nil }
                return SocketAddress(pointer, length: length)
            }
        }
        guard let local else { throw .system(call: "getsockname", errno: errno) }
        return local
    }

    /// Sets the socket-level option `option` of `descriptor` to `value`; a failure is thrown as `call`'s.
    private static func setOption(_ option: Int32, to value: Int32, on descriptor: Int32,
                                  call: StaticString) throws(SocketError) {
        var value = value
        guard setsockopt(descriptor, SOL_SOCKET, option, &value, socklen_t(MemoryLayout<Int32>.size)) != 0 else { return }
        throw .system(call: call, errno: errno)
    }

    /// Resolves "HOST:PORT" and binds there, with `receiveBufferBytes` as in `init(bindingTo:receiveBufferBytes:)`.
    public convenience init(binding hostAndPort: String,
                            receiveBufferBytes: Int? = UDPSocket.callReceiveBufferBytes) throws(SocketError) {
        try self.init(bindingTo: SocketAddress.resolve(hostAndPort), receiveBufferBytes: receiveBufferBytes)
    }

    deinit { close(descriptor) }

    /// Sends `bytes` as one datagram to `destination`.
    public func send(_ bytes: UnsafeRawBufferPointer, to destination: SocketAddress) throws(SocketError) {
        while true {
            let sent = destination.withSockAddr { sendto(descriptor, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL), $0, $1) }
            if sent >= 0 { return }
            guard errno == EINTR else { throw .system(call: "sendto", errno: errno) }
        }
    }

    /// Waits up to `timeoutMilliseconds` (0: just look; negative: forever) for a datagram and stores it in
    /// `buffer`; returns nil when none came in time.
    public func receive(into buffer: UnsafeMutableRawBufferPointer, timeoutMilliseconds: Int) throws(SocketError) -> Datagram? {
        try receive(into: buffer, timeoutNanoseconds: timeoutMilliseconds < 0 ? -1 : Int64(timeoutMilliseconds) * 1_000_000)
    }

    /// Waits up to `timeoutNanoseconds` (0: just look; negative: forever) for a datagram and stores it in
    /// `buffer`; returns nil when none came in time. The wait has the kernel's timer precision (`ppoll`), not
    /// whole milliseconds.
    public func receive(into buffer: UnsafeMutableRawBufferPointer, timeoutNanoseconds: Int64) throws(SocketError) -> Datagram? {
        while true {
            let ready = voice_wait_readable(descriptor, timeoutNanoseconds)
            if ready > 0 { break }
            if ready == 0 { return nil }
            guard errno == EINTR else { throw .system(call: "ppoll", errno: errno) }
        }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let received = voice_receive_datagram(descriptor, buffer.baseAddress, UInt(buffer.count), &storage, &length,
                                              &kernelDrops)
        guard received >= 0 else {
            if errno == EAGAIN || errno == EINTR { return nil }
            throw .system(call: "recvmsg", errno: errno)
        }
        let source = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { SocketAddress($0, length: length) }
        }
        guard let source else { return nil }
        return Datagram(byteCount: min(received, buffer.count), wasTruncated: received > buffer.count, source: source)
    }
}
