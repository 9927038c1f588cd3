import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The part of msgpack the protocol needs, in both directions.
 *
 * <p>Decoding gives plain Java values: {@code Map<String, Object>} for a map, {@code List<Object>}
 * for an array, {@code Long} for every integer (the protocol's integers fit in 64 bits; read
 * them as long, never int), {@code Double}, {@code Boolean}, {@code String}, {@code null}, and
 * {@code byte[]} for bin. Encoding takes the same values (a {@code Map}'s keys are strings).
 */
final class MsgPack {
    private MsgPack() {}

    /** Thrown for bytes that are not one complete msgpack value. */
    static final class FormatException extends IOException {
        private static final long serialVersionUID = 1L;

        FormatException(String message) {
            super(message);
        }
    }

    // ---- decoding ----

    static Object decode(byte[] data) throws FormatException {
        ByteBuffer in = ByteBuffer.wrap(data); // big-endian, as msgpack is
        try {
            Object value = read(in, 0);
            if (in.hasRemaining()) throw new FormatException("bytes after the value");
            return value;
        } catch (java.nio.BufferUnderflowException e) {
            throw new FormatException("truncated message");
        }
    }

    private static Object read(ByteBuffer in, int depth) throws FormatException {
        if (depth > 16) throw new FormatException("nested too deeply");
        int b = in.get() & 0xff;
        if (b <= 0x7f) return (long) b; // positive fixint
        if (b >= 0xe0) return (long) (byte) b; // negative fixint
        if ((b & 0xf0) == 0x80) return readMap(in, b & 0x0f, depth);
        if ((b & 0xf0) == 0x90) return readArray(in, b & 0x0f, depth);
        if ((b & 0xe0) == 0xa0) return readString(in, b & 0x1f);
        switch (b) {
            case 0xc0: return null;
            case 0xc2: return Boolean.FALSE;
            case 0xc3: return Boolean.TRUE;
            case 0xc4: return readBytes(in, in.get() & 0xff);
            case 0xc5: return readBytes(in, in.getShort() & 0xffff);
            case 0xc6: return readBytes(in, in.getInt());
            case 0xca: return (double) in.getFloat();
            case 0xcb: return in.getDouble();
            case 0xcc: return (long) (in.get() & 0xff);
            case 0xcd: return (long) (in.getShort() & 0xffff);
            case 0xce: return in.getInt() & 0xffffffffL;
            case 0xcf: return in.getLong(); // above 2^63 wraps: the protocol never sends one
            case 0xd0: return (long) in.get();
            case 0xd1: return (long) in.getShort();
            case 0xd2: return (long) in.getInt();
            case 0xd3: return in.getLong();
            case 0xd9: return readString(in, in.get() & 0xff);
            case 0xda: return readString(in, in.getShort() & 0xffff);
            case 0xdb: return readString(in, in.getInt());
            case 0xdc: return readArray(in, in.getShort() & 0xffff, depth);
            case 0xdd: return readArray(in, in.getInt(), depth);
            case 0xde: return readMap(in, in.getShort() & 0xffff, depth);
            case 0xdf: return readMap(in, in.getInt(), depth);
            default:
                throw new FormatException("unsupported msgpack type 0x" + Integer.toHexString(b));
        }
    }

    private static byte[] readBytes(ByteBuffer in, int size) throws FormatException {
        if (size < 0 || size > in.remaining()) throw new FormatException("truncated message");
        byte[] bytes = new byte[size];
        in.get(bytes);
        return bytes;
    }

    private static String readString(ByteBuffer in, int size) throws FormatException {
        return new String(readBytes(in, size), StandardCharsets.UTF_8);
    }

    private static List<Object> readArray(ByteBuffer in, int size, int depth)
            throws FormatException {
        if (size < 0 || size > in.remaining()) throw new FormatException("truncated message");
        List<Object> list = new ArrayList<>(size);
        for (int i = 0; i < size; i++) list.add(read(in, depth + 1));
        return list;
    }

    private static Map<String, Object> readMap(ByteBuffer in, int size, int depth)
            throws FormatException {
        if (size < 0 || size > in.remaining()) throw new FormatException("truncated message");
        Map<String, Object> map = new LinkedHashMap<>();
        for (int i = 0; i < size; i++) {
            Object key = read(in, depth + 1);
            if (!(key instanceof String)) {
                throw new FormatException("a map key that is not a string");
            }
            map.put((String) key, read(in, depth + 1));
        }
        return map;
    }

    // ---- encoding ----

    static byte[] encode(Object value) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        write(out, value);
        return out.toByteArray();
    }

    private static void write(ByteArrayOutputStream out, Object value) {
        if (value == null) {
            out.write(0xc0);
        } else if (value instanceof Boolean) {
            out.write((Boolean) value ? 0xc3 : 0xc2);
        } else if (value instanceof Long || value instanceof Integer) {
            writeLong(out, ((Number) value).longValue());
        } else if (value instanceof String) {
            byte[] bytes = ((String) value).getBytes(StandardCharsets.UTF_8);
            writeHeader(out, bytes.length, 0xa0, 31, 0xd9, 0xda, 0xdb);
            out.write(bytes, 0, bytes.length);
        } else if (value instanceof List) {
            List<?> list = (List<?>) value;
            writeHeader(out, list.size(), 0x90, 15, -1, 0xdc, 0xdd);
            for (Object item : list) write(out, item);
        } else if (value instanceof Map) {
            Map<?, ?> map = (Map<?, ?>) value;
            writeHeader(out, map.size(), 0x80, 15, -1, 0xde, 0xdf);
            for (Map.Entry<?, ?> entry : map.entrySet()) {
                write(out, (String) entry.getKey());
                write(out, entry.getValue());
            }
        } else {
            throw new IllegalArgumentException("cannot encode a " + value.getClass().getName());
        }
    }

    /** A str/array/map header: the fix form up to fixMax, else the 8-, 16- or 32-bit form. */
    private static void writeHeader(ByteArrayOutputStream out, int size, int fix, int fixMax,
            int code8, int code16, int code32) {
        if (size <= fixMax) {
            out.write(fix | size);
        } else if (code8 >= 0 && size <= 0xff) {
            out.write(code8);
            out.write(size);
        } else if (size <= 0xffff) {
            out.write(code16);
            writeBigEndian(out, size, 2);
        } else {
            out.write(code32);
            writeBigEndian(out, size, 4);
        }
    }

    private static void writeLong(ByteArrayOutputStream out, long n) {
        if (n >= 0 && n <= 0x7f) {
            out.write((int) n);
        } else if (n >= -32 && n < 0) {
            out.write((int) n & 0xff);
        } else {
            out.write(0xd3); // int 64: always correct, a few bytes longer than needed
            writeBigEndian(out, n, 8);
        }
    }

    private static void writeBigEndian(ByteArrayOutputStream out, long n, int bytes) {
        for (int i = bytes - 1; i >= 0; i--) out.write((int) (n >>> (8 * i)) & 0xff);
    }
}
