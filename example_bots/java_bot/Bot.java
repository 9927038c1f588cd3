import java.io.EOFException;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * A random Oh-Seven / Oh Hell bot in Java, written from PROTOCOL.md alone, with nothing but the
 * JDK (17): {@link Zmtp} is the ZeroMQ DEALER socket, {@link MsgPack} the message format.
 *
 * <p>It connects to $OHSEVEN_ENDPOINT, says hello with $OHSEVEN_SECRET, and answers every
 * request with a random legal move (seeded from $OHSEVEN_SEED, so a match replays the same
 * games): a random element of "legal" for bids and plays, the first "count" cards of "legal"
 * (the hand) for passes. Events are ignored (a real bot would fold them into its view of the
 * game). It exits on "shutdown", on an "error" from the referee, or when the connection ends.
 *
 * <p>Build: make (javac + jar: java_bot.jar). Run: see docs/BOTS.md for the java options that
 * fit the sandbox's memory limit.
 */
public final class Bot {
    private Bot() {}

    public static void main(String[] args) throws IOException {
        String endpoint = System.getenv("OHSEVEN_ENDPOINT");
        String secret = System.getenv("OHSEVEN_SECRET");
        if (endpoint == null || secret == null) {
            System.err.println("java_bot: OHSEVEN_ENDPOINT and OHSEVEN_SECRET must be set "
                    + "(the referee starts this bot)");
            System.exit(2);
        }
        // OHSEVEN_SEED is a decimal from 0 to 2^32 - 1: it needs a long, not an int
        String seed = System.getenv("OHSEVEN_SEED");
        Random random = seed != null ? new Random(Long.parseLong(seed)) : new Random();

        try (Zmtp socket = Zmtp.connect(endpoint)) {
            Map<String, Object> hello = new LinkedHashMap<>();
            hello.put("type", "hello");
            hello.put("protocol", 1L);
            hello.put("secret", secret);
            hello.put("bot", "java_bot 1.0");
            socket.send(MsgPack.encode(hello));
            for (;;) {
                Map<String, Object> message;
                try {
                    message = asMap(MsgPack.decode(socket.receive()));
                } catch (EOFException e) {
                    return; // the referee closed the connection: the match is over
                } catch (MsgPack.FormatException e) {
                    System.err.println("java_bot: undecodable message ignored: " + e.getMessage());
                    continue;
                }
                Object type = message.get("type");
                if ("request".equals(type)) {
                    Map<String, Object> move = answer(message, random);
                    if (move != null) socket.send(MsgPack.encode(move));
                } else if ("shutdown".equals(type)) {
                    return;
                } else if ("error".equals(type)) {
                    System.err.println("java_bot: refused: " + message.get("reason"));
                    System.exit(1);
                }
                // "welcome" and "events" need nothing from a random bot
            }
        }
    }

    /** {"type": "move", "id": id, "move": ...} for a request, or null if it makes no sense. */
    static Map<String, Object> answer(Map<String, Object> request, Random random) {
        Object id = request.get("id");
        Object legal = request.get("legal");
        if (!(id instanceof Long) || !(legal instanceof List) || ((List<?>) legal).isEmpty()) {
            System.err.println("java_bot: a request without id or legal moves; ignored");
            return null;
        }
        List<?> moves = (List<?>) legal;
        Object move;
        if ("pass".equals(request.get("kind"))) {
            Object count = request.get("count");
            int n = count instanceof Long ? (int) Math.min((Long) count, moves.size()) : 0;
            move = moves.subList(0, Math.max(n, 0));
        } else {
            move = moves.get(random.nextInt(moves.size())); // a card, or an Oh Hell bid (Long)
        }
        Map<String, Object> reply = new LinkedHashMap<>();
        reply.put("type", "move");
        reply.put("id", id);
        reply.put("move", move);
        return reply;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> asMap(Object value) throws MsgPack.FormatException {
        if (!(value instanceof Map)) {
            throw new MsgPack.FormatException("a message that is not a map");
        }
        return (Map<String, Object>) value;
    }
}
