import java.io.BufferedInputStream;
import java.io.Closeable;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * A ZeroMQ DEALER socket connected to an {@code ipc://} endpoint, written from the ZMTP 3.0
 * specification (rfc.zeromq.org/spec/23) with the NULL security mechanism: enough to talk to
 * the referee's ROUTER socket with nothing but the JDK (Java 16+: Unix domain sockets).
 *
 * <p>On the wire: each side sends a 64-byte greeting, then a READY command naming its socket
 * type; after that every message is a frame of one flags byte (bit 0: more frames follow,
 * bit 1: 8-byte size, bit 2: a command), its size (1 or 8 bytes, big-endian) and its body.
 */
final class Zmtp implements Closeable {
    private static final int MORE = 1;
    private static final int LONG = 2;
    private static final int COMMAND = 4;

    private final SocketChannel channel;
    private final DataInputStream in;
    private final OutputStream out;

    private Zmtp(SocketChannel channel) {
        this.channel = channel;
        this.in = new DataInputStream(new BufferedInputStream(Channels.newInputStream(channel)));
        this.out = Channels.newOutputStream(channel);
    }

    /** Connect to {@code ipc://PATH} and complete the handshake. */
    static Zmtp connect(String endpoint) throws IOException {
        if (!endpoint.startsWith("ipc://")) {
            throw new IOException("not an ipc:// endpoint: " + endpoint);
        }
        SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX);
        channel.connect(UnixDomainSocketAddress.of(endpoint.substring("ipc://".length())));
        Zmtp socket = new Zmtp(channel);
        socket.handshake();
        return socket;
    }

    private void handshake() throws IOException {
        byte[] greeting = new byte[64];
        greeting[0] = (byte) 0xff; // signature: 0xff, 8 bytes of padding, 0x7f
        greeting[9] = 0x7f;
        greeting[10] = 3; // version 3.0
        greeting[11] = 0;
        byte[] mechanism = "NULL".getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(mechanism, 0, greeting, 12, mechanism.length); // 20 bytes, zero-padded
        // greeting[32] = 0: as-server false; the rest is filler
        out.write(greeting);
        out.write(readyCommand("DEALER"));
        out.flush();

        byte[] peer = new byte[64];
        in.readFully(peer);
        if ((peer[0] & 0xff) != 0xff || peer[9] != 0x7f || peer[10] < 3) {
            throw new IOException("the peer does not speak ZMTP 3");
        }
        String peerMechanism = new String(peer, 12, 20, StandardCharsets.US_ASCII).trim();
        if (!peerMechanism.replace("\0", "").equals("NULL")) {
            throw new IOException("the peer wants the security mechanism " + peerMechanism);
        }
        byte[] command = readFrame(true);
        if (!commandName(command).equals("READY")) {
            throw new IOException("expected READY, got " + commandName(command));
        }
    }

    /** A READY command frame with one property, Socket-Type. */
    private static byte[] readyCommand(String socketType) {
        byte[] name = "READY".getBytes(StandardCharsets.US_ASCII);
        byte[] key = "Socket-Type".getBytes(StandardCharsets.US_ASCII);
        byte[] value = socketType.getBytes(StandardCharsets.US_ASCII);
        int size = 1 + name.length + 1 + key.length + 4 + value.length;
        byte[] frame = new byte[2 + size];
        int i = 0;
        frame[i++] = COMMAND;
        frame[i++] = (byte) size;
        frame[i++] = (byte) name.length;
        System.arraycopy(name, 0, frame, i, name.length);
        i += name.length;
        frame[i++] = (byte) key.length;
        System.arraycopy(key, 0, frame, i, key.length);
        i += key.length;
        i += 3; // the value's size: 4 bytes, big-endian (it is short)
        frame[i++] = (byte) value.length;
        System.arraycopy(value, 0, frame, i, value.length);
        return frame;
    }

    private static String commandName(byte[] body) {
        int size = body.length > 0 ? body[0] & 0xff : 0;
        return new String(body, 1, Math.min(size, body.length - 1), StandardCharsets.US_ASCII);
    }

    /** Send one single-frame message. */
    void send(byte[] message) throws IOException {
        if (message.length <= 255) {
            out.write(new byte[] {0, (byte) message.length});
        } else {
            byte[] header = new byte[9];
            header[0] = LONG;
            for (int i = 0; i < 8; i++) {
                header[1 + i] = (byte) ((long) message.length >>> (56 - 8 * i));
            }
            out.write(header);
        }
        out.write(message);
        out.flush();
    }

    /**
     * The next message (its frames joined: the referee sends one frame per message). Commands
     * are skipped; an ERROR command or the end of the connection is an exception.
     */
    byte[] receive() throws IOException {
        for (;;) {
            byte[] frame = readFrame(false);
            if (frame != null) return frame;
        }
    }

    /** One frame: its body, or null for a command that was skipped (expectCommand false). */
    private byte[] readFrame(boolean expectCommand) throws IOException {
        int flags = in.readUnsignedByte();
        long size = (flags & LONG) != 0 ? in.readLong() : in.readUnsignedByte();
        if (size < 0 || size > Integer.MAX_VALUE - 8) throw new IOException("frame too large");
        byte[] body = new byte[(int) size];
        in.readFully(body);
        boolean command = (flags & COMMAND) != 0;
        if (command && commandName(body).equals("ERROR")) {
            throw new IOException("the peer closed the connection with an ERROR command");
        }
        if (command != expectCommand) {
            if (command) return null; // e.g. PING (heartbeats are off by default): ignored
            throw new IOException("expected a command, got a message");
        }
        if ((flags & MORE) != 0) { // several frames: join them (never sent by the referee)
            byte[] rest = readFrame(expectCommand);
            if (rest == null) throw new IOException("a command inside a multi-frame message");
            byte[] joined = Arrays.copyOf(body, body.length + rest.length);
            System.arraycopy(rest, 0, joined, body.length, rest.length);
            return joined;
        }
        return body;
    }

    @Override
    public void close() throws IOException {
        channel.close();
    }
}
